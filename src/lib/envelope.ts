/**
 * The success envelope as JSON text. Pure, below both the HTTP layer (src/api, which adds the
 * error envelope and request ids) and the products: a service route (captcha) builds its
 * answers with it without importing src/api.
 */

let fetchedMs = Number.NaN;
let fetchedText = '';

/**
 * SPEC's `fetched_at` shape: `YYYY-MM-DD HH:MM:SS.mmm`, UTC. The last one is remembered: a
 * cached result answers with the same time request after request.
 */
export function formatFetchedAt(date: Date): string {
  const ms = date.getTime();
  if (ms !== fetchedMs) {
    fetchedMs = ms;
    fetchedText = date.toISOString().slice(0, 23).replace('T', ' ');
  }
  return fetchedText;
}

export interface SuccessMeta {
  /**
   * `req_` and hex, as the API makes them (newRequestId): JSON-safe by construction, so spliced
   * in as the error envelope and the request log do (JSON.stringify of it costs about 0.1 µs).
   */
  requestId: string;
  cached?: boolean;
  fetchedAt?: Date;
}

/**
 * The success envelope as JSON text: `success`, `request_id`, then `cached` and `fetched_at`
 * when the route carries them, then the resource's own fields. `resourceJson`, when the engine
 * kept one, is `JSON.stringify(resource)` already made: serializing a result costs more than
 * the rest of a cached lookup, so it is spliced in rather than serialized again.
 */
export function successBody(resource: object, meta: SuccessMeta, resourceJson?: string): string {
  return successBodyOfMembers(meta, membersOf(resource, resourceJson));
}

/**
 * The same envelope from the resource's JSON members, without their braces: for a route that
 * writes its resource's JSON itself (captcha's challenge), so that it is not sliced back out of
 * a text made moments before.
 */
export function successBodyOfMembers(meta: SuccessMeta, members: string): string {
  return withMembers(`{"success":true,"request_id":"${meta.requestId}"`, meta, members);
}

/**
 * One result of a batch (`results[i]`): the single lookup's success envelope without
 * `request_id`, which the batch's own envelope carries once.
 */
export function batchItemSuccess(resource: object, meta: Omit<SuccessMeta, 'requestId'>, resourceJson?: string): string {
  return withMembers('{"success":true', meta, membersOf(resource, resourceJson));
}

/** The resource's JSON members without the braces: from the JSON the engine kept, else serialized now. */
function membersOf(resource: object, resourceJson: string | undefined): string {
  return (resourceJson ?? JSON.stringify(resource)).slice(1, -1);
}

/** `head` then `cached` and `fetched_at` when the route carries them, then the resource's own members. */
function withMembers(head: string, meta: Omit<SuccessMeta, 'requestId'>, members: string): string {
  if (meta.cached !== undefined) head += `,"cached":${meta.cached}`;
  if (meta.fetchedAt) head += `,"fetched_at":"${formatFetchedAt(meta.fetchedAt)}"`;
  return members.length === 0 ? `${head}}` : `${head},${members}}`;
}
