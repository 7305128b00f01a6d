/** Reading a Prometheus text scrape in the tests. */

/** The value of one sample line (`name{labels} value`), or 0 when absent. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const open = line.indexOf('{');
    const labelText = open === name.length ? line.slice(open + 1, line.lastIndexOf('}')) : '';
    const found = Object.fromEntries([...labelText.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v) && Object.keys(found).length === Object.keys(labels).length)
      return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}
