/** The read side of a query string that routes need. */
export interface QueryParams {
  /** The first value given for `name`, decoded, or null when the name is absent (as URLSearchParams#get). */
  get(name: string): string | null;
}

/**
 * Parse a query string (without the `?`) with URLSearchParams' semantics: `&`-separated pairs,
 * `+` as space, the first value of a repeated name wins. Well-formed percent-encoding is
 * decoded natively, which is several times faster than URLSearchParams on long encoded values
 * such as User-Agents; a malformed pair falls back to URLSearchParams' lenient decoding.
 */
export function parseQuery(search: string): QueryParams {
  const values = new Map<string, string>();
  // URLSearchParams drops one leading `?`, so `/x??a=1` reads `a` there too.
  const pairs = search.startsWith('?') ? search.slice(1) : search;
  if (pairs.length > 0) {
    for (const pair of pairs.split('&')) {
      if (pair.length === 0) continue;
      const eq = pair.indexOf('=');
      const name = decodeComponent(eq === -1 ? pair : pair.slice(0, eq));
      if (!values.has(name)) values.set(name, eq === -1 ? '' : decodeComponent(pair.slice(eq + 1)));
    }
  }
  return { get: (name) => values.get(name) ?? null };
}

function decodeComponent(raw: string): string {
  const spaced = raw.includes('+') ? raw.replaceAll('+', ' ') : raw;
  if (!spaced.includes('%')) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    // Invalid escapes or UTF-8: URLSearchParams keeps bad escapes as text and replaces bad bytes.
    return new URLSearchParams(`v=${raw}`).get('v') ?? '';
  }
}
