// Test helpers (not part of the app): run the daemon as a real child process and read its logs.
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { killLogged, type LoggedProcess, spawnLogged, waitForLog } from '@heddle/cli-kit/testing';
import type { TestController } from './test-controller.js';
import { runCaptured } from './test-io.js';

// The daemon runs from source in a real child process: `node --import tsx src/bin.ts`, with a tsconfig
// whose paths map @heddle/* to the packages' sources (so no build is needed).
const here = fileURLToPath(new URL('.', import.meta.url));
const bin = join(here, 'bin.ts');
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const env = { ...process.env, TSX_TSCONFIG_PATH: join(here, '..', 'tsconfig.source.json') };

/** A daemon child process and what it logged. */
export type Daemon = LoggedProcess;

/** Runs `heddle-host <args>` from source in `cwd`. */
export function spawnHost(args: readonly string[], cwd: string): Daemon {
  return spawnLogged(process.execPath, ['--import', tsx, bin, ...args], { cwd, env });
}

/** Waits for a log line with `msg` (fails when the daemon exits first). */
export const waitFor: typeof waitForLog = waitForLog;

/** Kills the daemon (SIGKILL) if it still runs and waits for it. */
export const kill: typeof killLogged = killLogged;

/** The daemon tests' policy: every cog may load, start, stop and unload, with egress. */
export const OPEN_POLICY = {
  version: 1,
  name: 'daemon-test',
  rules: [
    {
      id: 'all',
      effect: 'permit',
      actions: ['workload.load', 'workload.start', 'workload.stop', 'workload.unload'],
      kinds: ['cog'],
      max_network: 'egress',
    },
  ],
};

/**
 * Writes `<cwd>/heddle-host` the way an operator would: `heddle-host init` (on 127.0.0.1:0, `controller`
 * allowed, a trust file pinning `publisher`), then {@link OPEN_POLICY}, native workloads allowed (as
 * `nobody` under root, so `cwd` is opened to it) and the `extra` config fields. Returns the home.
 */
export async function writeTestHome(
  cwd: string,
  o: { controller: string; publisher: string; extra?: Record<string, unknown> },
): Promise<string> {
  chmodSync(cwd, 0o755);
  writeFileSync(
    join(cwd, 'trust.json'),
    JSON.stringify({
      schema: 'heddle.trust.v1',
      keys: [{ id: 'publisher', role: 'publisher', public_key: o.publisher }],
    }),
  );
  const init = await runCaptured(
    ['init', '--listen', '127.0.0.1:0', '--controller', o.controller, '--trust', 'trust.json'],
    cwd,
  );
  if (init.code !== 0) throw new Error(`heddle-host init failed: ${init.err}`);
  const home = join(cwd, 'heddle-host');
  const path = join(home, 'heddle-host.json');
  // cast: a test fixture reads back the config init wrote (a JSON object)
  const config = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  writeFileSync(join(home, 'policy.json'), JSON.stringify(OPEN_POLICY));
  writeFileSync(
    path,
    JSON.stringify({
      ...config,
      policy_file: 'policy.json',
      native: process.getuid?.() === 0 ? { run_as_user: 'nobody' } : { allow_host_user: true },
      ...o.extra,
    }),
  );
  return home;
}

/** Starts the daemon in `cwd`, waits until it listens, and points `ctl` at it. */
export async function startFor(ctl: TestController, cwd: string): Promise<Daemon> {
  const d = spawnHost(['run'], cwd);
  const listening = await waitFor(d, 'listening', 30_000);
  // cast: the daemon's `listening` log line carries url, node_id and public_key as strings
  ctl.url = listening.url as string;
  ctl.hostId = listening.node_id as string;
  ctl.hostKey = Buffer.from(listening.public_key as string, 'hex');
  return d;
}
