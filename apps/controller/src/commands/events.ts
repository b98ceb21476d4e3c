import type { StreamEvent } from '@heddle/operator-api';
import { ExitCode } from '../cli-error.js';
import { intFlag } from '../command-def.js';
import { EVENTS } from '../defs/events.js';
import type { Paint } from '../format/colour.js';
import { shortId } from '../format/duration.js';
import type { CliIo } from '../io.js';
import { runOperator } from '../operator.js';

/** `heddle events [--count N] [--since ID]`. */
export function events(args: readonly string[], io: CliIo): Promise<number> {
  return runOperator(EVENTS, args, io, async (ctx) => {
    const count = intFlag('count', ctx.parsed.strings.count, 1, 1_000_000);
    const since = ctx.parsed.strings.since;
    const asJson = ctx.parsed.booleans.json === true;
    const client = ctx.client();
    const ac = new AbortController();
    const onInt = (): void => ac.abort();
    if (io.signal !== undefined) io.signal.addEventListener('abort', onInt, { once: true });
    else process.once('SIGINT', onInt);
    let printed = 0;
    try {
      await client.followEvents({
        signal: ac.signal,
        ...(since === undefined ? {} : { lastEventId: since }),
        onEvent: (e) => {
          io.out(asJson ? eventJson(e) : eventLine(e, ctx.paint));
          if (e.type.startsWith('stream.')) return;
          printed += 1;
          if (count !== undefined && printed >= count) ac.abort();
        },
        onReconnect: (reason, delayMs) => {
          if (!asJson) io.err(`heddle events: connection lost (${reason}); reconnecting in ${delayMs} ms`);
        },
      });
    } finally {
      process.off('SIGINT', onInt);
    }
    return ExitCode.ok;
  });
}

/** The event as one line of JSON: the stream's data (a plane event), or `{id,type,data}` for `stream.*`. */
function eventJson(e: StreamEvent): string {
  if (e.type.startsWith('stream.')) return JSON.stringify({ id: e.id, type: e.type, data: e.data });
  return JSON.stringify(e.data);
}

const str = (v: unknown): string =>
  typeof v === 'string' ? v : v === null || v === undefined ? '-' : String(v);

/** `value` when it is an object (its fields to read), else an empty one. */
function fields(value: unknown): Readonly<Record<string, unknown>> {
  // cast: a non-null object's own fields are read one by one and each is checked where it is used.
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

/** `HH:MM:SS  type  what` for people. */
export function eventLine(e: StreamEvent, paint: Paint): string {
  const outer = fields(e.data);
  if (e.type === 'stream.open') return paint('dim', `-- following events after ${str(outer.last_id)}`);
  if (e.type === 'stream.reset') {
    return paint(
      'yellow',
      `-- stream.reset: cannot continue after ${str(outer.requested)}; events in between are not replayed (now at ${str(outer.last_id)})`,
    );
  }
  const at = typeof outer.at_ms === 'number' ? new Date(outer.at_ms).toISOString().slice(11, 19) : '--:--:--';
  const d = fields(outer.data);
  const node = typeof d.node_id === 'string' ? ` on ${shortId(d.node_id)}` : '';
  let what: string;
  switch (e.type) {
    case 'instance.placed':
      what = `${str(d.instance_id)} ${str(d.workload)}@${str(d.version)} (${str(d.variant)})${node}`;
      break;
    case 'instance.state_changed':
      what = `${str(d.instance_id)} ${str(d.from)} -> ${str(d.to)}${node}`;
      break;
    case 'instance.rescheduled':
      what = `${str(d.replaces)} replaced by ${str(d.instance_id)}${node}`;
      break;
    case 'node.liveness_changed':
      what = `${shortId(str(d.node_id))} ${str(d.from)} -> ${str(d.to)}`;
      break;
    case 'node.joined':
      what = `${shortId(str(d.node_id))} ${str(d.url)} tier ${str(d.tier)}`;
      break;
    case 'alert.opened':
    case 'alert.closed':
      what = `${str(d.alert_id)} ${str(d.reason)} ${str(d.instance_id)}${node}`;
      break;
    default:
      what =
        typeof d.approval_id === 'string'
          ? `${d.approval_id} ${str(d.workload)}${node}`
          : str(d.instance_id ?? d.node_id);
  }
  return `${at}  ${paint(e.type.startsWith('alert.') ? 'red' : 'cyan', e.type.padEnd(22))} ${what}`;
}
