import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';

/** The PostgreSQL channel on which the state store announces shared writes (docs/state.md). */
export const STATE_CHANNEL = 'heddle_state';

/** What the listener's worker reports to the main thread. */
export type ListenerEvent =
  /** Notifications on the channel that arrived together (their payloads as sent, in order). */
  | { readonly type: 'notices'; readonly payloads: readonly string[] }
  /** LISTEN is in force on a fresh connection: anything sent while there was none was missed. */
  | { readonly type: 'listening' }
  /** The connection was lost (or could not be made); it is tried again after `retryMs`. */
  | { readonly type: 'lost'; readonly message: string };

/** Options of a {@link PgNotifyListener}. */
export interface PgNotifyListenerOptions {
  /** The resolved path of the `pg` package (as `SyncPg` resolves it). */
  readonly pgPath: string;
  /** The client config (`connectionString`, timeouts, `application_name`). */
  readonly config: Readonly<Record<string, unknown>>;
  /** Called on the main thread, in order, with each event of the worker. */
  readonly onEvent: (e: ListenerEvent) => void;
  /** The channel to listen on (default {@link STATE_CHANNEL}). */
  readonly channel?: string;
  /** Pause before connecting again after a loss (ms, default 500). */
  readonly retryMs?: number;
  /**
   * How often the connection is checked with a `SELECT 1` (ms, default 2000): one that does not
   * answer within the same time (a connection cut without a reset) is dropped and made again.
   */
  readonly checkMs?: number;
}

/**
 * Listens for PostgreSQL notifications on its own connection, in a worker thread (the main thread's
 * `SyncPg` blocks in `Atomics.wait`, so it cannot hold an idle connection that waits for them). The
 * worker connects, runs `LISTEN`, reports `listening`, then posts the notifications to the main
 * thread (those that arrived together as one message), where they arrive as ordinary events of its
 * loop. A connection that fails, ends, or stops
 * answering its check is reported `lost` and made again after `retryMs`, forever, until
 * {@link PgNotifyListener.close}. Neither the worker nor its port keeps the process alive.
 */
export class PgNotifyListener {
  readonly #worker: Worker;
  readonly #port: MessagePort;
  #closed = false;

  constructor(options: PgNotifyListenerOptions) {
    const { port1, port2 } = new MessageChannel();
    const channel = options.channel ?? STATE_CHANNEL;
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel))
      throw new TypeError(`channel ${channel}: not [a-z_][a-z0-9_]*`);
    this.#worker = new Worker(LISTEN_WORKER_SOURCE, {
      eval: true,
      workerData: {
        pgPath: options.pgPath,
        config: options.config,
        channel,
        retryMs: options.retryMs ?? 500,
        checkMs: options.checkMs ?? 2000,
        port: port2,
      },
      transferList: [port2],
    });
    this.#worker.unref();
    this.#worker.on('error', (err: unknown) =>
      options.onEvent({ type: 'lost', message: `listener worker failed: ${String(err)}` }),
    );
    port1.on('message', (m: unknown) => {
      if (!this.#closed && isListenerEvent(m)) options.onEvent(m);
    });
    port1.unref();
    this.#port = port1;
  }

  /** Ends the connection and the worker (idempotent); no event is reported after it. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#port.close();
    void this.#worker.terminate();
  }
}

function isListenerEvent(m: unknown): m is ListenerEvent {
  if (typeof m !== 'object' || m === null) return false;
  // cast: probing the fields of a message the worker below posted
  const e = m as { type?: unknown; payloads?: unknown; message?: unknown };
  return (
    (e.type === 'notices' && Array.isArray(e.payloads) && e.payloads.every((p) => typeof p === 'string')) ||
    e.type === 'listening' ||
    (e.type === 'lost' && typeof e.message === 'string')
  );
}

/**
 * The worker's source (CommonJS, run with `eval: true` like `SyncPg`'s; `workerData`:
 * `{ pgPath, config, channel, retryMs, checkMs, port }`).
 */
const LISTEN_WORKER_SOURCE = `
'use strict';
const { workerData } = require('node:worker_threads');
const { pgPath, config, channel, retryMs, checkMs, port } = workerData;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const post = (m) => { try { port.postMessage(m); } catch {} };
async function once(pg) {
  const c = new pg.Client(config);
  let fail;
  const failed = new Promise((r) => { fail = r; });
  c.on('error', (e) => fail(e && e.message ? e.message : String(e)));
  c.on('end', () => fail('the connection ended'));
  // Notifications arriving together (one burst of the socket) are posted as one message.
  let burst = [];
  c.on('notification', (n) => {
    if (n.channel !== channel) return;
    burst.push(typeof n.payload === 'string' ? n.payload : '');
    if (burst.length === 1) setImmediate(() => { const payloads = burst; burst = []; post({ type: 'notices', payloads }); });
  });
  try {
    await c.connect();
    await c.query('LISTEN ' + channel);
    post({ type: 'listening' });
    // Checked now and then: a connection cut without a reset would otherwise wait for TCP keepalive.
    const check = async () => {
      for (;;) {
        await sleep(checkMs);
        const answered = await Promise.race([
          c.query('SELECT 1').then(() => true, () => false),
          sleep(checkMs).then(() => false),
        ]);
        if (!answered) return 'the connection did not answer its check within ' + checkMs + ' ms';
      }
    };
    return await Promise.race([failed, check()]);
  } catch (e) {
    return e && e.message ? e.message : String(e);
  } finally {
    try { c.connection && c.connection.stream && c.connection.stream.destroy(); } catch {}
    c.end().catch(() => undefined);
  }
}
(async () => {
  let pg;
  try {
    pg = require(pgPath);
  } catch (e) {
    post({ type: 'lost', message: 'cannot load the pg client: ' + (e && e.message ? e.message : String(e)) });
    return;
  }
  for (;;) {
    const why = await once(pg);
    post({ type: 'lost', message: String(why) });
    await sleep(retryMs);
  }
})();
`;
