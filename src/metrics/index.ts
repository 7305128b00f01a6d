/**
 * seclookup/metrics: Prometheus metrics (prom-client, in a private Registry, never the global
 * one). Requests by product, route pattern and status with latency histograms (from the API's
 * `onResponse` event); meter store calls, errors and latency (`instrumentMeter`); result-cache
 * hits and misses per product and upstream calls, failures and latency per kind (the lookup's
 * `observer`); the age of the data the watched lookups loaded (`watchDatasets`, read at scrape
 * time from the engines, never from the files). Every label value comes from a fixed set (product
 * ids, route patterns, status codes, operation names, upstream kinds): never a key, an address,
 * a hostname or an input.
 *
 * @example
 * const metrics = createMetrics();
 * const lookup = createLookup({ observer: metrics.observer });
 * const api = createApi({ lookup, meter: metrics.instrumentMeter(meter), onResponse: metrics.onResponse });
 * metrics.watchDatasets(lookup);
 * app.get('/metrics', metrics.handler); // node http or Express
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { RequestLogEvent } from '../api/types.js';
import type { LookupObserver, UpstreamKind } from '../lib/observe.js';
import type { Meter } from '../metering/types.js';
import { PRODUCT_IDS } from '../products/catalog.js';
import { datasetAges, type EngineSource } from './datasets.js';
import { FastCounter, FastHistogram, type HistogramRecord } from './fast.js';
import { instrumentMeter as wrapMeter } from './meter.js';

export type { LookupObserver, UpstreamKind } from '../lib/observe.js';

/** Seconds: request latency and meter store calls (fast), upstream calls (slow). */
export const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;
export const METER_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] as const;
export const UPSTREAM_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;

export interface MetricsOptions {
  /**
   * @deprecated Not read: `seclookup_dataset_age_seconds` reports the data the lookups given to
   * `watchDatasets` loaded, dated by the data itself, never the files in a folder (whose times
   * say when they were copied, and which a `data update` replaces under a running process).
   */
  dataDir?: string;
  /** Also Node's process metrics (CPU, memory, event-loop lag, GC; prom-client's defaults). @default false */
  processMetrics?: boolean;
  /** Clock for dataset ages, ms since the epoch. @default Date.now */
  now?: () => number;
}

export interface Metrics {
  /** The private registry; register your own metrics here if you like. */
  readonly registry: Registry;
  /** The Content-Type of {@link Metrics.metrics}'s text. */
  readonly contentType: string;
  /** Pass as `createApi({ onResponse })`; chain your own log with `(e) => { metrics.onResponse(e); log(e); }`. */
  readonly onResponse: (event: RequestLogEvent) => void;
  /** Pass as `createLookup({ observer })`: cache hits and misses, upstream calls. */
  readonly observer: LookupObserver;
  /** The same meter, every store call timed and its failures counted. */
  instrumentMeter<M extends Meter>(meter: M): M;
  /**
   * Report the age of the data this lookup's engines loaded (`seclookup_dataset_age_seconds`):
   * the date each dataset records (MMDB build time, `"generated"`, snapshot dates), as loaded,
   * so a `data update` under a running process does not reset it. Builds the engines not built yet.
   */
  watchDatasets(lookup: EngineSource): void;
  /** The exposition text, Prometheus format. */
  metrics(): Promise<string>;
  /** A node http / Express handler answering with the text. */
  readonly handler: (request: IncomingMessage, response: ServerResponse) => void;
}

const PRODUCTS = new Set<string>(PRODUCT_IDS);
const NO_PRODUCT = 'none';

/**
 * Build a metrics set in its own prom-client Registry. Without a call to `onResponse`,
 * `instrumentMeter` or the observer, it records nothing and costs nothing.
 */
