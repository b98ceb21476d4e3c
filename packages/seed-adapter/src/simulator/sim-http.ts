import type { IncomingMessage, ServerResponse } from 'node:http';
import { SimRefusal } from './sim-state.js';
import { MAX_BODY_BYTES } from './sim-types.js';

/**
 * Reads a request body of at most {@link MAX_BODY_BYTES} and parses it strictly as a JSON object.
 * An empty body gives `undefined`. Refuses with 413 (too large), 415 (not JSON content) or 400 (bad JSON).
 */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) {
    req.resume(); // discard, so the 413 reaches the client before the connection closes
    throw new SimRefusal(413, `request body larger than ${MAX_BODY_BYTES} bytes`);
  }
  const chunks = await new Promise<Buffer[]>((resolve, reject) => {
    const got: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer): void => {
      total += chunk.length;
      if (total > MAX_BODY_BYTES) {
        // Keep draining (discarding) rather than destroying: the 413 answer then reaches the client.
        req.off('data', onData);
        req.on('data', () => {});
        reject(new SimRefusal(413, `request body larger than ${MAX_BODY_BYTES} bytes`));
        return;
      }
      got.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(got));
    req.once('error', reject);
  });
  const size = chunks.reduce((n, c) => n + c.length, 0);
  if (size === 0) return undefined;
  const type = String(req.headers['content-type'] ?? '');
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    throw new SimRefusal(415, 'request body must be application/json');
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new SimRefusal(400, 'request body is not valid UTF-8');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new SimRefusal(400, 'request body is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SimRefusal(400, 'request body must be a JSON object');
  }
  return value;
}

/** Answers `body` as JSON with `status`. */
export function sendJson(res: ServerResponse, status: number, body: unknown, close = false): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    'access-control-allow-origin': '*',
    ...(close ? { connection: 'close' } : {}),
  });
  res.end(text);
}

/** Answers a 200 body that is not JSON (claims JSON in its content type, as a broken firmware would). */
export function sendGarbage(res: ServerResponse): void {
  const text = '<html><body>502 upstream <b>garbage</b> \u0000\u0001 {"not": json';
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** The size of a {@link sendHuge} body. */
export const HUGE_BYTES: number = 5 * 1024 * 1024;

/**
 * Answers a 5 MiB JSON-looking body, chunked without a content length (so a client must bound the bytes it
 * reads, not trust a header). Stops quietly when the client goes away.
 */
export function sendHuge(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  let sent = 0;
  res.write('{"pad":"');
  const pump = (): void => {
    while (sent < HUGE_BYTES && !res.destroyed) {
      sent += chunk.length;
      if (!res.write(chunk)) {
        res.once('drain', pump);
        return;
      }
    }
    if (!res.destroyed) res.end('"}');
  };
  res.on('error', () => {});
  pump();
}
