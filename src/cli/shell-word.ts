/** A path or value as one POSIX shell word, for a command a message tells the operator to run: quoted only when it holds something the shell would read. */
export function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}
