/**
 * URLs in messages without their credentials. A URL may carry a password (`redis://:PASS@host`,
 * `https://user:TOKEN@mirror`), and a message that quotes it (a refusal, a fetch error) can end
 * up in a terminal's scrollback, a CI log or a bug report. This works on any text, including
 * text that does not parse as a URL (a typo is exactly when a URL gets quoted back): whatever
 * sits between `//` and the last `@` before the next whitespace or quote is userinfo.
 */

/** Userinfo: after `//`, up to the last `@` before whitespace, a quote or the end (greedy, so a password holding `@` is covered whole). */
const USERINFO = /\/\/([^\s"'`]*)@/g;
/** The placeholders hints write where a user name and password go. */
const PLACEHOLDER = /^(?:USER)?:PASSWORD$/;

/**
 * `text` with the userinfo of every URL in it replaced: `user:password@` becomes `user:***@`,
 * a lone `token@` (no colon: a token as user name) becomes `***@`. Text without `//...@` is
 * returned as it is.
 */
export function redactUserinfo(text: string): string {
  return text.replace(USERINFO, (match, info: string) => {
    // A placeholder in a hint (`redis://:PASSWORD@host:port`) is no secret.
    if (PLACEHOLDER.test(info)) return match;
    const colon = info.indexOf(':');
    return colon === -1 ? '//***@' : `//${info.slice(0, colon)}:***@`;
  });
}
