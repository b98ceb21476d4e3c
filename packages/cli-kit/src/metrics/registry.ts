import { HeddleError } from '@heddle/envelope/errors';
import { type ExpositionFamily, renderExposition } from './exposition.js';

/** Label values of one series, by label name. */
export type MetricLabels = Readonly<Record<string, string>>;

/** One series a collector reports at scrape time: its labels and value. */
export interface MetricSample {
  readonly labels: MetricLabels;
  readonly value: number;
}

/** What every metric is declared with. */
export interface MetricDef {
  /** `[a-zA-Z_:][a-zA-Z0-9_:]*`, unique in its registry. */
  readonly name: string;
  /** One line of help text. */
  readonly help: string;
  /** The label names every series must carry, in order (none by default). */
  readonly labelNames?: readonly string[];
}

/** A gauge whose series are computed when the registry is scraped (from state, not from hooks). */
export interface CollectedGaugeDef extends MetricDef {
  /** Called at each scrape; a throw is reported as `heddle_metrics_collect_errors_total`. */
  readonly collect: () => Iterable<MetricSample>;
}

/** A counter whose value is read at scrape time (a total kept elsewhere, such as a socket's bytes). */
export interface CollectedCounterDef extends MetricDef {
  /** Called at each scrape; must never decrease for a series. */
  readonly collect: () => Iterable<MetricSample>;
}

/** A histogram: its bucket upper bounds (seconds, ascending; `+Inf` is implied). */
export interface HistogramDef extends MetricDef {
  readonly buckets: readonly number[];
}

/** Error of a metric declared or used wrongly (a programming error, never peer input). */
export class MetricsError extends HeddleError {}

const NAME_RE = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_RE = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** The default buckets of a latency histogram, in seconds (1 ms to 60 s). */
export const LATENCY_BUCKETS: readonly number[] = Object.freeze([
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
]);

function keyOf(names: readonly string[], labels: MetricLabels, metric: string): string {
  const given = Object.keys(labels);
  if (given.length !== names.length || names.some((n) => typeof labels[n] !== 'string')) {
    throw new MetricsError(
      'metric_labels',
      `${metric}: expected labels {${names.join(', ')}}, got {${given.join(', ')}}`,
    );
  }
  return JSON.stringify(names.map((n) => labels[n]));
}

/** A monotonically increasing count, per label set. */
export class Counter {
  readonly #names: readonly string[];
  readonly #name: string;
  readonly #series = new Map<string, { labels: MetricLabels; value: number }>();

  /** Use {@link MetricsRegistry.counter}. */
  constructor(def: MetricDef) {
    this.#name = def.name;
    this.#names = def.labelNames ?? [];
  }

