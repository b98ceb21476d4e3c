import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PlaneEvent, PlaneEvents } from '@heddle/control-plane';

/** The media type of the event stream (`GET /v1/events`). */
export const EVENT_STREAM = 'text/event-stream';

/** Default interval between two heartbeat comments of an idle stream. */
export const DEFAULT_HEARTBEAT_MS = 15_000;

/** The reconnection delay the stream asks clients for (the `retry:` field), in ms. */
export const EVENT_RETRY_MS = 2_000;

/** A client whose unsent output passes this many bytes is cut off (it reconnects and resumes). */
const MAX_BUFFERED_BYTES = 1024 * 1024;

/** One server-sent event's text: `id`, `event` and one `data` line of JSON, then a blank line. */
export function sseFrame(id: string, type: string, data: unknown): string {
  return `id: ${id}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The id a resuming client gives: the `Last-Event-ID` header, else the `last_event_id` query parameter. */
export function lastEventIdOf(req: IncomingMessage, url: URL): string | undefined {
  const header = req.headers['last-event-id'];
  const id = typeof header === 'string' && header !== '' ? header : url.searchParams.get('last_event_id');
  return id === null || id === '' ? undefined : id.slice(0, 128);
}

/**
 * Serves one event stream (docs/operator-api.md, "Event stream") on `res` until the client goes
 * away or `close` is called: the stream's opening (`stream.open`, or `stream.reset` when the
 * resumed id cannot be continued), the events after `lastEventId`, then each new event as it is
 * published, with a heartbeat comment every `heartbeatMs`. Returns the function that ends it.
 */
export function serveEventStream(
  res: ServerResponse,
  events: PlaneEvents,
  lastEventId: string | undefined,
  heartbeatMs: number,
  onEnd: () => void,
): () => void {
  res.writeHead(200, {
    'content-type': `${EVENT_STREAM}; charset=utf-8`,
    'cache-control': 'no-store',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  let ended = false;
  let unsubscribe: () => void = () => undefined;
  const write = (text: string): void => {
    if (ended || res.writableEnded || res.destroyed) return;
    res.write(text);
    if (res.writableLength > MAX_BUFFERED_BYTES) {
      res.destroy();
      end();
    }
  };
  const send = (e: PlaneEvent): void => write(sseFrame(e.id, e.type, e));
  const heartbeat = setInterval(() => write(': heartbeat\n\n'), heartbeatMs);
  heartbeat.unref();
  const end = (): void => {
    if (ended) return;
    ended = true;
    clearInterval(heartbeat);
    unsubscribe();
    if (!res.writableEnded) res.end();
    onEnd();
  };
  // All of this runs synchronously: nothing is published between the replay and the subscription.
  write(`retry: ${EVENT_RETRY_MS}\n\n`);
  const head = { epoch: events.epoch, last_id: events.lastId ?? `${events.epoch}-0` };
  if (lastEventId === undefined) {
    write(sseFrame(head.last_id, 'stream.open', head));
  } else {
    const since = events.since(lastEventId);
    if (since.complete) for (const e of since.events) send(e);
    else write(sseFrame(head.last_id, 'stream.reset', { ...head, requested: lastEventId }));
  }
  if (!ended) unsubscribe = events.subscribe(send);
  res.on('close', end);
  return end;
}
