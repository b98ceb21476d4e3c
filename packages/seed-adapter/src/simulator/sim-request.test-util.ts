import { createHash, X509Certificate } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { TLSSocket } from 'node:tls';

/** A raw answer of the simulator. */
export interface RawAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  readonly bytes: number;
  /** The parsed body, or `undefined` when it is not JSON. */
  readonly json: unknown;
}

/** Options of {@link call}. */
export interface CallOptions {
  readonly token?: string | undefined;
  /** A JSON body (serialised, with an application/json content type). */
  readonly body?: unknown;
  /** A raw body sent as is (with `contentType`, default application/json). */
  readonly raw?: string | Buffer;
  readonly contentType?: string;
  /** The SPKI SHA-256 the HTTPS server's key must have (checked by hand on the socket). */
  readonly pin?: string;
  readonly timeoutMs?: number;
  /** Stop reading (and destroy) after this many body bytes. */
  readonly maxBytes?: number;
  /** Send the body chunked, without a content length. */
  readonly chunked?: boolean;
  /** Extra request headers. */
  readonly headers?: Readonly<Record<string, string>>;
}

function spkiOfRaw(raw: Buffer): string {
  const der = new X509Certificate(raw).publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('hex');
}

/** One request over plain node:http / node:https (no shared agent), the SPKI pin checked by hand. */
export function call(base: string, method: string, path: string, o: CallOptions = {}): Promise<RawAnswer> {
  const url = new URL(path, base);
  const body =
    o.raw !== undefined
      ? Buffer.from(o.raw)
      : o.body === undefined
        ? undefined
        : Buffer.from(JSON.stringify(o.body));
  const headers: Record<string, string | number> = { ...(o.headers ?? {}) };
  if (o.token !== undefined) headers.authorization = `Bearer ${o.token}`;
  if (body !== undefined) {
    headers['content-type'] = o.contentType ?? 'application/json';
    if (o.chunked !== true) headers['content-length'] = body.length;
  }
  const https = url.protocol === 'https:';
  return new Promise((resolve, reject) => {
    const req = (https ? httpsRequest : httpRequest)(url, {
      method,
      headers,
      agent: false,
      ...(https ? { rejectUnauthorized: false } : {}),
    });
    req.setTimeout(o.timeoutMs ?? 5_000, () => req.destroy(new Error('client timeout')));
    req.on('error', reject);
    if (https) {
      req.once('socket', (s) => {
        (s as TLSSocket).once('secureConnect', () => {
          const got = spkiOfRaw((s as TLSSocket).getPeerCertificate().raw);
          if (got !== o.pin) req.destroy(new Error(`spki mismatch: ${got}`));
        });
      });
    }
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        if (o.maxBytes !== undefined && bytes > o.maxBytes) {
          res.destroy();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: '', bytes, json: undefined });
          return;
        }
        chunks.push(c);
      });
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, bytes, json });
      });
    });
    if (body !== undefined && o.chunked === true) {
      for (let i = 0; i < body.length; i += 16 * 1024) req.write(body.subarray(i, i + 16 * 1024));
      req.end();
    } else req.end(body);
  });
}

/** Waits `ms`. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
