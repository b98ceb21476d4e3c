import { type IncomingMessage, request } from 'node:http';

/** An HTTP answer: status, headers, and the body as text or as a stream of chunks. */
export interface HttpAnswer {
  readonly status: number;
  readonly ok: boolean;
  /** A response header (lower-case name), or null. */
  header(name: string): string | null;
  /** The whole body as UTF-8 text. */
  text(): Promise<string>;
  /** The body, chunk by chunk (read either this or `text`, once). */
  readonly body: AsyncIterable<Uint8Array>;
}

/** Options of {@link httpRequest}. */
export interface HttpRequestOptions {
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string | undefined;
  /** Time to wait for the answer's headers (0: no limit); then rejects with `timedOut` set. */
  readonly timeoutMs: number;
}

/**
 * A failed request: `sent` tells whether the connection had been made (the request may then have
 * reached the server and acted) or not (nothing can have happened); `timedOut` whether no answer
 * came within the timeout; `code` is the system error's code (`ECONNREFUSED`), when there is one.
 */
export class HttpFailure extends Error {
  /** The connection had been made when it failed. */
  readonly sent: boolean;
  /** No answer's headers came within the timeout. */
  readonly timedOut: boolean;
  /** The system error code, when there is one. */
  readonly code: string | undefined;

  constructor(cause: Error, sent: boolean, timedOut: boolean) {
    super(cause.message, { cause });
    this.name = 'HttpFailure';
    this.sent = sent;
    this.timedOut = timedOut;
    const code: unknown = Reflect.get(cause, 'code');
    this.code = typeof code === 'string' ? code : undefined;
  }
}

/**
 * One HTTP/1.1 request with `node:http` (loopback API calls). Rejects with an {@link HttpFailure}. Used instead of the global `fetch`,
 * whose first use loads a whole HTTP client (hundreds of milliseconds in a short-lived CLI process).
 */
export function httpRequest(url: string, options: HttpRequestOptions): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method, headers: options.headers });
    let connected = false;
    req.once('socket', (socket) => {
      if (!socket.connecting) connected = true;
      else socket.once('connect', () => (connected = true));
    });
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    if (options.timeoutMs > 0) {
      timer = setTimeout(() => {
        timedOut = true;
        req.destroy(new Error(`no answer in ${options.timeoutMs} ms`));
      }, options.timeoutMs);
    }
    req.once('error', (err) => {
      clearTimeout(timer);
      reject(new HttpFailure(err, connected, timedOut));
    });
    req.once('response', (res: IncomingMessage) => {
      clearTimeout(timer);
      const status = res.statusCode ?? 0;
      resolve({
        status,
        ok: status >= 200 && status < 300,
        header: (name) => {
          const v = res.headers[name.toLowerCase()];
          return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
        },
        text: async () => {
          const chunks: Buffer[] = [];
          for await (const c of res) chunks.push(Buffer.from(c));
          return Buffer.concat(chunks).toString('utf8');
        },
        body: res,
      });
    });
    req.end(options.body);
  });
}
