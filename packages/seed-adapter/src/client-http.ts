import { request as httpRequest, type IncomingMessage } from 'node:http';
import { isIP, connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { parseJson } from '@heddle/envelope';
import type { z } from 'zod';
import { AckSchema, SeedErrorBodySchema } from './api-schemas.js';
import { checkApiPath, type HttpMethod, type SeedTarget } from './client-target.js';
import { SeedError } from './errors.js';
import { spkiSha256 } from './spki.js';

/** One call of {@link seedRequest}. */
export interface SeedCall<T> {
  readonly method: HttpMethod;
  readonly path: string;
  readonly body?: unknown;
  readonly schema: z.ZodType<T>;
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly token: string | undefined;
  /** A 401/403 with an `{error}` body is a `seed_error` (a refusal), not `not_paired` (pair window). */
  readonly forbiddenIsRefusal?: boolean;
}

const MAX_BODY = 1024 * 1024;

/**
 * One request to the Seed: connect (and, for https, check the certificate key against the pin before
 * anything is written), send, read a bounded answer, parse and validate it. Rejects with a SeedError.
 */
export async function seedRequest<T>(t: SeedTarget, call: SeedCall<T>): Promise<T> {
  checkApiPath(call.method, call.path);
  let payload: Buffer | undefined;
  if (call.body !== undefined) {
    payload = Buffer.from(JSON.stringify(call.body) ?? 'null', 'utf8');
    if (payload.length > MAX_BODY) {
      throw new SeedError('invalid_argument', `request body exceeds ${MAX_BODY} bytes`, { field: 'body' });
    }
  }
  const what = `${call.method} ${call.path.replace(/\?.*$/, '')}`;
  const answer = await exchange(t, call, what, payload);
  return interpret(answer, call, what);
}

interface Answer {
  readonly status: number;
  readonly body: Buffer;
}

function exchange(t: SeedTarget, call: SeedCall<unknown>, what: string, payload?: Buffer): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    let settled = false;
    let socket: Socket | undefined;
    const finish = (err: SeedError | undefined, answer?: Answer): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket?.destroy();
      if (err) reject(err);
      // cast: the answer was built by this function with every field of Answer
      else resolve(answer as Answer);
    };
    const timer = setTimeout(
      () =>
        finish(new SeedError('timeout', `${what}: no answer from ${t.origin} within ${call.timeoutMs} ms`)),
      call.timeoutMs,
    );
    const onConnectError = (err: Error): void =>
      finish(new SeedError('unreachable', `${what}: cannot reach ${t.origin} (${errCode(err)})`));

    const send = (sock: Socket): void => {
      sock.off('error', onConnectError);
      const headers: Record<string, string> = {
        Host: t.hostHeader,
        Accept: 'application/json',
        Connection: 'close',
      };
      if (call.token !== undefined) headers.Authorization = `Bearer ${call.token}`;
      if (payload !== undefined) {
        headers['Content-Type'] = 'application/json';
        headers['Content-Length'] = String(payload.length);
      }
      const req = httpRequest({
        createConnection: () => sock,
        method: call.method,
        path: call.path,
        headers,
      });
      req.on('error', (err) => {
        const code = errCode(err);
        const kind = code.startsWith('HPE_') ? 'bad_answer' : 'unreachable';
        finish(new SeedError(kind, `${what}: connection to ${t.origin} failed (${code})`));
      });
      req.on('response', (res) => read(res));
      req.end(payload);
    };

    const read = (res: IncomingMessage): void => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400) {
        finish(new SeedError('bad_answer', `${what}: redirect (HTTP ${status}) refused`, { status }));
        return;
      }
      const declared = Number(res.headers['content-length'] ?? '0');
      if (declared > call.maxBytes) {
        finish(tooBig(what, call.maxBytes, status));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        if (settled) return;
        size += chunk.length;
        if (size > call.maxBytes) finish(tooBig(what, call.maxBytes, status));
        else chunks.push(chunk);
      });
      res.on('aborted', () => finish(new SeedError('bad_answer', `${what}: answer cut short`, { status })));
      res.on('error', () => finish(new SeedError('bad_answer', `${what}: answer cut short`, { status })));
      res.on('end', () => finish(undefined, { status, body: Buffer.concat(chunks, size) }));
      res.on('close', () => {
        if (!res.complete) finish(new SeedError('bad_answer', `${what}: answer cut short`, { status }));
      });
    };

    if (t.secure) {
      const sock = tlsConnect({
        host: t.host,
        port: t.port,
        ...(isIP(t.host) === 0 ? { servername: t.host } : {}),
        rejectUnauthorized: false,
        ALPNProtocols: ['http/1.1'],
        minVersion: 'TLSv1.2',
      });
      socket = sock;
      sock.once('error', onConnectError);
      sock.once('secureConnect', () => {
        if (settled) return;
        let got = 'none';
        try {
          const cert = sock.getPeerX509Certificate();
          if (cert !== undefined) got = spkiSha256(cert);
        } catch {
          got = 'unreadable';
        }
        if (got !== t.pin) {
          finish(
            new SeedError(
              'tls_pin',
              `${t.origin}: certificate key sha256 ${got} is not the pinned ${t.pin ?? 'none'}; nothing was sent`,
              { field: 'spki' },
            ),
          );
          return;
        }
        send(sock);
      });
    } else {
      const sock = netConnect({ host: t.host, port: t.port });
      socket = sock;
      sock.once('error', onConnectError);
      sock.once('connect', () => {
        if (!settled) send(sock);
      });
    }
  });
}

