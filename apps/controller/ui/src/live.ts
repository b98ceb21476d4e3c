// The live connection to `GET /v1/events` (docs/operator-api.md, "Event stream"): the browser's
// EventSource sends the session cookie and, on reconnecting, `Last-Event-ID` by itself.

/** One plane event as the stream sends it in `data`. */
export interface LiveEvent {
  readonly id: string;
  readonly type: string;
  readonly at_ms: number;
  readonly data: Readonly<Record<string, unknown>>;
}

/** The connection's state, for the header's indicator. */
export type LiveState = 'connecting' | 'live' | 'reconnecting';

/** Every event type the plane publishes (the stream may add more; unknown ones are shown, not acted on). */
const PLANE_TYPES = [
  'instance.placed',
  'instance.state_changed',
  'instance.rescheduled',
  'instance.removed',
  'node.joined',
  'node.liveness_changed',
  'node.removed',
  'alert.opened',
  'alert.closed',
  'approval.pending',
  'approval.approved',
  'approval.rejected',
  'approval.expired',
  'approval.updated',
  'job.updated',
];

/**
 * Follows the stream: `onEvent` for each plane event, `onReset` when what is shown must be reloaded
 * (the first connection, and a `stream.reset`), `onState` as the connection comes and goes.
 */
export function follow(handlers: {
  onEvent: (e: LiveEvent) => void;
  onReset: () => void;
  onState: (s: LiveState) => void;
}): () => void {
  const source = new EventSource('/v1/events', { withCredentials: true });
  handlers.onState('connecting');
  source.onopen = () => handlers.onState('live');
  source.onerror = () =>
    handlers.onState(source.readyState === EventSource.CLOSED ? 'reconnecting' : 'connecting');
  source.addEventListener('stream.open', () => handlers.onReset());
  source.addEventListener('stream.reset', () => handlers.onReset());
  for (const type of PLANE_TYPES) {
    source.addEventListener(type, (m) => {
      try {
        // cast: the data of every plane event is the envelope {id, type, at_ms, data} (docs/operator-api.md).
        handlers.onEvent(JSON.parse((m as MessageEvent<string>).data) as LiveEvent);
      } catch {
        // A frame that is not JSON is not ours to show.
      }
    });
  }
  return () => source.close();
}

/** A one-line description of an event, for the live feed. */
export function describe(e: LiveEvent): string {
  const d = e.data;
  const s = (k: string): string => {
    const v = d[k];
    return typeof v === 'string' ? v : v === null ? '-' : String(v ?? '');
  };
  switch (e.type) {
    case 'instance.placed':
      return `${s('instance_id')} ${s('workload')}@${s('version')} placed on ${s('node_id').slice(0, 12)}`;
    case 'instance.state_changed':
      return `${s('instance_id')} ${s('from')} → ${s('to')}`;
    case 'instance.rescheduled':
      return `${s('replaces')} replaced by ${s('instance_id')}`;
    case 'node.liveness_changed':
      return `node ${s('node_id').slice(0, 12)} ${s('from')} → ${s('to')}`;
    case 'node.joined':
      return `node ${s('node_id').slice(0, 12)} joined (${s('tier')})`;
    case 'alert.opened':
    case 'alert.closed':
      return `${s('alert_id')} ${s('reason')} (${s('instance_id')})`;
    case 'job.updated':
      return `job ${s('job')} version ${s('version')} ${s('status')}, rollout ${s('rollout')}`;
    default:
      return typeof d.approval_id === 'string' ? `${s('approval_id')} ${s('workload')}` : JSON.stringify(d);
  }
}
