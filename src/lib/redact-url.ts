/**
 * URLs in messages without their credentials. A URL may carry a password (`redis://:PASS@host`,
 * `https://user:TOKEN@mirror`), and a message that quotes it (a refusal, a fetch error) can end
 * up in a terminal's scrollback, a CI log or a bug report. This works on any text, including
 * text that does not parse as a URL (a typo is exactly when a URL gets quoted back): whatever
 * sits between `//` and the last `@` before the next `/`, `?`, `#` or line end is userinfo, and
 * after `//user:`, a password holding one of those up to the last `@` before white space.
 * Quotes and spaces do not end it: a password may hold them (unencoded, in a URL that then does
 * not parse). The price: an `@` later on the same line, with no `/` between (an e-mail address
 * after a URL without a path), makes the text before it read as userinfo and hidden too.
 */

/** Userinfo: after `//`, up to the last `@` before `/`, `?`, `#` or a line end (greedy, so a password holding `@` is covered whole). */
const USERINFO = /\/\/([^/?#\r\n]*)@/g;
/**
 * A password holding an unencoded `/`, `?` or `#` (`redis://admin:hun/ter2@host`), where USERINFO
 * would stop early: after `//user:`, a delimiter before any `@`, then up to the last `@` before
 * white space. The price: `http://host:8080/a@b` (a port, then an `@` in the path) is hidden
 * from the port on; hiding too much is the safe side.
 */
const USERINFO_WITH_DELIMITER = /\/\/([^\s/?#@:]*):(?=[^\s@]*[/?#])[^\s]*@/g;
/** The placeholders hints write where a user name and password go. */
const PLACEHOLDER = /^(?:USER)?:PASSWORD$/;

/**
 * `text` with the userinfo of every URL in it replaced: `user:password@` becomes `user:***@`,
 * a lone `token@` (no colon: a token as user name) becomes `***@`. Text without `//...@` is
 * returned as it is.
 */
export function redactUserinfo(text: string): string {
  const delimited = text.replace(USERINFO_WITH_DELIMITER, (_match, user: string) => `//${user}:***@`);
  return delimited.replace(USERINFO, (match, info: string) => {
    // A placeholder in a hint (`redis://:PASSWORD@host:port`) is no secret.
    if (PLACEHOLDER.test(info)) return match;
    const colon = info.indexOf(':');
    return colon === -1 ? '//***@' : `//${info.slice(0, colon)}:***@`;
  });
}
