import { type IncomingMessage, request } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect, type TLSSocket } from 'node:tls';
import { fingerprintOfDer } from './tls-cert.js';

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
  /**
   * For an `https://` URL: the server certificate's pinned SHA-256 fingerprint (`sha256:<hex>`). The
   * TLS handshake is finished and the certificate compared before a byte of the request is sent; a
   * mismatch rejects with code `fingerprint_mismatch`. Without it, the certificate is verified
   * against the system's CAs and the host name, as usual.
   */
  readonly fingerprint?: string | undefined;
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

  /** The fingerprint the server's certificate had, when it did not match the pinned one. */
  readonly presented: string | undefined;

  constructor(cause: Error, sent: boolean, timedOut: boolean, presented?: string) {
    super(cause.message, { cause });
    this.name = 'HttpFailure';
    this.sent = sent;
    this.timedOut = timedOut;
    const code: unknown = Reflect.get(cause, 'code');
    this.code = typeof code === 'string' ? code : undefined;
    this.presented = presented;
  }
}

/**
 * One HTTP/1.1 request with `node:http` (loopback API calls). Rejects with an {@link HttpFailure}. Used instead of the global `fetch`,
 * whose first use loads a whole HTTP client (hundreds of milliseconds in a short-lived CLI process).
 */
export async function httpRequest(url: string, options: HttpRequestOptions): Promise<HttpAnswer> {
  if (url.startsWith('https:') && options.fingerprint !== undefined) {
    const socket = await pinnedSocket(new URL(url), options.fingerprint, options.timeoutMs);
    return send(url, options, socket);
  }
  return send(url, options, undefined);
}

/** A TLS connection whose server certificate has the pinned fingerprint (nothing sent on it yet). */
export function pinnedSocket(url: URL, fingerprint: string, timeoutMs: number): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const socket = connect({
      host,
      port: Number(url.port === '' ? 443 : url.port),
      // The certificate is checked by its pinned fingerprint below, not by a CA.
      rejectUnauthorized: false,
      ...(/^[\d.]+$|:/.test(host) ? {} : { servername: host }),
    });
    let timer: NodeJS.Timeout | undefined;
    if (timeoutMs > 0) {
      timer = setTimeout(() => {
        socket.destroy();
        reject(new HttpFailure(new Error(`no TLS handshake in ${timeoutMs} ms`), false, true));
      }, timeoutMs);
    }
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      const presented = fingerprintOfDer(socket.getPeerCertificate().raw);
      if (presented !== fingerprint) {
        socket.destroy();
        const err = Object.assign(
          new Error(`the server's certificate is ${presented}, not the pinned ${fingerprint}`),
          { code: 'fingerprint_mismatch' },
        );
        reject(new HttpFailure(err, false, false, presented));
        return;
      }
      resolve(socket);
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(new HttpFailure(err, false, false));
    });
  });
}

function send(url: string, options: HttpRequestOptions, socket: TLSSocket | undefined): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const base = { method: options.method, headers: options.headers };
    const req =
      socket !== undefined
        ? httpsRequest(url, { ...base, createConnection: () => socket })
        : url.startsWith('https:')
          ? httpsRequest(url, base)
          : request(url, base);
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
