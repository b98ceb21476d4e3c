// Approvals end to end: a real controller daemon (child process) whose policy defers every place, a
// real `heddle-host` daemon, and the `heddle` CLI: a deferred place is held, listed, approved (placed
// through the engine, the approver chained) or rejected, and a held place survives a SIGKILL of the
// controller.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPair, loadKeyFile } from '@heddle/envelope';
import { DEFAULT_POLICY } from '@heddle/gate';
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
import { ApprovalOutputSchema, JSON_OUTPUTS } from '../json-outputs.js';
import { runCaptured, tempDir } from '../test-io.js';

const cwd = tempDir();
const home = join(cwd, 'ctl');
let controller: Daemon;
let host: Daemon;
let hostId = '';

async function heddle(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  return runCaptured([...argv, '--home', home], cwd);
}

beforeAll(async () => {
  const init = await runCaptured(['init', '--home', home, '--api-port', '0', '--json'], cwd);
  expect(init.code, init.err).toBe(0);
  // cast: `init --json` prints one object with the controller's public key.
  const { public_key } = JSON.parse(init.out) as { public_key: string };
  // The default policy, and every place deferred to an operator (a defer wins over a permit).
  const policy = {
    ...DEFAULT_POLICY,
    name: 'places-need-an-operator',
    rules: [
      { id: 'ask', effect: 'defer', actions: ['workload.place'], reason: 'places need an operator' },
      ...DEFAULT_POLICY.rules,
    ],
  };
  writeFileSync(join(home, 'policy.json'), JSON.stringify(policy));
  const hostHome = writeHostHome(join(cwd, 'host'), {
    hostKeys: generateKeyPair(),
    controllerKey: public_key,
    operatorKey: public_key,
  });
  host = spawnHostDaemon(['run', '--config', hostHome.config], cwd);
  controller = spawnController(['controller', 'run', '--home', home], cwd);
  const [h] = await Promise.all([waitFor(host, 'listening'), waitFor(controller, 'listening')]);
  hostId = hostHome.nodeId;
  const added = await heddle('node', 'add', String(h.url), '--tier', 'paired', '--json');
  expect(added.code, added.err).toBe(0);
}, 30_000);

afterAll(async () => {
  await Promise.all([kill(controller), kill(host)]);
});

/** Places a fresh build of the WASI cog; the answer's approval id (the place must be held). */
async function heldPlace(): Promise<string> {
  const pkg = await wasiPackage(loadKeyFile(join(home, 'controller.key')));
  const r = await heddle('place', pkg.dir, '--mode', 'interval:30', '--json');
  expect(r.code, r.err).toBe(0);
  const answer = JSON_OUTPUTS.place?.parse(JSON.parse(r.out)) as { status: string; approval_id?: string };
  expect(answer.status).toBe('awaiting_approval');
  return answer.approval_id ?? '';
}

describe('approvals through the CLI and a real controller daemon', () => {
  it('a deferred place is held: place says awaiting approval, approvals ls lists it, nothing is placed', async () => {
    const pkg = await wasiPackage(loadKeyFile(join(home, 'controller.key')));
    const r = await heddle('place', pkg.dir, '--mode', 'interval:30');
    expect(r.code, r.err).toBe(0);
    const id = /awaiting approval ([0-9a-f]{32})/.exec(r.out)?.[1] ?? '';
    expect(id).not.toBe('');
    expect(r.out).toContain(`heddle approvals approve ${id}`);
    const ls = await heddle('approvals', 'ls');
    expect(ls.out).toMatch(
      new RegExp(`${id}\\s+pending\\s+wasi-cog@\\S+\\s+${hostId.slice(0, 8)}\\S*\\s+ask\\s+held`),
    );
    expect((await ApiClient.fromHome(home).instances()).length).toBe(0);
    // Approved: it proceeds through the engine and is placed; the approval names the approver.
    const ok = await heddle('approvals', 'approve', id, '--note', 'checked with the site', '--json');
    expect(ok.code, ok.err).toBe(0);
    const { approval } = ApprovalOutputSchema.parse(JSON.parse(ok.out));
    expect(approval).toMatchObject({
      state: 'approved',
      decided_by: 'operator-api-token',
      note: 'checked with the site',
      outcome: { verdict: 'permit', rule: 'ask' },
      place: { status: 'placed', node_id: hostId },
    });
    const instances = await ApiClient.fromHome(home).instances();
    expect(instances.map((i) => i.instance_id)).toEqual([approval.place?.instance_id]);
    expect(instances[0]?.state).toBe('running');
    // The chain holds the defer, the approval (with its approver and note) and the decision naming it.
    const chain = readFileSync(join(home, 'chain.jsonl'), 'utf8');
    expect(chain).toContain(approval.defer_event ?? 'none');
    expect(chain).toContain(approval.resolution_event ?? 'none');
    const resolution = chain.split('\n').find((l) => l.includes(`"hash":"${approval.resolution_event}"`));
    expect(resolution).toContain('"decided_by":"operator-api-token"');
    expect(resolution).toContain('"note":"checked with the site"');
    expect(chain).toMatch(new RegExp(`"approval_id":"${id}"`));
  });

  it('a rejection refuses the held place; a second decision is refused with exit 3', async () => {
    const id = await heldPlace();
    const r = await heddle('approvals', 'reject', id, '--note', 'not in production hours');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(`approval ${id}: rejected`);
    expect(r.out).toMatch(/place\s+wasi-cog@\S+ on [0-9a-f]{32} \(\S+\): refused/);
    const again = await heddle('approvals', 'approve', id, '--json');
    expect(again.code).toBe(3);
    expect(JSON.parse(again.err).error.code).toBe('approval_already_decided');
    expect((await ApiClient.fromHome(home).instances()).length).toBe(1);
    const shown = await heddle('approvals', 'show', 'ab'.repeat(16), '--json');
    expect([shown.code, JSON.parse(shown.err).error.code]).toEqual([3, 'approval_not_found']);
  });

  it('a held place survives a SIGKILL of the controller; approving it after the restart places it', async () => {
    const id = await heldPlace();
    await kill(controller); // SIGKILL
    controller = spawnController(['controller', 'run', '--home', home], cwd);
    await waitFor(controller, 'listening');
    const shown = await heddle('approvals', 'show', id, '--json');
    expect(ApprovalOutputSchema.parse(JSON.parse(shown.out)).approval.state).toBe('pending');
    await ApiClient.fromHome(home).refreshNodes();
    const ok = await heddle('approvals', 'approve', id);
    expect(ok.code, `${ok.out}\n${ok.err}`).toBe(0);
    expect(ok.out).toMatch(/: placed/);
    expect((await ApiClient.fromHome(home).instances()).length).toBe(2);
  }, 30_000);
});
