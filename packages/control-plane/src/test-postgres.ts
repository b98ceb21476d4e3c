// A real PostgreSQL server for tests, started from the machine's own PostgreSQL binaries: `initdb`
// into a fresh temporary directory as an unprivileged user (PostgreSQL refuses to run as root; under
// root the server runs as `nobody`), `postgres` on a free 127.0.0.1 port with its unix socket in the
// same directory, one database created. Exported as `@heddle/control-plane/testing`.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Whether a start failed only because the server killed just before still lingers: after a SIGKILL
 * of the postmaster its backends take a moment to notice and exit, and until then a new postmaster
 * refuses the data directory ("pre-existing shared memory block (key K, ID I) is still in use", or
 * "lock file ... already exists"). Such a start is tried again.
 */
export function killedServerLingers(log: string): boolean {
  return /shared memory block\b.*\bis still in use|lock file .* already exists/i.test(log);
}

/** The binaries a test server needs. */
const NEEDED = ['initdb', 'postgres', 'pg_isready', 'createdb'] as const;

/**
 * The directory holding PostgreSQL's server binaries (`initdb`, `postgres`, `pg_isready`,
 * `createdb`): the first `PATH` entry that has them all, then the newest
 * `/usr/lib/postgresql/<version>/bin`; `undefined` when none has them.
 */
export function findPostgresBin(): string | undefined {
  const has = (dir: string): boolean => NEEDED.every((b) => existsSync(join(dir, b)));
  for (const dir of (process.env.PATH ?? '').split(':')) if (dir !== '' && has(dir)) return dir;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  for (const v of versions) if (has(join(root, v, 'bin'))) return join(root, v, 'bin');
  return undefined;
}

/**
 * Why PostgreSQL tests cannot run here (`undefined` when they can). Outside CI a missing server is
 * a reason to skip (the message says how to install one); under `CI=true` it throws instead, so CI
 * never skips the PostgreSQL tests silently.
 */
export function postgresSkipReason(): string | undefined {
  if (findPostgresBin() !== undefined) return undefined;
  const msg =
    'PostgreSQL server binaries (initdb, postgres) not found on PATH or in /usr/lib/postgresql/*/bin: ' +
    'install them (Debian: apt-get install postgresql) to run the PostgreSQL tests';
  if (process.env.CI === 'true') throw new Error(`${msg} (CI=true: they are required)`);
  console.warn(`skipping: ${msg}`);
  return msg;
}

/** A running test PostgreSQL server. */
export interface TestPostgres {
  /** `postgres://heddle:<password>@127.0.0.1:<port>/<database>`. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
  readonly password: string;
  /** The data directory (also holds the unix socket and the server log `server.log`). */
  readonly dir: string;
  /** The postmaster's pid (changes on restart). */
  readonly pid: number;
  /** A URL of another database on this server (created now, empty). */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (fast shutdown: open sessions are ended) and keeps the data. */
  stopServer(): Promise<void>;
  /**
   * Restarts the server on the same port with the same data: a fast shutdown, or with
   * `{ crash: true }` a SIGKILL of the postmaster (crash recovery on start); `downMs` keeps it down
   * that long before it starts again (so that clients are sure to find it gone).
   */
  restart(options?: { readonly crash?: boolean; readonly downMs?: number }): Promise<void>;
  /** SIGKILLs the postmaster now (the data stays; `restart()` brings it back). */
  kill(): Promise<void>;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
}

/** Options of {@link startPostgres}. */
export interface StartPostgresOptions {
  /** The database to create (default `heddle_test`). */
  readonly database?: string;
  /** How long to wait for the server to accept connections (default 60 s). */
  readonly readyTimeoutMs?: number;
  /**
   * Keep PostgreSQL's durability settings (fsync, full page writes) as a production server has them
   * (default false: tests run with `fsync=off`, which only matters if the machine itself crashes).
   */
  readonly durable?: boolean;
}

/** The uid and gid of an unprivileged account to run the server as (under root only). */
function unprivileged(): { uid: number; gid: number } | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
    const f = line.split(':');
    if (f[0] === 'nobody' && f[2] !== undefined && f[3] !== undefined)
      return { uid: Number(f[2]), gid: Number(f[3]) };
  }
  throw new Error('running as root and no `nobody` account in /etc/passwd to run PostgreSQL as');
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function run(
  bin: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  user?: { uid: number; gid: number },
): void {
  try {
    execFileSync(bin, args, { env, stdio: 'pipe', ...(user ?? {}) });
  } catch (err) {
    // cast: execFileSync's error carries the child's stderr buffer
    const e = err as { stderr?: Buffer; message: string };
    throw new Error(`${bin} ${args.join(' ')} failed: ${e.stderr?.toString() ?? e.message}`);
  }
}

const live = new Set<ChildProcess>();
const dirs = new Set<string>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of live) child.kill('SIGKILL');
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
}

