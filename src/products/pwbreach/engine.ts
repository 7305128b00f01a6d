/**
 * The pwbreach engine: a password or SHA-1 -> its 5-hex-digit prefix -> that prefix's range
 * (local store or upstream range API, one interface) -> `breached` and `count`. Neither the
 * password nor the hash is ever kept, logged, cached or put in a result: the cache holds ranges
 * keyed by prefix, as the range API itself sees them.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { invalidOption, LookupError, SeclookupError } from '../../errors.js';
import type { ProductCache } from '../../lib/cache.js';
import { checkOptionalCacheSize, checkOptionalMs, checkOptionalString, describeValue } from '../../lib/option-checks.js';
import { isPromise, type LookupOutcome, type MaybePromise } from '../../lib/outcome.js';
import { sharedFileData } from '../../lib/shared-file-data.js';
import { parsePrefix, parseSha1Hex, prefixHex, prefixOf, sha1OfPassword } from './hash.js';
import { buildStoreInMemory, ImportRefused } from './import.js';
import { rangeText, type BreachRange } from './range.js';
import { openStoreBuffer, openStoreFile, type BreachStore } from './store.js';
import { MAX_PASSWORD_BYTES, type PwbreachEngineOptions, type PwbreachInput, type PwbreachResult, type PwbreachSourceKind } from './types.js';
import type { OutboundSlots } from '../../lib/outbound-slots.js';
import { createUpstreamSource, resolveUpstreamOptions, type UpstreamSource } from './upstream.js';

/** The store `seclookup data import pwbreach` writes, and the engine reads, in a data folder. */
export const STORE_FILE = 'pwbreach/passwords.pwb';
export const SAMPLE_FILE = 'pwbreach/pwned-sample.txt';
export const DEFAULT_CACHE_SIZE = 1024;
export const DEFAULT_CACHE_TTL_MS = 24 * 60 * 60 * 1000;
export const RANGE_CONTENT_TYPE = 'text/plain; charset=utf-8';

/** A validated lookup: the 20-byte SHA-1, nothing else. */
export interface PwbreachQuery {
  hash: Buffer;
}

/** A validated range request. */
export interface RangeQuery {
  prefix: number;
  padding: boolean;
}

/** What the range route's outcome carries besides its text. */
export interface RangeSummary {
  prefix: string;
  size: number;
}

export interface PwbreachEngine {
  readonly source: PwbreachSourceKind;
  /** Hashes in the local store (0 with an upstream). */
  readonly records: number;
  /** The store file, or null (the sample in memory, or an upstream). */
  readonly storePath: string | null;
  prepare(input: PwbreachInput): PwbreachQuery;
  lookup(query: PwbreachQuery): MaybePromise<LookupOutcome<PwbreachResult>>;
  /** Check a prefix (5 hex digits, either case). Throws LookupError invalid_request. */
  prepareRange(prefix: string, padding?: boolean): RangeQuery;
  /** The range in the public range API's text format (the outcome's `text`). */
  rangeAnswer(query: RangeQuery): MaybePromise<LookupOutcome<RangeSummary>>;
  /** Every hash suffix and count under a prefix, for in-process k-anonymity clients. */
  range(prefix: string): Promise<BreachRange>;
}

interface EngineSetup {
  dataDir: string;
  options: PwbreachEngineOptions | undefined;
  /** The product cache, asked for only when an upstream is configured. */
  cache: (settings: { ttlMs: number; maxEntries: number }) => ProductCache<string> | null;
  /** The cap on outbound sockets an upstream call takes a slot of (the outbound guard's). @default none */
  slots?: OutboundSlots;
}

/**
 * The options' types and ranges, checked without opening a store or asking the upstream
 * (createLookup runs it at construction, the engine again when built): TypeError `invalid_option`.
 */
export function checkPwbreachOptions(options: PwbreachEngineOptions | Readonly<Record<string, unknown>>): void {
  const given = options as Readonly<Record<string, unknown>>;
  const { memoryMaxBytes } = given;
  if (memoryMaxBytes !== undefined && !(typeof memoryMaxBytes === 'number' && Number.isSafeInteger(memoryMaxBytes) && memoryMaxBytes >= 0)) {
    throw invalidOption(`pwbreach memoryMaxBytes must be a whole number of bytes >= 0 (got ${describeValue(memoryMaxBytes)})`);
  }
  checkOptionalString(given.store, 'pwbreach store', 'a file path');
  if (given.upstream !== undefined) resolveUpstreamOptions(given.upstream);
  checkOptionalCacheSize(given.cacheSize, 'pwbreach cacheSize');
  checkOptionalMs(given.cacheTtlMs, 'pwbreach cacheTtlMs');
}