function interpret<T>(answer: Answer, call: SeedCall<T>, what: string): T {
  const { status } = answer;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(answer.body);
  } catch {
    throw new SeedError('bad_answer', `${what}: answer is not UTF-8 (HTTP ${status})`, { status });
  }
  let value: unknown;
  if (text.trim() !== '') {
    try {
      value = parseJson(text, { integersOnly: false, maxBytes: call.maxBytes });
    } catch (err) {
      const why = err instanceof Error ? err.message.slice(0, 200) : 'unparseable';
      const kind = status === 401 || status === 403 ? 'not_paired' : 'bad_answer';
      throw new SeedError(kind, `${what}: answer is not JSON (HTTP ${status}): ${why}`, { status });
    }
  }
  const errBody = SeedErrorBodySchema.safeParse(value);
  const seedMsg = errBody.success ? errBody.data.error : undefined;
  if ((status === 401 || status === 403) && call.forbiddenIsRefusal === true && seedMsg !== undefined) {
    throw new SeedError('seed_error', `${what}: the Seed refused (HTTP ${status}): ${seedMsg}`, { status });
  }
  if (status === 401 || status === 403) {
    const said = seedMsg === undefined ? '' : `: ${seedMsg}`;
    throw new SeedError(
      'not_paired',
      `${what}: not paired, or the token is refused (HTTP ${status})${said}`,
      {
        status,
      },
    );
  }
  if (status < 200 || status > 299) {
    if (seedMsg !== undefined) {
      throw new SeedError('seed_error', `${what}: the Seed refused (HTTP ${status}): ${seedMsg}`, { status });
    }
    throw new SeedError('bad_answer', `${what}: HTTP ${status} without an {error} body`, { status });
  }
  const parsed = call.schema.safeParse(value === undefined ? null : value);
  if (seedMsg !== undefined && (!parsed.success || call.schema === AckSchema)) {
    throw new SeedError('seed_error', `${what}: the Seed refused: ${seedMsg}`, { status });
  }
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue === undefined || issue.path.length === 0 ? '$' : issue.path.map(String).join('.');
    const msg = (issue?.message ?? 'invalid').slice(0, 200);
    throw new SeedError('bad_answer', `${what}: unexpected answer at ${field}: ${msg}`, { field, status });
  }
  return parsed.data;
}

function tooBig(what: string, max: number, status: number): SeedError {
  return new SeedError('bad_answer', `${what}: answer larger than ${max} bytes, connection cut`, { status });
}

function errCode(err: unknown): string {
  // cast: socket errors carry an errno code
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code.slice(0, 64) : 'error';
}
