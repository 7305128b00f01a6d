/**
 * `POST /v1/<product>/batch` with `{ "inputs": [...] }`: many lookups of a one-input product in
 * one request, answered in order, one envelope per input. Metered as that many lookups, in
 * one atomic meter call: every input counts against the rate, every valid one reserves quota,
 * and the request is refused whole (429) when they do not all fit. Identical inputs are looked
 * up once; lookups run a few at a time.
 */
import { clientGoneRefusal, isLookupError, LookupError } from '../errors.js';
import type { IpAddress } from '../lib/ip.js';
import type { Lookup } from '../lookup.js';
import { PRODUCTS, type ProductId } from '../products/catalog.js';
import type { AnyProductModule, ProductEngine } from '../products/module.js';
import { bearerToken } from './auth.js';
import { parseBody } from './body.js';
import { batchItemError, batchItemSuccess } from './envelope.js';
import type { Headers, MeterGate } from './meter-gate.js';
import type { ApiRequest } from './types.js';

/** Inputs per batch at most, unless `createApi({ batchLimit })` says otherwise. */
export const DEFAULT_BATCH_LIMIT = 100;
/** The batch limits the CLI takes (`serve --batch-limit`, `openapi --batch-limit`). */
export const BATCH_LIMIT_RANGE = { min: 1, max: 10_000 } as const;
/** Lookups of one batch in flight at once: 100 domains never fire 100 DNS queries together. */
export const BATCH_CONCURRENCY = 8;
/**
 * How long one batch may take, unless `createApi({ batchDeadlineMs })` says otherwise. Each
 * lookup has its own deadlines, but 100 slow ones, 8 at a time, could add up to minutes. Under
 * the client's default timeout (10 s), so the client hears the partial answer, and under
 * serve's shutdown grace (10 s), so a batch in flight at SIGTERM answers and refunds before the
 * database closes.
 */
export const DEFAULT_BATCH_DEADLINE_MS = 8_000;

const NO_RESOURCE = {};

export interface BatchSetup {
  lookup: Lookup;
  gate: MeterGate;
  bodyLimit: number;
  batchLimit: number;
  deadlineMs: number;
  onError?: (error: unknown, context: string) => void;
}

export interface BatchContext {
  request: ApiRequest;
  requestId: string;
  clientIp: () => IpAddress | null;
  headers: Headers;
}

/** One distinct input: its query, or the error its validation gave; and where it stands in `inputs`. */
interface Distinct {
  query?: unknown;
  /** The item's JSON once known (validation error, result, lookup error). */
  item?: string;
  at: number[];
}

