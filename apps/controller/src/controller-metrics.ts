import type { AppendObservation, Chain } from '@heddle/chain';
import {
  type Counter,
  type Histogram,
  type MetricSample,
  MetricsRegistry,
  registerDaemonMetrics,
} from '@heddle/cli-kit/metrics';
import type { ControlPlane, PlaceResult } from '@heddle/control-plane';
import type { ApiRequestEvent } from '@heddle/operator-api';

/** What the controller's metrics read at scrape time. */
export interface ControllerMetricSources {
  readonly plane: ControlPlane;
  readonly chain: Chain;
  /** The revocation list generation in force. */
  readonly revocationGeneration: () => number;
  /** Operator API requests being handled. */
  readonly apiInFlight: () => number;
}

/** Place buckets: a place fetches and verifies a package and calls a host, so up to minutes. */
const PLACE_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

function grouped<T>(items: Iterable<T>, key: (t: T) => Record<string, string>): MetricSample[] {
  const counts = new Map<string, { labels: Record<string, string>; value: number }>();
  for (const item of items) {
    const labels = key(item);
    const k = JSON.stringify(labels);
    const c = counts.get(k);
    if (c === undefined) counts.set(k, { labels, value: 1 });
    else c.value++;
  }
  return [...counts.values()];
}

/**
 * The controller daemon's metrics (docs/metrics.md): counters fed by the operator API's request hook,
 * the place handler and the chain's append observer; gauges computed from the plane's state at
 * each scrape; the process metrics.
 */
export class ControllerMetrics {
  readonly registry: MetricsRegistry = new MetricsRegistry();
  readonly #placeSeconds: Histogram;
  readonly #places: Counter;
  readonly #attempts: Counter;
  readonly #refusals: Counter;
  readonly #requests: Counter;
  readonly #apiBytes: Counter;

  constructor(s: ControllerMetricSources) {
    const r = this.registry;
    this.#placeSeconds = r.histogram({
      name: 'heddle_place_duration_seconds',
      help: 'Time to answer an operator place (POST /v1/place), by outcome.',
      labelNames: ['outcome'],
      buckets: PLACE_BUCKETS,
    });
    this.#places = r.counter({
      name: 'heddle_places_total',
      help: 'Operator places answered, by outcome (placed, dry_run, unsettled, or the error code).',
      labelNames: ['outcome'],
    });
    this.#attempts = r.counter({
      name: 'heddle_place_attempts_total',
      help: 'Dispatches of a place to one node (operator places and reschedules), by outcome.',
      labelNames: ['outcome'],
    });
    this.#refusals = r.counter({
      name: 'heddle_refusals_total',
      help: 'Place attempts refused, by source (host: its refusal code; gate: the rule that denied).',
      labelNames: ['source', 'code'],
    });
    this.#requests = r.counter({
      name: 'heddle_api_requests_total',
      help: 'Operator API requests answered, by route and error code ("" when none).',
      labelNames: ['route', 'code'],
    });
    this.#apiBytes = r.counter({
      name: 'heddle_api_bytes_total',
      help: 'Operator API body bytes, by direction (in: request bodies, out: answers).',
      labelNames: ['direction'],
    });
    r.gauge({
      name: 'heddle_api_requests_in_flight',
      help: 'Operator API requests being handled.',
      collect: () => [{ labels: {}, value: s.apiInFlight() }],
    });
    r.gauge({
      name: 'heddle_instances',
      help: 'Placements the controller knows, by state.',
      labelNames: ['state'],
      collect: () => grouped(s.plane.instances(), (p) => ({ state: p.state })),
    });
    r.gauge({
      name: 'heddle_nodes',
      help: 'Nodes, by liveness and tier.',
      labelNames: ['liveness', 'tier'],
      collect: () =>
        grouped(s.plane.nodes(), (n) => ({ liveness: n.liveness, tier: n.tier ?? n.assigned_tier })),
    });
    r.gauge({
      name: 'heddle_alerts_open',
      help: 'Alerts not yet acknowledged.',
      collect: () => [{ labels: {}, value: s.plane.alerts({ unacknowledged: true }).length }],
    });
    r.collectedCounter({
      name: 'heddle_reschedules_total',
      help: 'Replacements placed for instances whose node died (placements that replace another).',
      collect: () => [
        { labels: {}, value: s.plane.instances().filter((p) => (p.replaces ?? null) !== null).length },
      ],
    });
    r.gauge({
      name: 'heddle_reschedules_pending',
      help: 'Instances waiting to be placed again.',
      collect: () => [{ labels: {}, value: s.plane.reschedules().length }],
    });
    r.gauge({
      name: 'heddle_unsettled_decisions',
      help: 'Place decisions whose answer was lost and is not settled yet.',
      collect: () => [{ labels: {}, value: s.plane.unsettled().length }],
    });
    registerDaemonMetrics(r, {
      chain: s.chain,
      chainHelp: 'Durable events on the audit chain (its length).',
      revocationGeneration: s.revocationGeneration,
    });
    s.chain.observe((o) => this.#onAppend(o));
  }

  /** Times an operator place: `run` is the plane's place. */
  async place(run: () => Promise<PlaceResult>): Promise<PlaceResult> {
    const done = this.#placeSeconds.startTimer();
    let outcome = 'internal';
    try {
      const r = await run();
      outcome = r.status;
      return r;
    } catch (err) {
      outcome = codeOf(err);
      throw err;
    } finally {
      done({ outcome });
      this.#places.inc({ outcome });
    }
  }

  /** The operator API's request hook. */
  onRequest(e: ApiRequestEvent): void {
    this.#requests.inc({ route: e.route ?? '', code: e.code ?? '' });
    this.#apiBytes.inc({ direction: 'in' }, e.bytesIn);
    this.#apiBytes.inc({ direction: 'out' }, e.bytesOut);
  }

  /** Counts place attempts and refusals from the chained attempt records. */
  #onAppend(o: AppendObservation): void {
    if (!o.ok) return;
    const p = o.payload;
    if (o.kind !== 'workload.place' || typeof p !== 'object' || p === null) return;
    if (!('phase' in p) || p.phase !== 'attempt' || !('outcome' in p) || typeof p.outcome !== 'string')
      return;
    this.#attempts.inc({ outcome: p.outcome });
    const code = 'code' in p && typeof p.code === 'string' ? p.code : '';
    if (p.outcome === 'refused') this.#refusals.inc({ source: 'host', code });
    if (p.outcome === 'gate_denied') this.#refusals.inc({ source: 'gate', code });
  }
}

function codeOf(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string') {
    return err.code;
  }
  return 'internal';
}
