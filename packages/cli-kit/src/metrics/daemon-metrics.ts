import { registerProcessMetrics } from './process-metrics.js';
import { LATENCY_BUCKETS, type MetricsRegistry } from './registry.js';

/**
 * What {@link registerDaemonMetrics} reads of a daemon's audit chain: its length, and a way to be
 * told of each settled append (`@heddle/chain`'s `Chain` fits).
 */
export interface ObservedChain {
  readonly size: number;
  observe(listener: (o: { readonly ok: boolean; readonly ms: number }) => void): unknown;
}

/** Options of {@link registerDaemonMetrics}. */
export interface DaemonMetricSources {
  /** The daemon's audit chain. */
  readonly chain: ObservedChain;
  /** The help text of `heddle_chain_events` (which chain it is). */
  readonly chainHelp: string;
  /** The revocation list generation in force. */
  readonly revocationGeneration: () => number;
}

/**
 * The metrics every Heddle daemon exports alike (docs/metrics.md): chain append latency
 * (`heddle_chain_append_duration_seconds`) and failures (`heddle_chain_append_failures_total`), the
 * chain's length (`heddle_chain_events`), the revocation generation (`heddle_revocation_generation`)
 * and the process metrics.
 */
export function registerDaemonMetrics(registry: MetricsRegistry, s: DaemonMetricSources): void {
  const appendSeconds = registry.histogram({
    name: 'heddle_chain_append_duration_seconds',
    help: 'Time from a chain append to the event being durable.',
    buckets: LATENCY_BUCKETS,
  });
  const appendFailures = registry.counter({
    name: 'heddle_chain_append_failures_total',
    help: 'Chain appends refused or failed.',
  });
  registry.gauge({
    name: 'heddle_chain_events',
    help: s.chainHelp,
    collect: () => [{ labels: {}, value: s.chain.size }],
  });
  registry.gauge({
    name: 'heddle_revocation_generation',
    help: 'Generation of the revocation list in force.',
    collect: () => [{ labels: {}, value: s.revocationGeneration() }],
  });
  registerProcessMetrics(registry);
  s.chain.observe((o) => {
    if (o.ok) appendSeconds.observe({}, o.ms / 1000);
    else appendFailures.inc();
  });
}