export function createBatchHandler(setup: BatchSetup) {
  const { lookup, gate, bodyLimit, batchLimit } = setup;

  return async function batch(module: AnyProductModule, { request, requestId, clientIp, headers }: BatchContext): Promise<string> {
    const product = module.id as ProductId;
    const spec = module.batch!;
    const pass = await gate.authenticate(bearerToken(request.headers), product, { requireSecret: true, lenient: true }, clientIp);

    // The body as a whole is checked before anything is counted but the one request, as a
    // single lookup's bad input is.
    let inputs: string[];
    try {
      inputs = batchInputs(await parseBody(request.body, request.headers, bodyLimit), batchLimit, spec.input);
      if (pass.metered && inputs.length > pass.key.plan.rateLimitPerMinute) {
        throw new LookupError(
          'invalid_request',
          `a batch of ${inputs.length} inputs can never fit the key's rate limit of ${pass.key.plan.rateLimitPerMinute} per minute: send at most ${pass.key.plan.rateLimitPerMinute}`,
        );
      }
    } catch (error) {
      if (isLookupError(error)) await gate.countRejected(pass, product, headers);
      throw error;
    }

    // Each distinct input is validated once; every copy counts as an input.
    const engine = lookup.engine(product as never) as ProductEngine;
    const distinct = new Map<string, Distinct>();
    let valid = 0;
    for (let i = 0; i < inputs.length; i++) {
      const value = inputs[i];
      let entry = distinct.get(value);
      if (!entry) {
        entry = { at: [] };
        try {
          entry.query = engine.prepare(...spec.args(value));
        } catch (error) {
          if (!isLookupError(error)) throw error;
          entry.item = batchItemError(error.code, error.message, error.fields);
        }
        distinct.set(value, entry);
      }
      entry.at.push(i);
      if (entry.item === undefined) valid++;
    }
    // As for the rate above: more valid inputs than the whole month's quota can never be admitted,
    // so waiting (429 with a Retry-After of weeks) would not help.
    const monthlyQuota = pass.metered ? pass.key.plan.monthlyQuota : null;
    if (monthlyQuota !== null && valid > monthlyQuota) {
      await gate.countRejected(pass, product, headers);
      throw new LookupError(
        'invalid_request',
        `a batch of ${valid} valid inputs can never fit the key's monthly quota of ${monthlyQuota}: send at most ${monthlyQuota}`,
      );
    }

    // Every input against the rate, every valid one against the quota: all or none.
    const { reservation } = await gate.admit(pass, product, { reserveQuota: valid > 0, lenient: true, units: { rate: inputs.length, quota: valid } }, headers);
    let unbilled = valid;
    let signal: AbortSignal | undefined;
    try {
      const hasFetchedAt = PRODUCTS[product].hasFetchedAt;
      const pending = [...distinct.values()].filter((entry) => entry.item === undefined);
      const finished = forEachBounded(pending, BATCH_CONCURRENCY, async (entry) => {
        try {
          const outcome = await engine.lookup(entry.query);
          if (entry.item !== undefined) return; // answered by the deadline meanwhile
          const meta = { cached: outcome.cached, fetchedAt: hasFetchedAt ? outcome.fetchedAt : undefined };
          const { json } = outcome;
          entry.item = json === undefined ? batchItemSuccess(outcome.result, meta) : batchItemSuccess(NO_RESOURCE, meta, json);
          unbilled -= entry.at.length;
        } catch (error) {
          if (!isLookupError(error)) setup.onError?.(error, requestId);
          const failure = isLookupError(error) ? error : new LookupError('internal_error', 'unexpected server error; retry with backoff');
          entry.item ??= batchItemError(failure.code, failure.message, failure.fields);
        }
      });
      // At the deadline (or when the client leaves) the inputs not yet answered fail (and are
      // refunded); their lookups, which cannot be cancelled, finish unheard, and no new one starts.
      signal = reservation ? request.signal : undefined;
      if (!(await settlesWithin(finished, setup.deadlineMs, signal))) {
        const late = batchItemError('lookup_failed', `the batch ran out of time (${setup.deadlineMs} ms): retry these inputs`);
        for (const entry of pending) entry.item ??= late;
      }
    } finally {
      // The inputs whose lookup failed are given back, and the rest billed, in one call; all
      // of them when the batch itself failed or its client is gone.
      if (signal?.aborted) unbilled = valid;
      if (reservation && unbilled === 0) gate.commit(reservation);
      else if (reservation) await gate.refund(unbilled === valid ? reservation : { ...reservation, units: unbilled }, headers);
    }
    // Nobody is left to read the results: logged as the client's leaving, like a single lookup's.
    if (signal?.aborted) throw clientGoneRefusal();

    const items = new Array<string>(inputs.length);
    for (const entry of distinct.values()) for (const i of entry.at) items[i] = entry.item!;
    return `{"success":true,"request_id":${JSON.stringify(requestId)},"results":[${items.join(',')}]}`;
  };
}

/** `body.inputs` as 1 to `limit` strings, else 400 invalid_request saying what a batch takes. */
function batchInputs(body: Record<string, unknown>, limit: number, input: string): string[] {
  const inputs = body.inputs;
  const shape = `send {"inputs": [...]}: 1 to ${limit} ${input} strings`;
  if (!Array.isArray(inputs)) throw new LookupError('invalid_request', `no inputs array; ${shape}`);
  if (inputs.length === 0) throw new LookupError('invalid_request', `inputs is empty; ${shape}`);
  if (inputs.length > limit) throw new LookupError('invalid_request', `${inputs.length} inputs is more than ${limit}; ${shape}`);
  const bad = inputs.findIndex((value) => typeof value !== 'string');
  if (bad !== -1) throw new LookupError('invalid_request', `inputs[${bad}] is not a string; ${shape}`);
  return inputs as string[];
}

/** Whether `work` settles within `ms`, and before `signal` (the client is gone) aborts. */
async function settlesWithin(work: Promise<void>, ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return false;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(resolve, ms, false);
    if (signal) signal.addEventListener('abort', (onAbort = () => resolve(false)), { once: true });
  });
  try {
    return await Promise.race([work.then(() => true), expired]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal!.removeEventListener('abort', onAbort);
  }
}

/**
 * Run `work` on every item, at most `limit` at a time, skipping items already answered (by the
 * deadline). Resolves when all are done; `work` must not throw.
 */
async function forEachBounded<T extends { item?: string }>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++];
      if (item.item === undefined) await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
