// Test helpers (not part of the app): run the controller daemon and a real `heddle-host` as child
// processes from source, read their logs, and build signed packages of the example cogs.
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { killLogged, type LoggedProcess, spawnLogged, waitForLog } from '@heddle/cli-kit/testing';
import { type KeyPair, nodeIdFromPublicKey, saveKeyFile, toHex } from '@heddle/envelope';
import { buildCogPackage } from '@heddle/package';
import { tempDir } from './test-io.js';

// Each daemon runs from source in a real child process: `node --import tsx src/bin.ts`, with a
// tsconfig whose paths map @heddle/* to the packages' sources (so no build is needed).
const here = fileURLToPath(new URL('.', import.meta.url));
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const CONTROLLER_BIN = join(here, 'bin.ts');
const CONTROLLER_TSCONFIG = join(here, '..', 'tsconfig.source.json');
// The sibling host app, run (not imported) as a real daemon.
const HOST_APP = resolve(here, '../../host');
const HOST_BIN = join(HOST_APP, 'src', 'bin.ts');
const HOST_TSCONFIG = join(HOST_APP, 'tsconfig.source.json');

/** The example WASI cog's source. */
export const WASI_COG: string = resolve(here, '../../../examples/wasi-cog');
/** The example hello-cog's source (a shell script for native, a WASI module). */
export const HELLO_COG: string = resolve(here, '../../../examples/hello-cog');

/** A daemon child process and what it logged. */
export type Daemon = LoggedProcess;

function spawnDaemon(
  bin: string,
  tsconfig: string,
  args: readonly string[],
  cwd: string,
  detached = false,
): Daemon {
  return spawnLogged(process.execPath, ['--import', tsx, bin, ...args], {
    cwd,
    env: { ...process.env, TSX_TSCONFIG_PATH: tsconfig },
    detached,
  });
}

/** Runs `heddle <args>` (the controller CLI) from source in `cwd`. */
export function spawnController(args: readonly string[], cwd: string): Daemon {
  return spawnDaemon(CONTROLLER_BIN, CONTROLLER_TSCONFIG, args, cwd);
}

/**
 * Runs `heddle-host <args>` (the sibling host app) from source in `cwd`; `detached`: it leads a process
 * group of its own (see {@link killGroup}).
 */
export function spawnHostDaemon(
  args: readonly string[],
  cwd: string,
  o: { detached?: boolean } = {},
): Daemon {
  return spawnDaemon(HOST_BIN, HOST_TSCONFIG, args, cwd, o.detached === true);
}

/**
 * Kills (SIGKILL) the process group a detached daemon leads, the daemon with every child it started
 * in it (a WASI runner; a native workload leads a group of its own and is not in it), and waits for
 * the daemon.
 */
export async function killGroup(d: Daemon): Promise<void> {
  const pid = d.proc.pid;
  if (pid === undefined || d.proc.exitCode !== null || d.proc.signalCode !== null) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // the group is gone already
  }
  await d.exited;
}

/** Waits for a log line with `msg` (fails when the daemon exits first). */
export const waitFor: typeof waitForLog = waitForLog;

/** Kills the daemon (SIGKILL) if it still runs and waits for it. */
export const kill: typeof killLogged = killLogged;

/** A host home written by hand (what `heddle-host init` writes): WASI only, tier paired, on 127.0.0.1:0. */
export function writeHostHome(
  dir: string,
  o: {
    hostKeys: KeyPair;
    controllerKey: string;
    operatorKey: string;
    /** More fields of `heddle-host.json` (they replace the ones written here). */
    extra?: Readonly<Record<string, unknown>>;
  },
): { config: string; nodeId: string } {
  mkdirSync(join(dir, 'data'), { recursive: true, mode: 0o711 });
  saveKeyFile(join(dir, 'node.key'), o.hostKeys);
  writeFileSync(
    join(dir, 'trust.json'),
    JSON.stringify({
      schema: 'heddle.trust.v1',
      keys: [{ id: 'operator', role: 'operator', public_key: o.operatorKey }],
    }),
  );
  const config = join(dir, 'heddle-host.json');
  writeFileSync(
    config,
    JSON.stringify({
      schema: 'heddle.host.v1',
      listen: { host: '127.0.0.1', port: 0 },
      key_file: 'node.key',
      controllers: [{ public_key: o.controllerKey }],
      trust_file: 'trust.json',
      revocation_list: 'revocations.json',
      routes: ['wasi'],
      tier: 'paired',
      data_dir: 'data',
      shutdown_grace_secs: 1,
      ...o.extra,
    }),
  );
  return { config, nodeId: nodeIdFromPublicKey(o.hostKeys.publicKey) };
}

let versions = 0;
/** The example WASI cog with a version of its own (a new manifest hash), built and signed by `keys`. */
export async function wasiPackage(keys: KeyPair): Promise<{ dir: string; manifestHash: string }> {
  const copy = join(tempDir(), 'src');
  cpSync(WASI_COG, copy, { recursive: true });
  const cog = JSON.parse(readFileSync(join(copy, 'cog.json'), 'utf8')) as { version: string };
  cog.version = `0.7.${++versions}`;
  writeFileSync(join(copy, 'cog.json'), JSON.stringify(cog));
  const out = join(tempDir(), 'pkg');
  const built = await buildCogPackage(copy, out, { keys: [keys] });
  return { dir: out, manifestHash: built.package.manifestHash };
}

/** The hex public key of `keys`. */
export function hexKey(keys: KeyPair): string {
  return toHex(keys.publicKey);
}
