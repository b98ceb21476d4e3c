import type { Chain } from '@heddle/chain';
import {
  type Counter,
  type Histogram,
  MetricsRegistry,
  registerDaemonMetrics,
} from '@heddle/cli-kit/metrics';
import type { HostCallEvent, HostService } from '@heddle/host-service';
import { CTL_METHODS } from '@heddle/protocol';
import type { WireServer } from '@heddle/wire';

/** What the host's metrics read at scrape time. */
export interface HostMetricSources {
  readonly service: () => HostService | undefined;
  readonly server: () => WireServer | undefined;
  readonly chain: Chain;
  /** The revocation list generation in force. */
  readonly revocationGeneration: () => number;
}

const PLACE_METHODS = new Set(['workload.place', 'workload.load']);
const KNOWN_METHODS: ReadonlySet<string> = new Set(CTL_METHODS);
const PLACE_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/**
 * The host daemon's metrics (docs/metrics.md): counters fed by the service's call hook and the
 * chain's append observer; gauges read from the service, the wire server and the chain at each
 * scrape; the process metrics.
 */
export class HostMetrics {
  readonly registry: MetricsRegistry = new MetricsRegistry();
  readonly #calls: Counter;
  readonly #places: Counter;
  readonly #placeSeconds: Histogram;
  readonly #refusals: Counter;

  constructor(s: HostMetricSources) {
    const r = this.registry;
    this.#calls = r.counter({
      name: 'heddle_host_calls_total',
      help: 'Signed requests answered, by method and outcome (ok or refused).',
      labelNames: ['method', 'outcome'],
    });
    this.#places = r.counter({
      name: 'heddle_host_places_total',
      help: 'workload.place and workload.load requests answered, by outcome (ok or the refusal code).',
      labelNames: ['method', 'outcome'],
    });
    this.#placeSeconds = r.histogram({
      name: 'heddle_host_place_duration_seconds',
      help: 'Time to answer a workload.place or workload.load (package fetch included), by outcome.',
      labelNames: ['outcome'],
      buckets: PLACE_BUCKETS,
    });
    this.#refusals = r.counter({
      name: 'heddle_host_refusals_total',
      help: 'Requests refused, by refusal code and whether the request was authenticated.',
      labelNames: ['code', 'authenticated'],
    });
    r.gauge({
      name: 'heddle_host_instances',
      help: 'Instances placed on this host, by lifecycle state.',
      labelNames: ['state'],
      collect: () =>
        [...(s.service()?.instanceLives() ?? [])].map(([state, value]) => ({ labels: { state }, value })),
    });
    r.gauge({
      name: 'heddle_host_calls_in_flight',
      help: 'Signed requests being handled.',
      collect: () => [{ labels: {}, value: s.service()?.activeCalls ?? 0 }],
    });
    r.gauge({
      name: 'heddle_wire_sessions',
      help: 'Open wire sessions (controllers connected).',
      collect: () => [{ labels: {}, value: s.server()?.sessionCount ?? 0 }],
    });
    r.gauge({
      name: 'heddle_wire_unauthenticated_connections',
      help: 'Connections that have not yet made a verified call.',
      collect: () => [{ labels: {}, value: s.server()?.unauthenticatedCount ?? 0 }],
    });
    r.collectedCounter({
      name: 'heddle_wire_bytes_total',
      help: 'Bytes over the wire listener (TLS and WebSocket framing included), by direction.',
      labelNames: ['direction'],
      collect: () => {
        const b = s.server()?.bytes ?? { read: 0, written: 0 };
        return [
          { labels: { direction: 'in' }, value: b.read },
          { labels: { direction: 'out' }, value: b.written },
        ];
      },
    });
    registerDaemonMetrics(r, {
      chain: s.chain,
      chainHelp: 'Durable events on the host chain (its length).',
      revocationGeneration: s.revocationGeneration,
    });
  }

  /** The service's call hook. */
  onCall(e: HostCallEvent): void {
    // A peer names the method: only the protocol's become labels (so a peer cannot grow the series).
    const method = KNOWN_METHODS.has(e.method) ? e.method : 'other';
    this.#calls.inc({ method, outcome: e.outcome });
    if (e.code !== null) this.#refusals.inc({ code: e.code, authenticated: String(e.authenticated) });
    if (PLACE_METHODS.has(e.method)) {
      const outcome = e.code ?? 'ok';
      this.#places.inc({ method: e.method, outcome });
      this.#placeSeconds.observe({ outcome }, e.ms / 1000);
    }
  }
}
