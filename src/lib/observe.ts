/**
 * Observers of the engines' work, for metrics: result-cache reads per product, and every call to
 * an upstream (DNS, RDAP, WHOIS, TLS, HTTP) with its outcome and duration. Engines never import a
 * metrics library: they call the two functions below, which cost one array-length check while no
 * observer is registered (the library used without metrics).
 *
 * Upstream observers are process-wide (the engines' outbound code is shared module code), so
 * every registered observer sees every lookup's upstream calls in this process, once each;
 * `createLookup` registers `observer.upstream` and drops it in `close()`. Cache observers are per
 * lookup.
 */
import { performance } from 'node:perf_hooks';
import type { ProductCache } from './cache.js';
import { isPromise } from './outcome.js';

/** The kinds of upstream call, a fixed set (metric label values). */
export type UpstreamKind = 'dns' | 'rdap' | 'whois' | 'tls' | 'http';
export const UPSTREAM_KINDS: readonly UpstreamKind[] = ['dns', 'rdap', 'whois', 'tls', 'http'];

/** Told about the engines' work. Called on the hot path: keep it cheap and never throw. */
export interface LookupObserver {
  /** A product's result-cache read: `hit` true when the value came from the cache. */
  cache?(product: string, hit: boolean): void;
  /**
   * One upstream call finished: `ok` false when it failed (timeout, refused, reset, malformed or
   * oversize answer, DNS SERVFAIL/REFUSED, TLS handshake failure); an HTTP answer of any status
   * and a DNS NXDOMAIN are `ok`. `seconds` from the call's start to its end.
   */
  upstream?(kind: UpstreamKind, ok: boolean, seconds: number): void;
}

type UpstreamFn = NonNullable<LookupObserver['upstream']>;
let upstreamObservers: readonly UpstreamFn[] = [];
/**
 * Registrations by observer: several lookups given one observer (one metrics set watching them
 * all) register it once, or each upstream call would be counted once per lookup.
 */
const registered = new Map<UpstreamFn, { call: UpstreamFn; holders: number }>();

/**
 * Register `observer.upstream` as a process-wide upstream observer, once however many lookups
 * register it; returns this registration's removal (the observer stays while another holds it).
 */
export function addUpstreamObserver(observer: LookupObserver): () => void {
  const key = observer.upstream;
  if (!key) return () => {};
  const held = registered.get(key);
  if (held) held.holders++;
  else registered.set(key, { call: key.bind(observer), holders: 1 });
  upstreamObservers = [...registered.values()].map((entry) => entry.call);
  let removed = false;
  return () => {
    const entry = registered.get(key);
    if (removed || !entry) return;
    removed = true;
    if (--entry.holders === 0) registered.delete(key);
    upstreamObservers = [...registered.values()].map((held) => held.call);
  };
}

/** The start of an upstream call: a timestamp, or 0 when nobody observes (no clock read). */
export function upstreamStart(): number {
  return upstreamObservers.length === 0 ? 0 : performance.now();
}

/** The end of an upstream call started with {@link upstreamStart}. */
export function upstreamEnd(kind: UpstreamKind, ok: boolean, started: number): void {
  if (started === 0 || upstreamObservers.length === 0) return;
  const seconds = (performance.now() - started) / 1000;
  for (const observer of upstreamObservers) {
    try {
      observer(kind, ok, seconds);
    } catch {
      // An observer's bug must never fail a lookup.
    }
  }
}

/** A product cache whose reads are told to `tell` (hit or miss); a sync store stays sync. */
export function observeCache<Value>(cache: ProductCache<Value>, product: string, tell: (product: string, hit: boolean) => void): ProductCache<Value> {
  const told = (value: Value | undefined) => {
    try {
      tell(product, value !== undefined);
    } catch {
      // An observer's bug must never fail a lookup.
    }
    return value;
  };
  return {
    get(input, accept) {
      const value = cache.get(input, accept);
      return isPromise(value) ? value.then(told) : told(value);
    },
    set: (input, value, ttlMs) => cache.set(input, value, ttlMs),
    delete: (input) => cache.delete?.(input),
  };
}
