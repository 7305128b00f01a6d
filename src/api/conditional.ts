/** HTTP's conditional GET (RFC 9110 13.1.2) and bodiless statuses, for the widget's static files. */
import { firstHeader } from './body.js';

/**
 * Does `If-None-Match` match `etag`? A list of entity tags or `*`, compared weakly (a `W/`
 * prefix ignored on either side), as RFC 9110 asks for If-None-Match: a proxy or CDN that
 * compresses a file turns its ETag weak, and the client sends that one back.
 */
export function etagMatches(header: string | string[] | undefined, etag: string): boolean {
  const value = Array.isArray(header) ? header.join(',') : firstHeader(header);
  if (!value) return false;
  if (value.trim() === '*') return true;
  const wanted = opaque(etag);
  return value.split(',').some((tag) => opaque(tag.trim()) === wanted);
}

function opaque(tag: string): string {
  return tag.startsWith('W/') ? tag.slice(2) : tag;
}

/** 204 and 304 carry no body, and so no Content-Length (RFC 9110 8.6). */
export function isBodiless(status: number): boolean {
  return status === 204 || status === 304;
}
