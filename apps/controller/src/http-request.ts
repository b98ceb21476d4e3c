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
  readonly body?: string;
  /** Time to wait for the answer's headers (0: no limit); then rejects with an error named `TimeoutError`. */
  readonly timeoutMs: number;
}

/**
 * A failed request: `sent` tells whether the connection had been made (the request may then have
 * reached the server and acted) or not (nothing can have happened).
 */
export type HttpFailure = Error & { readonly sent: boolean };

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
    if (options.timeoutMs > 0) {
      timer = setTimeout(() => {
        const err = new Error(`no answer in ${options.timeoutMs} ms`);
        err.name = 'TimeoutError';
        req.destroy(err);
      }, options.timeoutMs);
    }
    req.once('error', (err) => {
      clearTimeout(timer);
      reject(Object.assign(err, { sent: connected }));
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
          for await (const c of res) chunks.push(c as Buffer);
          return Buffer.concat(chunks).toString('utf8');
        },
        body: res,
      });
    });
    req.end(options.body);
  });
}
