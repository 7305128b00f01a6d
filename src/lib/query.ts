/** The read side of a query string that routes need. */
export interface QueryParams {
  /**
   * The first non-empty value given for `name`, decoded; '' when it is given only empty
   * (`?provider=`); null when it is absent. So `?ip=&ip=1.1.1.1` reads `1.1.1.1`.
   */
  get(name: string): string | null;
  /**
   * The same over two names of one parameter (`ua` and `user_agent`): the first non-empty value
   * under either, in the order the query gives them.
   */
  getEither(name: string, otherName: string): string | null;
  /** Every parameter's name, decoded, in query order (repeats kept). */
  names(): string[];
}

/**
 * Read a query string (without the `?`) with URLSearchParams' semantics for its text: `&`-separated
 * pairs, `+` as space; of a repeated name, the first non-empty value wins (docs/http-api.md), so
 * an empty first copy cannot hide a real second one. Nothing is decoded up front: the first read
 * finds the pairs and decodes their names, and only the values asked for are decoded. Well-formed percent-encoding is decoded
 * natively, which is several times faster than URLSearchParams on long encoded values such as
 * User-Agents; a malformed component falls back to URLSearchParams' lenient decoding.
 */
export function parseQuery(search: string): QueryParams {
  // URLSearchParams drops one leading `?`, so `/x??a=1` reads `a` there too.
  const text = search.startsWith('?') ? search.slice(1) : search;
  // The pairs are found and their names decoded once, on the first read: a route reading several
  // parameters (captcha's challenge reads four) scans the query once, not once per name.
  let pairs: QueryPairs | undefined;
  return {
    get: (name) => firstValue((pairs ??= pairsOf(text)), text, name, name),
    getEither: (name, otherName) => firstValue((pairs ??= pairsOf(text)), text, name, otherName),
    names: () => namesOf((pairs ??= pairsOf(text))),
  };
}

/**
 * Each `name=value` pair as three entries, flat (one array however many pairs): its decoded
 * name, where its value starts in the text (-1 when it has no `=`), and where the pair ends.
 */
type QueryPairs = (string | number)[];

function pairsOf(text: string): QueryPairs {
  const pairs: QueryPairs = [];
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf('&', start);
    if (end === -1) end = text.length;
    if (end > start) {
      const eq = text.indexOf('=', start);
      const nameEnd = eq === -1 || eq > end ? end : eq;
      pairs.push(decodeComponent(text.slice(start, nameEnd)), nameEnd === end ? -1 : nameEnd + 1, end);
    }
    start = end + 1;
  }
  return pairs;
}

function namesOf(pairs: QueryPairs): string[] {
  const names: string[] = [];
  for (let i = 0; i < pairs.length; i += 3) names.push(pairs[i] as string);
  return names;
}

function firstValue(pairs: QueryPairs, text: string, name: string, otherName: string): string | null {
  let found: string | null = null;
  for (let i = 0; i < pairs.length; i += 3) {
    if (pairs[i] !== name && pairs[i] !== otherName) continue;
    const valueStart = pairs[i + 1] as number;
    found = valueStart === -1 ? '' : decodeComponent(text.slice(valueStart, pairs[i + 2] as number));
    if (found !== '') return found;
  }
  return found;
}

function decodeComponent(raw: string): string {
  return decodeFormComponent(raw, false) as string;
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * One name or value of a query string or an HTML form, as URLSearchParams reads it: `+` a space,
 * percent-escapes decoded as UTF-8 bytes, a malformed escape (`%zz`) kept as text. Where the
 * bytes are not UTF-8 (`%E9`, a Latin-1 page's é), URLSearchParams puts U+FFFD; `strict` gives
 * null there instead, so a caller can refuse text nobody sent.
 */
export function decodeFormComponent(raw: string, strict: boolean): string | null {
  const spaced = raw.includes('+') ? raw.replaceAll('+', ' ') : raw;
  if (!spaced.includes('%')) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    // A malformed escape or bytes that are not UTF-8: decoded byte by byte below.
  }
  if (!strict) return new URLSearchParams(`v=${raw}`).get('v') ?? '';
  const source = Buffer.from(spaced);
  const bytes = Buffer.allocUnsafe(source.length);
  let length = 0;
  for (let i = 0; i < source.length; i++) {
    const hex = source[i] === 0x25 && i + 2 < source.length ? source.toString('latin1', i + 1, i + 3) : '';
    if (/^[0-9a-fA-F]{2}$/.test(hex)) {
      bytes[length++] = Number.parseInt(hex, 16);
      i += 2;
    } else bytes[length++] = source[i];
  }
  try {
    return STRICT_UTF8.decode(bytes.subarray(0, length));
  } catch {
    return null;
  }
}