export function createPwbreachEngine({ dataDir, options = {}, cache, slots }: EngineSetup): PwbreachEngine {
  checkPwbreachOptions(options);
  let store: BreachStore | null = null;
  let upstream: UpstreamSource | null = null;
  let source: PwbreachSourceKind;
  if (options.upstream !== undefined) {
    const upstreamOptions = typeof options.upstream === 'string' ? { url: options.upstream } : options.upstream;
    upstream = createUpstreamSource(
      upstreamOptions,
      cache({ ttlMs: options.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS, maxEntries: options.cacheSize ?? DEFAULT_CACHE_SIZE }),
      slots,
    );
    source = 'upstream';
  } else if (options.store !== undefined) {
    store = openStoreFile(options.store, { memoryMaxBytes: options.memoryMaxBytes });
    source = 'store';
  } else if (existsSync(join(dataDir, STORE_FILE))) {
    store = openStoreFile(join(dataDir, STORE_FILE), { memoryMaxBytes: options.memoryMaxBytes });
    source = 'store';
  } else {
    store = loadSampleStore(dataDir);
    source = 'sample';
  }

  const local = store;
  const answer = (count: number, cached: boolean): LookupOutcome<PwbreachResult> => ({
    result: { breached: count > 0, count },
    cached,
    json: `{"breached":${count > 0},"count":${count}}`,
  });

  function rangeOf(prefix: number): MaybePromise<{ range: BreachRange; cached: boolean }> {
    return local ? { range: local.range(prefix), cached: false } : upstream!.range(prefix);
  }

  return {
    source,
    records: local?.records ?? 0,
    storePath: local?.path ?? null,
    prepare,
    lookup(query) {
      if (local) return answer(local.count(query.hash), false);
      const sourced = upstream!.range(prefixOf(query.hash));
      return isPromise(sourced)
        ? sourced.then(({ range, cached }) => answer(range.count(query.hash), cached))
        : answer(sourced.range.count(query.hash), sourced.cached);
    },
    prepareRange(prefix, padding = false) {
      const value = parsePrefix(prefix);
      if (value < 0) throw new LookupError('invalid_request', 'the prefix must be the first 5 hexadecimal characters of a SHA-1 hash');
      return { prefix: value, padding };
    },
    rangeAnswer({ prefix, padding }) {
      const toOutcome = ({ range, cached }: { range: BreachRange; cached: boolean }): LookupOutcome<RangeSummary> => ({
        result: { prefix: prefixHex(prefix), size: range.size },
        cached,
        text: { body: rangeText(range, padding), contentType: RANGE_CONTENT_TYPE },
      });
      const sourced = rangeOf(prefix);
      return isPromise(sourced) ? sourced.then(toOutcome) : toOutcome(sourced);
    },
    async range(prefix) {
      const value = parsePrefix(prefix);
      if (value < 0) throw new LookupError('invalid_request', 'the prefix must be the first 5 hexadecimal characters of a SHA-1 hash');
      return (await rangeOf(value)).range;
    },
  };
}

/**
 * Validate a lookup's input. The password is hashed here and dropped; error messages never
 * repeat the input.
 */
function prepare(input: PwbreachInput): PwbreachQuery {
  let password: unknown;
  let sha1: unknown;
  if (typeof input === 'string') password = input;
  else if (typeof input === 'object' && input !== null) ({ password, sha1 } = input as { password?: unknown; sha1?: unknown });
  const hasPassword = given(password);
  if (given(sha1)) {
    if (hasPassword) throw invalid('send either password or sha1, not both');
    const hash = typeof sha1 === 'string' ? parseSha1Hex(sha1) : null;
    if (!hash) throw invalid('sha1 must be 40 hexadecimal characters');
    return { hash };
  }
  if (!hasPassword) throw invalid('missing password (or sha1)');
  if (typeof password !== 'string') throw invalid('password must be a string');
  if (password.length > MAX_PASSWORD_BYTES || Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) {
    throw invalid(`password longer than ${MAX_PASSWORD_BYTES} bytes (UTF-8)`);
  }
  // A lone surrogate (a JSON "\ud83d" escape, a string cut mid-emoji) has no UTF-8 bytes: hashed,
  // it would be U+FFFD's, and the answer would be about a password nobody sent.
  if (LONE_SURROGATE.test(password)) throw invalid('password is not valid Unicode text (it holds a lone surrogate)');
  return { hash: sha1OfPassword(password) };
}

/** A UTF-16 surrogate not paired with its other half (a pair is one code point under `u`). */
const LONE_SURROGATE = /\p{Cs}/u;

/** Present and not empty: an empty form field is as good as absent. */
function given(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '';
}

function invalid(message: string): LookupError {
  return new LookupError('invalid_password', message);
}

/**
 * The bundled sample compiled (about 50 ms, 4.3 MB) and opened, once per process while the file is
 * unchanged: a store in memory is only read, and its close does nothing, so engines share it.
 */
export function loadSampleStore(dataDir: string): BreachStore {
  const path = join(dataDir, SAMPLE_FILE);
  const storePath = join(dataDir, STORE_FILE);
  if (!existsSync(path))
    throw new SeclookupError('dataset_missing', `seclookup: no breach data: neither ${storePath} (seclookup data import pwbreach) nor ${path} exists`);
  return sharedFileData('pwbreach-sample', [path], () => {
    let bytes: Buffer;
    try {
      bytes = buildStoreInMemory([path]);
    } catch (error) {
      const why = error instanceof ImportRefused ? error.message : (error as Error).message;
      throw new SeclookupError('dataset_invalid', `seclookup: breach sample ${path} cannot be read: ${why}`, { cause: error });
    }
    return openStoreBuffer(bytes, 'bundled breach sample');
  });
}