/**
 * Starts a fresh PostgreSQL server for a test (one per test file is the intended use: reuse it
 * across the file's tests, with a database per test if they need isolation). Throws when the
 * binaries are missing (check {@link postgresSkipReason} first) or the server does not come up.
 */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<TestPostgres> {
  const bin = findPostgresBin();
  if (bin === undefined) throw new Error('PostgreSQL server binaries not found (see postgresSkipReason())');
  installExitHook();
  const user = unprivileged();
  const dir = mkdtempSync(join(tmpdir(), 'heddle-pg-'));
  dirs.add(dir);
  const data = join(dir, 'data');
  const password = `pw-${Math.random().toString(36).slice(2)}`;
  const pwfile = join(dir, 'pwfile');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (user !== undefined) {
    chownSync(dir, user.uid, user.gid);
    chownSync(pwfile, user.uid, user.gid);
  }
  chmodSync(dir, 0o700);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    LANG: 'C',
    LC_ALL: 'C',
    PGPASSWORD: password,
  };
  run(
    join(bin, 'initdb'),
    [
      '-D',
      data,
      '-U',
      'heddle',
      '--pwfile',
      pwfile,
      '--auth-local=trust',
      '--auth-host=scram-sha-256',
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
    ],
    env,
    user,
  );
  rmSync(pwfile, { force: true });
  const database = options.database ?? 'heddle_test';
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  let port = await freePort();
  let child: ChildProcess | undefined;
  let logTail = '';
  let started = false;

  const launch = (): ChildProcess => {
    const c = spawn(
      join(bin, 'postgres'),
      [
        ...['-D', data, '-k', dir, '-h', '127.0.0.1', '-p', String(port)],
        ...(options.durable === true ? [] : ['-c', 'fsync=off', '-c', 'full_page_writes=off']),
        ...['-c', 'max_connections=200', '-c', 'shared_buffers=16MB'],
      ],
      { env, stdio: ['ignore', 'ignore', 'pipe'], ...(user ?? {}) },
    );
    c.stderr?.on('data', (chunk: Buffer) => {
      logTail = (logTail + chunk.toString()).slice(-4000);
    });
    live.add(c);
    c.once('exit', () => live.delete(c));
    return c;
  };

  const waitReady = async (c: ChildProcess): Promise<void> => {
    const deadline = Date.now() + readyTimeoutMs;
    for (;;) {
      if (c.exitCode !== null || c.signalCode !== null)
        throw new Error(`postgres exited while starting:\n${logTail}`);
      try {
        execFileSync(join(bin, 'pg_isready'), ['-q', '-h', '127.0.0.1', '-p', String(port)], {
          env,
          stdio: 'ignore',
        });
        return;
      } catch {
        if (Date.now() > deadline)
          throw new Error(`postgres not ready after ${readyTimeoutMs} ms:\n${logTail}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };

  const waitExit = (c: ChildProcess): Promise<void> =>
    c.exitCode !== null || c.signalCode !== null
      ? Promise.resolve()
      : new Promise((r) => c.once('exit', () => r()));

  const startServer = async (): Promise<void> => {
    for (let attempt = 0; ; attempt++) {
      const c = launch();
      try {
        await waitReady(c);
        child = c;
        started = true;
        return;
      } catch (err) {
        c.kill('SIGKILL');
        await waitExit(c);
        // Another process took the port between probing and binding: try a new one (first start only).
        if (attempt < 3 && !started && /could not (bind|create listen)/i.test(logTail)) {
          port = await freePort();
          continue;
        }
        // After a SIGKILL of the postmaster its backends take a moment to notice and exit.
        if (attempt < 20 && killedServerLingers(logTail)) {
          logTail = '';
          await new Promise((r) => setTimeout(r, 250));
          continue;
        }
        throw err;
      }
    }
  };

  const createDb = (name: string): string => {
    run(join(bin, 'createdb'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'heddle', name], env);
    return `postgres://heddle:${password}@127.0.0.1:${port}/${name}`;
  };

  const stopServer = async (signal: NodeJS.Signals = 'SIGINT'): Promise<void> => {
    const c = child;
    if (c === undefined) return;
    c.kill(signal);
    await waitExit(c);
    child = undefined;
  };

  await startServer();
  createDb(database);

  const handle: TestPostgres = {
    get url() {
      return `postgres://heddle:${password}@127.0.0.1:${port}/${database}`;
    },
    host: '127.0.0.1',
    get port() {
      return port;
    },
    database,
    user: 'heddle',
    password,
    dir,
    get pid() {
      return child?.pid ?? -1;
    },
    createDatabase: async (name) => createDb(name),
    stopServer: () => stopServer('SIGINT'),
    async restart(opts = {}) {
      await stopServer(opts.crash === true ? 'SIGKILL' : 'SIGINT');
      if (opts.downMs !== undefined && opts.downMs > 0) await new Promise((r) => setTimeout(r, opts.downMs));
      await startServer();
    },
    kill: () => stopServer('SIGKILL'),
    async stop() {
      await stopServer('SIGINT');
      rmSync(dir, { recursive: true, force: true });
      dirs.delete(dir);
    },
  };
  return handle;
}
