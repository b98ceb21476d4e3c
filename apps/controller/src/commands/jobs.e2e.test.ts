// Declarative jobs end to end: a real controller daemon (ticking every second) and two real
// `heddle-host` daemons (child processes), driven by the `heddle` CLI: plan changes nothing, run
// converges, status and history show it, a junk job file is refused naming the field, stop empties.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPair, loadKeyFile } from '@heddle/envelope';
import { ApiClient } from '@heddle/operator-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Daemon,
  kill,
  spawnController,
  spawnHostDaemon,
  waitFor,
  wasiPackage,
  writeHostHome,
} from '../daemon-fixtures.js';
import { JSON_OUTPUTS } from '../json-outputs.js';
import { runCaptured, tempDir } from '../test-io.js';

const cwd = tempDir();
const home = join(cwd, 'ctl');
let controller: Daemon;
const hosts: Daemon[] = [];

async function heddle(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  return runCaptured([...argv, '--home', home], cwd);
}

async function json<T>(command: string, ...argv: string[]): Promise<T> {
  const r = await heddle(...argv, '--json');
  expect(r.code, `${argv.join(' ')}: ${r.err}`).toBe(0);
  const schema = JSON_OUTPUTS[command];
  if (schema === undefined) throw new Error(`no --json schema for ${command}`);
  // cast: validated by the command's --json schema
  return schema.parse(JSON.parse(r.out)) as T;
}

beforeAll(async () => {
  const init = await runCaptured(['init', '--home', home, '--api-port', '0', '--json'], cwd);
  expect(init.code, init.err).toBe(0);
  const config = JSON.parse(readFileSync(join(home, 'controller.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(home, 'controller.json'), JSON.stringify({ ...config, refresh_secs: 1 }));
  // cast: `init --json` prints one object with the controller's public key.
  const { public_key } = JSON.parse(init.out) as { public_key: string };
  const homes = ['a', 'b'].map((n) =>
    writeHostHome(join(cwd, n), {
      hostKeys: generateKeyPair(),
      controllerKey: public_key,
      operatorKey: public_key,
    }),
  );
  for (const h of homes) hosts.push(spawnHostDaemon(['run', '--config', h.config], cwd));
  controller = spawnController(['controller', 'run', '--home', home], cwd);
  const listening = await Promise.all([
    ...hosts.map((h) => waitFor(h, 'listening')),
    waitFor(controller, 'listening'),
  ]);
  for (const l of listening.slice(0, 2)) {
    const r = await heddle('node', 'add', String(l.url), '--tier', 'paired');
    expect(r.code, r.err).toBe(0);
  }
}, 30_000);

afterAll(async () => {
  await Promise.all([kill(controller), ...hosts.map((h) => kill(h))]);
});

type Status = {
  job: { version: number; healthy: number; desired: number; rollout: string; instances: unknown[] };
};

describe('heddle job through real daemons', () => {
  it('plan changes nothing; run converges; status and history show it; junk is refused naming the field; stop empties', async () => {
    const dir = join(cwd, 'jobs');
    mkdirSync(dir, { recursive: true });
    const built = await wasiPackage(loadKeyFile(join(home, 'controller.key')));
    const file = join(dir, 'web.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'web',
        package: built.dir,
        mode: { type: 'interval', secs: 60 },
        count: 2,
        update: { min_healthy_time_secs: 0 },
      }),
    );
    const api = ApiClient.fromHome(home);
    const chainBefore = (await api.chainHead()).size;
    const plan = await json<{ next_version: number; changes: { action: string; node_id: string }[] }>(
      'job plan',
      'job',
      'plan',
      file,
    );
    expect(plan.next_version).toBe(1);
    expect(plan.changes.map((c) => c.action)).toEqual(['place', 'place']);
    const human = await heddle('job', 'plan', file, '--explain');
    expect(human.code, human.err).toBe(0);
    expect(human.out).toMatch(/would store version 1 \(a new job\)/);
    expect(human.out).toMatch(/nothing was done/);
    expect((await api.instances()).length).toBe(0);
    expect((await api.chainHead()).size).toBe(chainBefore);
    const unknown = await heddle('job', 'status', 'web', '--json');
    expect([unknown.code, JSON.parse(unknown.err).error.code]).toEqual([3, 'unknown_job']);

    const junk = join(dir, 'junk.json');
    writeFileSync(junk, JSON.stringify({ name: 'web', package: built.dir, update: { max_parallel: 0 } }));
    const bad = await heddle('job', 'run', junk, '--json');
    expect(bad.code).toBe(3);
    expect(JSON.parse(bad.err).error).toMatchObject({ code: 'job_invalid', field: 'update.max_parallel' });

    const run = await json<{ changed: boolean; job: { version: number } }>('job run', 'job', 'run', file);
    expect(run).toMatchObject({ changed: true, job: { version: 1 } });
    const deadline = Date.now() + 20_000;
    let status = await json<Status>('job status', 'job', 'status', 'web');
    while (status.job.rollout !== 'complete' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      status = await json<Status>('job status', 'job', 'status', 'web');
    }
    expect(status.job).toMatchObject({ version: 1, healthy: 2, desired: 2, rollout: 'complete' });
    const again = await json<{ changed: boolean }>('job run', 'job', 'run', file);
    expect(again.changed).toBe(false);
    const history = await json<{ versions: { version: number; cause: string; actor: string }[] }>(
      'job history',
      'job',
      'history',
      'web',
    );
    expect(history.versions.map((v) => [v.version, v.cause, v.actor])).toEqual([[1, 'run', 'api.token']]);
    const list = await json<{ jobs: unknown[] }>('job status', 'job', 'status');
    expect(list.jobs).toHaveLength(1);

    const stopped = await json<Status>('job stop', 'job', 'stop', 'web');
    expect(stopped.job).toMatchObject({ instances: [], desired: 0 });
    const live = (await api.instances()).filter((i) => i.state !== 'unloaded');
    expect(live).toEqual([]);
  }, 60_000);
});
