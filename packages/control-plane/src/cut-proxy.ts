// A TCP proxy a test puts between a controller and PostgreSQL and cuts: the fault trials' "cut one
// controller off from the database" (exported by the `./testing` entry).
import { connect, createServer, type Socket } from 'node:net';

/** A TCP proxy in front of the server that a test can cut (drop every connection, refuse new ones) or hang. */
export interface CutProxy {
  /** `postgres://...` through the proxy. */
  readonly url: string;
  /** `drop`: close every connection and refuse new ones; `hang`: keep them open but pass nothing. */
  cut(how: 'drop' | 'hang'): void;
  /** Passes traffic again (new connections only; dropped ones stay dropped). */
  heal(): void;
  close(): Promise<void>;
}

/** Starts a {@link CutProxy} to the server on `target.port` on a free port of 127.0.0.1. */
export async function startCutProxy(target: {
  readonly url: string;
  readonly port: number;
}): Promise<CutProxy> {
  let mode: 'pass' | 'drop' | 'hang' = 'pass';
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => {});
    if (mode === 'drop') {
      client.destroy();
      return;
    }
    const upstream = connect(target.port, '127.0.0.1');
    sockets.add(upstream);
    upstream.on('close', () => {
      sockets.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => {});
    client.on('close', () => upstream.destroy());
    client.on('data', (d) => {
      if (mode === 'pass') upstream.write(d);
    });
    upstream.on('data', (d) => {
      if (mode === 'pass') client.write(d);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const a = server.address();
  const port = typeof a === 'object' && a !== null ? a.port : 0;
  return {
    url: target.url.replace(`:${target.port}/`, `:${port}/`),
    cut: (how) => {
      mode = how;
      if (how === 'drop') for (const s of sockets) s.destroy();
    },
    heal: () => {
      mode = 'pass';
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