  /** Adds `by` (default 1; negative or non-finite amounts are refused) to the series of `labels`. */
  inc(labels: MetricLabels = {}, by = 1): void {
    if (!Number.isFinite(by) || by < 0) {
      throw new MetricsError('metric_value', `${this.#name}: a counter only grows (got ${by})`);
    }
    const key = keyOf(this.#names, labels, this.#name);
    const s = this.#series.get(key);
    if (s === undefined) this.#series.set(key, { labels: { ...labels }, value: by });
    else s.value += by;
  }

  /** The value of one series (0 when it was never incremented). */
  get(labels: MetricLabels = {}): number {
    return this.#series.get(keyOf(this.#names, labels, this.#name))?.value ?? 0;
  }

  /** Every series. */
  samples(): MetricSample[] {
    return [...this.#series.values()].map((s) => ({ labels: s.labels, value: s.value }));
  }
}

/** A distribution of observed values (latencies in seconds), per label set. */
export class Histogram {
  readonly #names: readonly string[];
  readonly #name: string;
  /** The bucket upper bounds, ascending, without `+Inf`. */
  readonly buckets: readonly number[];
  readonly #series = new Map<
    string,
    { labels: MetricLabels; counts: number[]; sum: number; count: number }
  >();

  /** Use {@link MetricsRegistry.histogram}. */
  constructor(def: HistogramDef) {
    this.#name = def.name;
    this.#names = def.labelNames ?? [];
    const b = def.buckets;
    if (b.length === 0 || b.some((v, i) => !Number.isFinite(v) || (i > 0 && v <= (b[i - 1] ?? v)))) {
      throw new MetricsError('metric_buckets', `${def.name}: buckets must be finite and strictly ascending`);
    }
    this.buckets = [...b];
  }

  /** Records one value (non-finite values are refused). */
  observe(labels: MetricLabels, value: number): void {
    if (!Number.isFinite(value)) throw new MetricsError('metric_value', `${this.#name}: observed ${value}`);
    const key = keyOf(this.#names, labels, this.#name);
    let s = this.#series.get(key);
    if (s === undefined) {
      s = { labels: { ...labels }, counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.#series.set(key, s);
    }
    const counts = s.counts;
    this.buckets.forEach((le, i) => {
      if (value <= le) counts[i] = (counts[i] ?? 0) + 1;
    });
    s.sum += value;
    s.count++;
  }

  /** Starts a timer; calling the result observes the seconds elapsed with `labels` (given now or then). */
  startTimer(labels: MetricLabels = {}): (endLabels?: MetricLabels) => number {
    const t0 = process.hrtime.bigint();
    return (endLabels) => {
      const secs = Number(process.hrtime.bigint() - t0) / 1e9;
      this.observe({ ...labels, ...endLabels }, secs);
      return secs;
    };
  }

  /** The series as exposition samples: `_bucket` (cumulative, with `le`), `_sum` and `_count`. */
  samples(): { suffix: string; labels: MetricLabels; value: number }[] {
    const out: { suffix: string; labels: MetricLabels; value: number }[] = [];
    for (const s of this.#series.values()) {
      this.buckets.forEach((le, i) => {
        out.push({ suffix: '_bucket', labels: { ...s.labels, le: String(le) }, value: s.counts[i] ?? 0 });
      });
      out.push({ suffix: '_bucket', labels: { ...s.labels, le: '+Inf' }, value: s.count });
      out.push({ suffix: '_sum', labels: s.labels, value: s.sum });
      out.push({ suffix: '_count', labels: s.labels, value: s.count });
    }
    return out;
  }
}

type Entry =
  | { readonly kind: 'counter'; readonly def: MetricDef; readonly metric: Counter }
  | { readonly kind: 'histogram'; readonly def: MetricDef; readonly metric: Histogram }
  | {
      readonly kind: 'gauge' | 'counter';
      readonly def: MetricDef;
      readonly collect: () => Iterable<MetricSample>;
    };

/**
 * A set of metrics and their text exposition (Prometheus format 0.0.4): counters and histograms
 * updated by hooks, gauges (and read-only counters) computed at scrape time. A collector that throws
 * does not break the scrape: its metric is left out and `heddle_metrics_collect_errors_total` counts it.
 */
export class MetricsRegistry {
  readonly #entries = new Map<string, Entry>();
  readonly #collectErrors: Counter;

  constructor() {
    this.#collectErrors = this.counter({
      name: 'heddle_metrics_collect_errors_total',
      help: 'Scrapes in which computing a metric failed, by metric.',
      labelNames: ['metric'],
    });
  }

  #add(entry: Entry): void {
    const { name, labelNames = [] } = entry.def;
    if (!NAME_RE.test(name)) throw new MetricsError('metric_name', `invalid metric name ${name}`);
    if (this.#entries.has(name)) throw new MetricsError('metric_name', `${name} is declared twice`);
    for (const l of labelNames) {
      if (!LABEL_RE.test(l) || l.startsWith('__') || (entry.kind === 'histogram' && l === 'le')) {
        throw new MetricsError('metric_labels', `${name}: invalid label name ${l}`);
      }
    }
    this.#entries.set(name, entry);
  }

  /** Declares a counter updated by hooks. */
  counter(def: MetricDef): Counter {
    const metric = new Counter(def);
    this.#add({ kind: 'counter', def, metric });
    return metric;
  }

  /** Declares a counter read at scrape time. */
  collectedCounter(def: CollectedCounterDef): void {
    this.#add({ kind: 'counter', def, collect: def.collect });
  }

  /** Declares a gauge computed at scrape time. */
  gauge(def: CollectedGaugeDef): void {
    this.#add({ kind: 'gauge', def, collect: def.collect });
  }

  /** Declares a histogram. */
  histogram(def: HistogramDef): Histogram {
    const metric = new Histogram(def);
    this.#add({ kind: 'histogram', def, metric });
    return metric;
  }

  /** The text exposition of every metric, in declaration order (collectors run now). */
  render(): string {
    const families: ExpositionFamily[] = [];
    for (const [name, e] of this.#entries) {
      const base = { name, help: e.def.help, type: e.kind };
      if ('metric' in e) {
        families.push({
          ...base,
          samples:
            e.kind === 'histogram'
              ? e.metric.samples().map((s) => ({ name: name + s.suffix, labels: s.labels, value: s.value }))
              : e.metric.samples().map((s) => ({ name, labels: s.labels, value: s.value })),
        });
        continue;
      }
      try {
        const names = e.def.labelNames ?? [];
        const samples = [...e.collect()].map((s) => {
          keyOf(names, s.labels, name);
          return { name, labels: s.labels, value: s.value };
        });
        families.push({ ...base, samples });
      } catch {
        this.#collectErrors.inc({ metric: name });
      }
    }
    // The error counter is declared first but rendered last, so that it includes this scrape's errors.
    const errors = families.findIndex((f) => f.name === 'heddle_metrics_collect_errors_total');
    if (errors >= 0) {
      const [f] = families.splice(errors, 1);
      if (f !== undefined) {
        families.push({
          ...f,
          samples: this.#collectErrors.samples().map((s) => ({ name: f.name, ...s })),
        });
      }
    }
    return renderExposition(families);
  }
}