export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  const now = options.now ?? Date.now;
  if (options.processMetrics) collectDefaultMetrics({ register: registry });

  const requests = new FastCounter(
    'seclookup_http_requests_total',
    'HTTP requests answered, by product, route pattern and status.',
    ['product', 'route', 'status'],
    registry,
  );
  const requestDuration = new FastHistogram(
    'seclookup_http_request_duration_seconds',
    'Time from the request reaching the API to its answer, by product and route pattern.',
    ['product', 'route'],
    registry,
    REQUEST_BUCKETS,
  );
  const meterDuration = new FastHistogram(
    'seclookup_meter_store_duration_seconds',
    'Meter store calls (keys, rate and quota, refunds, ...) and their latency, by operation.',
    ['op'],
    registry,
    METER_BUCKETS,
  );
  const meterErrors = new FastCounter(
    'seclookup_meter_store_errors_total',
    'Meter store calls that failed (threw or rejected), by operation.',
    ['op'],
    registry,
  );
  const cacheHits = new FastCounter('seclookup_cache_hits_total', 'Result-cache reads that found the result, by product.', ['product'], registry);
  const cacheMisses = new FastCounter(
    'seclookup_cache_misses_total',
    'Result-cache reads that did not (the lookup then ran), by product.',
    ['product'],
    registry,
  );
  const upstreamCalls = new FastCounter(
    'seclookup_upstream_requests_total',
    'Upstream calls made by lookups, by kind (dns, rdap, whois, tls, http).',
    ['kind'],
    registry,
  );
  const upstreamFailures = new FastCounter(
    'seclookup_upstream_failures_total',
    'Upstream calls that failed (timeout, refused, reset, malformed or oversize answer, DNS SERVFAIL/REFUSED), by kind.',
    ['kind'],
    registry,
  );
  const upstreamDuration = new FastHistogram(
    'seclookup_upstream_duration_seconds',
    'Upstream call latency, failed calls included, by kind.',
    ['kind'],
    registry,
    UPSTREAM_BUCKETS,
  );

  const engineSources: EngineSource[] = [];
  new Gauge({
    name: 'seclookup_dataset_age_seconds',
    help: 'Seconds since the loaded data of each dataset was built or published, as the data records it (undated data has no series), by product and dataset.',
    labelNames: ['product', 'dataset'],
    registers: [registry],
    collect() {
      this.reset();
      const at = now();
      // The oldest wins when two watched lookups load the same dataset: either may answer from it.
      const oldest = new Map<string, { product: string; dataset: string; builtAtMs: number }>();
      for (const age of engineSources.flatMap((source) => datasetAges(source))) {
        if (age.builtAtMs === null) continue; // undated: no age to report
        const key = `${age.product}\0${age.dataset}`;
        const known = oldest.get(key);
        if (!known || age.builtAtMs < known.builtAtMs) oldest.set(key, { product: age.product, dataset: age.dataset, builtAtMs: age.builtAtMs });
      }
      for (const age of oldest.values()) this.set({ product: age.product, dataset: age.dataset }, Math.max(0, Math.round((at - age.builtAtMs) / 1000)));
    },
  });

  // The records of one (route, status, product), found once: a busy server answers few distinct
  // ones, and nested maps keyed by the event's own strings allocate nothing per request.
  const requestRecords = new Map<string, Map<number, Map<string | null, { count: { value: number }; latency: HistogramRecord }>>>();
  const recordsFor = (event: RequestLogEvent) => {
    let byStatus = requestRecords.get(event.route);
    if (!byStatus) requestRecords.set(event.route, (byStatus = new Map()));
    let byProduct = byStatus.get(event.status);
    if (!byProduct) byStatus.set(event.status, (byProduct = new Map()));
    let records = byProduct.get(event.product);
    if (!records) {
      const product = event.product !== null && PRODUCTS.has(event.product) ? event.product : NO_PRODUCT;
      const route = typeof event.route === 'string' ? event.route : 'unmatched';
      const status = String(Math.trunc(Number(event.status)) || 0);
      byProduct.set(event.product, (records = { count: requests.child([product, route, status]), latency: requestDuration.child([product, route]) }));
    }
    return records;
  };
  const onResponse = (event: RequestLogEvent) => {
    const records = recordsFor(event);
    records.count.value += 1;
    requestDuration.observeInto(records.latency, event.latency_ms / 1000);
  };

  const observer: LookupObserver = {
    cache(product, hit) {
      const labels = [PRODUCTS.has(product) ? product : NO_PRODUCT];
      (hit ? cacheHits : cacheMisses).inc(labels);
    },
    upstream(kind: UpstreamKind, ok, seconds) {
      const labels = [kind];
      upstreamCalls.inc(labels);
      if (!ok) upstreamFailures.inc(labels);
      upstreamDuration.observe(labels, seconds);
    },
  };

  const metrics = () => registry.metrics();
  const handler = (_request: IncomingMessage, response: ServerResponse) => {
    metrics().then(
      (text) => {
        response.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' });
        response.end(text);
      },
      () => {
        response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        response.end('metrics collection failed\n');
      },
    );
  };

  return {
    registry,
    contentType: registry.contentType,
    onResponse,
    observer,
    instrumentMeter: (meter) => wrapMeter(meter, { meterDuration, meterErrors }),
    watchDatasets: (lookup) => void engineSources.push(lookup),
    metrics,
    handler,
  };
}
