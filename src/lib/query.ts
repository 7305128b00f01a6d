/** The read side of a query string that routes need. */
export interface QueryParams {
  /** The first value given for `name`, decoded, or null when the name is absent (as URLSearchParams#get). */
  get(name: string): string | null;
}

/**
 * Read a query string (without the `?`) with URLSearchParams' semantics: `&`-separated pairs,
 * `+` as space, the first value of a repeated name wins. Nothing is decoded up front: `get`
 * scans the pairs and decodes only the value asked for. Well-formed percent-encoding is decoded
 * natively, which is several times faster than URLSearchParams on long encoded values such as
 * User-Agents; a malformed component falls back to URLSearchParams' lenient decoding.
 */
export function parseQuery(search: string): QueryParams {
  // URLSearchParams drops one leading `?`, so `/x??a=1` reads `a` there too.
  const text = search.startsWith('?') ? search.slice(1) : search;
  return { get: (name) => firstValue(text, name) };
}

function firstValue(text: string, name: string): string | null {
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf('&', start);
    if (end === -1) end = text.length;
    if (end > start) {
      const eq = text.indexOf('=', start);
      const nameEnd = eq === -1 || eq > end ? end : eq;
      if (decodeComponent(text.slice(start, nameEnd)) === name) {
        return nameEnd === end ? '' : decodeComponent(text.slice(nameEnd + 1, end));
      }
    }
    start = end + 1;
  }
  return null;
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
