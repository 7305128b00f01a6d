/**
 * The JSON of results by input, for engines that build a fresh result from local data on every
 * lookup (geoip, asn, timezone): serializing a result costs more than finding it, and the API
 * sends the JSON. The engine still builds the result (the caller owns that object); its JSON is
 * made once per input and kept while the data it came from is the same.
 *
 * `source` names that data: any value (a decoded record, a loaded file set, a clock reading)
 * compared by identity, so a reload or a new record makes a miss, never stale JSON. Bounded: an
 * LRU of `maxEntries` inputs (each the JSON text, a few hundred bytes); 0 keeps nothing.
 */
import { createGrowingLru } from './growing-lru.js';
import type { LookupOutcome } from './outcome.js';

export interface JsonMemo<Result> {
  /**
   * `JSON.stringify(result)`, remembered for `key` as long as `source` (and `source2`) are the
   * same. `result` is a result the caller has not changed, or a function building one: the memo
   * serves other requests, so it must never see a result someone has edited.
   */
  json(key: string, result: Result | (() => Result), source: unknown, source2?: unknown): string;
  /**
   * Like `json`, but only for an input seen before (from the same source): the first time, the
   * input is only noted and undefined comes back (the API then serializes, as it would anyway).
   * For engines whose in-process callers look many distinct inputs up once (geoip, timezone):
   * they pay a note, not a serialization they never read.
   */
  repeated(key: string, result: Result, source: unknown, source2?: unknown): string | undefined;
  /** Inputs remembered. */
  readonly size: number;
}

interface Entry {
  /** Undefined while the input has been seen once only (`repeated`). */
  json: string | undefined;
  source: unknown;
  source2: unknown;
}

/** Inputs a memo keeps unless told. */
export const JSON_MEMO_SIZE = 10_000;

export function createJsonMemo<Result>(maxEntries = JSON_MEMO_SIZE): JsonMemo<Result> {
  const serialize = (result: Result | (() => Result)) => JSON.stringify(typeof result === 'function' ? (result as () => Result)() : result);
  if (maxEntries <= 0) return { json: (_key, result) => serialize(result), repeated: () => undefined, size: 0 };
  // Made at the first write and grown as it fills, as a memory cache is (growing-lru.ts).
  const entries = createGrowingLru<Entry>(maxEntries);
  return {
    json(key, result, source, source2) {
      const entry = entries.get(key);
      if (entry?.json !== undefined && entry.source === source && entry.source2 === source2) return entry.json;
      const json = serialize(result);
      entries.set(key, { json, source, source2 });
      return json;
    },
    repeated(key, result, source, source2) {
      const entry = entries.get(key);
      if (entry === undefined || entry.source !== source || entry.source2 !== source2) {
        entries.set(key, { json: undefined, source, source2 });
        return undefined;
      }
      return (entry.json ??= JSON.stringify(result));
    },
    get size() {
      return entries.size;
    },
  };
}

/**
 * A lookup outcome whose `json` is made on first read: the API reads it once, in-process callers
 * (createLookup) never do and pay nothing for it. A class, so the getter lives on the prototype
 * (an object literal with a getter costs V8 more to build than the rest of such a lookup).
 */
export class LazyJsonOutcome<Result> implements LookupOutcome<Result> {
  readonly result: Result;
  readonly cached: boolean;
  readonly fetchedAt?: Date;
  #make: (result: Result) => string;
  #json: string | undefined;

  constructor(result: Result, cached: boolean, fetchedAt: Date | undefined, makeJson: (result: Result) => string) {
    this.result = result;
    this.cached = cached;
    if (fetchedAt !== undefined) this.fetchedAt = fetchedAt;
    this.#make = makeJson;
  }

  /** `JSON.stringify(result)` as it was when the lookup answered. */
  get json(): string {
    return (this.#json ??= this.#make(this.result));
  }
}
