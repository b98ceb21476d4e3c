// A real PostgreSQL server for this package's leadership tests (not exported): the machine's own
// binaries, initdb into a temporary directory as an unprivileged user (`nobody` when run as root), on
// a free port of 127.0.0.1. Tests skip with a message when the binaries are missing.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A running test server. */
export interface TestPostgres {
  /** `postgres://...@127.0.0.1:PORT/postgres`. */
  readonly url: string;
  readonly port: number;
  /** Stops it (fast shutdown) and starts it again on the same port and data. */
  restart(): Promise<void>;
  /** Stops it and removes its data. */
  stop(): Promise<void>;
}

/** The directory of the PostgreSQL binaries, or undefined when none is installed. */
export function postgresBinDir(): string | undefined {
  for (const dir of ['/usr/local/bin']) if (existsSync(join(dir, 'initdb'))) return dir;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  for (const v of versions) if (existsSync(join(root, v, 'bin', 'initdb'))) return join(root, v, 'bin');
  return undefined;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a !== null ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

function ids(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const r = spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' });
  const g = spawnSync('id', ['-g', 'nobody'], { encoding: 'utf8' });
  return { uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()) };
}

/** Starts a fresh server; rejects when the binaries are missing or it does not come up. */
export async function startTestPostgres(): Promise<TestPostgres> {
  const bin = postgresBinDir();
  if (bin === undefined) throw new Error('no PostgreSQL binaries (install the postgresql package)');
  const dir = mkdtempSync(join(tmpdir(), 'heddle-pg-'));
  const data = join(dir, 'data');
  const user = ids();
  if (user !== undefined) {
    chownSync(dir, user.uid, user.gid);
    chmodSync(dir, 0o700);
  }
  const as = user === undefined ? {} : { uid: user.uid, gid: user.gid };
  const init = spawnSync(
    join(bin, 'initdb'),
    ['-D', data, '-U', 'heddle', '--auth=trust', '-E', 'UTF8', '--no-sync'],
    { ...as, encoding: 'utf8' },
  );
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const port = await freePort();
  const ctl = (args: string[]): Promise<void> =>
    new Promise((resolve, reject) => {
      const p = spawn(join(bin, 'pg_ctl'), ['-D', data, '-w', '-t', '30', ...args], {
        ...as,
        stdio: 'ignore',
      });
      p.once('error', reject);
      p.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`pg_ctl ${args[0]}: ${code}`))));
    });
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`;
  const start = () => ctl(['start', '-l', join(dir, 'log'), '-o', opts]);
  await start();
  return {
    url: `postgres://heddle@127.0.0.1:${port}/postgres`,
    port,
    restart: async () => {
      await ctl(['stop', '-m', 'fast']);
      await start();
    },
    stop: async () => {
      await ctl(['stop', '-m', 'immediate']).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

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

/** Starts a {@link CutProxy} to `pg` on a free port of 127.0.0.1. */
export async function startCutProxy(pgServer: TestPostgres): Promise<CutProxy> {
  const { connect } = await import('node:net');
  let mode: 'pass' | 'drop' | 'hang' = 'pass';
  const sockets = new Set<import('node:net').Socket>();
  const server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => {});
    if (mode === 'drop') {
      client.destroy();
      return;
    }
    const upstream = connect(pgServer.port, '127.0.0.1');
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
    url: `postgres://heddle@127.0.0.1:${port}/postgres`,
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
