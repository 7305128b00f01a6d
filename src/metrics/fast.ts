/**
 * Counters and histograms for the per-request paths, registered in a prom-client Registry as
 * custom metrics (prom-client formats them). prom-client's own Counter and Histogram validate
 * and hash the label object on every call (about 0.4 µs each here); these take the label
 * values as positional strings and keep one record per label set in a Map, so recording costs
 * one Map lookup of a joined key and a few additions. The text is produced at scrape time.
 */
import type { Registry } from 'prom-client';

type Labels = Record<string, string>;

interface MetricValue {
  labels: Labels;
  value: number;
  metricName?: string;
}

/** The shape prom-client's Registry reads from a registered metric. */
interface CustomMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: MetricValue[] }>;
  reset(): void;
}

const SEPARATOR = '\u0000';

abstract class Family<Record> implements CustomMetric {
  abstract readonly type: 'counter' | 'histogram';
  readonly aggregator = 'sum' as const;
  protected readonly records = new Map<string, { labels: Labels; record: Record }>();

  constructor(
    readonly name: string,
    readonly help: string,
    protected readonly labelNames: readonly string[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** The record of one label set (`values` in `labelNames` order), made on first use. */
  protected recordFor(values: readonly string[]): Record {
    const key = values.length === 1 ? values[0] : values.join(SEPARATOR);
    let entry = this.records.get(key);
    if (!entry) {
      const labels: Labels = {};
      this.labelNames.forEach((name, i) => (labels[name] = values[i]));
      entry = { labels, record: this.create() };
      this.records.set(key, entry);
    }
    return entry.record;
  }

  protected abstract create(): Record;
  /** Back to a new record's state, in place. */
  protected abstract zero(record: Record): void;
  protected abstract values(): MetricValue[];

  async get() {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.values() };
  }

  /**
   * prom-client's `registry.resetMetrics()`: every count back to 0. The records are zeroed, not
   * dropped: callers keep them (`child()`, the request and meter paths), and a dropped one would
   * go on counting where no scrape sees it.
   */
  reset(): void {
    for (const { record } of this.records.values()) this.zero(record);
  }
}

/** A monotonically increasing count per label set. */
export class FastCounter extends Family<{ value: number }> {
  readonly type = 'counter' as const;

  inc(values: readonly string[], by = 1): void {
    this.recordFor(values).value += by;
  }

  /** The count of one label set, to add to directly (`child.value += 1`) on a path that knows its labels in advance. */
  child(values: readonly string[]): { value: number } {
    return this.recordFor(values);
  }

  /** The current count of one label set (0 when never incremented), for tests. */
  value(values: readonly string[]): number {
    return this.records.get(values.join(SEPARATOR))?.record.value ?? 0;
  }

  protected create() {
    return { value: 0 };
  }

  protected zero(record: { value: number }): void {
    record.value = 0;
  }

  protected values(): MetricValue[] {
    return [...this.records.values()].map(({ labels, record }) => ({ labels, value: record.value }));
  }
}

export interface HistogramRecord {
  /** Per bucket (not cumulative); the last is +Inf. */
  counts: number[];
  sum: number;
  count: number;
}

/** Observations in fixed buckets per label set, exposed as a Prometheus histogram. */
export class FastHistogram extends Family<HistogramRecord> {
  readonly type = 'histogram' as const;

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    registry: Registry,
    private readonly buckets: readonly number[],
  ) {
    super(name, help, labelNames, registry);
  }

  observe(values: readonly string[], value: number): void {
    this.observeInto(this.recordFor(values), value);
  }

  /** The record of one label set, for {@link FastHistogram.observeInto} on a path that knows its labels in advance. */
  child(values: readonly string[]): HistogramRecord {
    return this.recordFor(values);
  }

  observeInto(record: HistogramRecord, value: number): void {
    const { buckets } = this;
    let i = 0;
    while (i < buckets.length && value > buckets[i]) i++;
    record.counts[i]++;
    record.sum += value;
    record.count++;
  }

  protected create(): HistogramRecord {
    return { counts: new Array<number>(this.buckets.length + 1).fill(0), sum: 0, count: 0 };
  }

  protected zero(record: HistogramRecord): void {
    record.counts.fill(0);
    record.sum = 0;
    record.count = 0;
  }

  protected values(): MetricValue[] {
    const out: MetricValue[] = [];
    for (const { labels, record } of this.records.values()) {
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += record.counts[i];
        out.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: String(le) }, value: cumulative });
      });
      out.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: '+Inf' }, value: record.count });
      out.push({ metricName: `${this.name}_sum`, labels, value: record.sum });
      out.push({ metricName: `${this.name}_count`, labels, value: record.count });
    }
    return out;
  }
}
