/**
 * Reading request headers as Node hands them (a name may carry several values). Pure, below both
 * the HTTP layer and the products, so a service route reads headers without importing src/api.
 */

/** The first value of a header, or undefined when it was not sent. */
export function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The key from `Authorization: Bearer <key>`, or undefined when none was sent. */
export function bearerToken(headers: Readonly<Record<string, string | string[] | undefined>>): string | undefined {
  // `Bearer <key>`, scheme case-insensitive, whitespace around both parts allowed: the
  // regex /^\s*bearer\s+(\S+)\s*$/i, done with string operations on the per-request path.
  const text = firstHeader(headers.authorization)?.trim();
  if (!text || text.length < 8 || text.slice(0, 6).toLowerCase() !== 'bearer') return undefined;
  const token = text.slice(6).trimStart();
  if (token.length === text.length - 6 || /\s/.test(token)) return undefined;
  return token;
}
