import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';

/** One request a {@link TestSeedServer} received (tests only). */
export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly authorization: string | undefined;
  readonly body: string;
}

/** A minimal HTTP(S) server for the client's tests: it records what it receives and runs `handler`. */
export interface TestSeedServer {
  readonly url: string;
  readonly port: number;
  readonly requests: SeenRequest[];
  /** TCP connections accepted (a pinned-out client still connects, but sends no request). */
  connections: number;
  close(): Promise<void>;
}

/** A handler of a {@link TestSeedServer}: gets the request (body read) and answers. */
export type TestHandler = (req: IncomingMessage, res: ServerResponse, seen: SeenRequest) => void;

/** Starts a test server on 127.0.0.1 (HTTPS with `tls`, else HTTP). For tests only. */
export async function startTestServer(
  handler: TestHandler,
  tls?: { readonly cert: string; readonly key: string },
): Promise<TestSeedServer> {
  const sockets = new Set<Socket>();
  const requests: SeenRequest[] = [];
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const seen: SeenRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        authorization: req.headers.authorization,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(seen);
      handler(req, res, seen);
    });
  };
  const server: Server = tls
    ? createHttpsServer({ cert: tls.cert, key: tls.key }, onRequest)
    : createHttpServer(onRequest);
  const state = { connections: 0 };
  server.on('connection', (s: Socket) => {
    state.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // cast: a listening TCP server has an AddressInfo address
  const port = (server.address() as AddressInfo).port;
  const result: TestSeedServer = {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    requests,
    get connections() {
      return state.connections;
    },
    set connections(n: number) {
      state.connections = n;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return result;
}

/** Answers JSON with a status (tests only). */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
