// Hollow hosts against a real controller daemon: 50 simulated hosts (and 3 whose every start fails)
// in this process, enrolled through the operator API as `heddle node add --key` enrols a real host,
// placed onto, refused, and killed.
import { join } from 'node:path';
import { killLogged, tempDir } from '@heddle/cli-kit/testing';
import { generateKeyPair, nodeIdFromPublicKey } from '@heddle/envelope';
import { loadPolicyFile } from '@heddle/gate';
import { ApiClient } from '@heddle/operator-api';
import { loadTrustFile } from '@heddle/package';
import { AllowListPolicy, CallFailure, createRequest, signRequest } from '@heddle/protocol';
import { WireClient } from '@heddle/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nativeCogPackage, startController, type TestController } from './controller.test-util.js';
import { enrolHosts } from './enrol.js';
import { HollowFleet, type HollowFleetOptions } from './fleet.js';
import { seededRandom } from './run-options.js';

const DEAD_AFTER_SECS = 3;
const PLACES = 12;
let root: string;
let ctl: TestController;
let api: ApiClient;
let fleet: HollowFleet;
let failing: HollowFleet;
let pkg: string;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

beforeAll(async () => {
  root = tempDir('heddle-hollow-');
  const operator = generateKeyPair();
  ctl = await startController(root, operator, DEAD_AFTER_SECS);
  api = ApiClient.fromHome(ctl.home);
  pkg = await nativeCogPackage(root, operator);
  const shared = (dir: string, failureRate: number): HollowFleetOptions => ({
    dir,
    count: 0,
    controllers: new AllowListPolicy({ publicKeys: [Buffer.from(ctl.keys.publicKey).toString('hex')] }),
    anchors: loadTrustFile(ctl.trustFile),
    policy: loadPolicyFile(ctl.policyFile),
    tier: 'paired',
    routes: ['native'],
    runtime: { startLatencyMs: 5, failureRate, random: seededRandom(7) },
    chain: 'file',
    listenHost: '127.0.0.1',
    onError: () => {},
  });
  fleet = await HollowFleet.start({ ...shared(join(root, 'fleet'), 0), count: 50 });
  failing = await HollowFleet.start({ ...shared(join(root, 'failing'), 1), count: 3, leaseMs: 600_000 });
}, 120_000);

afterAll(async () => {
  await killLogged(ctl?.daemon);
  await fleet?.kill(fleet.hosts.map((h) => h.index));
  await failing?.kill(failing.hosts.map((h) => h.index));
});

describe('hollow hosts against a real controller', () => {
  it('enrols every host through the operator API, bound to its own key', async () => {
    const r = await enrolHosts(api, [...fleet.entries(), ...failing.entries()], { tier: 'paired' });
    expect(r.added).toBe(53);
    const nodes = await api.nodes();
    expect(nodes).toHaveLength(53);
    const ids = new Set(fleet.hosts.map((h) => h.nodeId));
    expect(ids.size).toBe(50);
    for (const n of nodes) {
      expect(n.key_source).toBe('pinned');
      expect(n.routes).toEqual(['native']);
    }
    // Every host answers the controller's health checks (a loaded machine may delay one check).
    await until('every host alive', 20_000, async () =>
      (await api.nodes()).every((n) => n.liveness === 'alive') ? true : undefined,
    );
    // The hosts given a controller lease advertise it in their signed describe.
    const leased = failing.hosts[0];
    if (leased === undefined) throw new Error('no host');
    const describe = signRequest(
      createRequest({
        method: 'workload.describe',
        requester: nodeIdFromPublicKey(ctl.keys.publicKey),
        target: leased.nodeId,
        now: Date.now(),
      }),
      ctl.keys,
    );
    const answer = await new WireClient().call(leased.url, describe);
    expect(JSON.stringify(answer.result)).toContain('"lease_ms":600000');
    // Each host answers with the key derived for its index (and the fleet directory keeps it).
    for (const h of fleet.hosts) expect(nodeIdFromPublicKey(Buffer.from(h.publicKey, 'hex'))).toBe(h.nodeId);
  }, 60_000);

  it('places onto the hosts: each instance runs in a simulated runtime', async () => {
    const avoid = failing.hosts.map((h) => h.nodeId);
    let hash: string | undefined;
    for (let i = 0; i < PLACES; i++) {
      // The first place sends the package to the controller; the others name it by its hash.
      const source = hash === undefined ? { package_dir: pkg } : { manifest_hash: hash };
      const r = await api.place({ ...source, mode: { type: 'listener' }, values: { label: `i${i}` }, avoid });
      hash = r.instance?.manifest_hash;
      expect(r.status).toBe('placed');
      expect(r.instance?.state).toBe('running');
    }
    const running = (await api.instances()).filter((p) => p.state === 'running');
    expect(running).toHaveLength(PLACES);
    expect(fleet.stats().instances).toBe(PLACES);
    for (const p of running) {
      const host = fleet.hosts.find((h) => h.nodeId === p.node_id);
      expect(host?.instanceIds()).toContain(p.instance_id);
    }
  }, 60_000);

  it('refuses a request for another node (not_for_me) and an expired one (expired)', async () => {
    const [a, b] = fleet.hosts;
    if (a === undefined || b === undefined) throw new Error('no hosts');
    const requester = nodeIdFromPublicKey(ctl.keys.publicKey);
    const client = new WireClient();
    const send = async (target: string, now: number, ttlMs: number): Promise<CallFailure> => {
      const signed = signRequest(
        createRequest({ method: 'workload.status', requester, target, now, ttlMs }),
        ctl.keys,
      );
      // The client's clock is the request's own time: an answer to an expired request is otherwise
      // dropped by the client before its refusal can be read.
      const err = await client.call(a.url, signed, { now: () => now }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(CallFailure);
      // cast: checked just above
      return err as CallFailure;
    };
    const wrong = await send(b.nodeId, Date.now(), 30_000);
    expect(wrong.code).toBe('refused');
    expect(wrong.refusal?.code).toBe('not_for_me');
    const expired = await send(a.nodeId, Date.now() - 120_000, 1_000);
    expect(expired.code).toBe('refused');
    expect(expired.refusal?.code).toBe('expired');
  });

  it('takes the failure rate: a host whose every start fails refuses the place (runtime)', async () => {
    const target = failing.hosts[0];
    if (target === undefined) throw new Error('no host');
    const before = failing.stats().failed_starts;
    const outcome = await api
      .place({
        package_dir: pkg,
        mode: { type: 'listener' },
        values: { label: 'doomed' },
        node: target.nodeId,
      })
      .then(
        (r) => ({ attempts: r.attempts, error: undefined }),
        (e: unknown) => ({ attempts: [], error: e }),
      );
    expect(failing.stats().failed_starts).toBe(before + 1);
    const text = JSON.stringify(outcome);
    expect(text).toContain('simulated start failure');
    expect(text).toContain('runtime');
    expect(failing.stats().instances).toBe(0); // a failed start unloads
  }, 30_000);

  it('kills hosts: the controller finds them dead and their instances run elsewhere', async () => {
    const placed = (await api.instances()).filter((p) => p.state === 'running');
    const holding = [...new Set(placed.map((p) => p.node_id))].slice(0, 5);
    const victims = fleet.hosts.filter((h) => holding.includes(h.nodeId)).map((h) => h.index);
    expect(victims.length).toBe(holding.length);
    const moved = placed.filter((p) => holding.includes(p.node_id)).map((p) => p.instance_id);
    const t0 = Date.now();
    await fleet.kill(victims);
    expect(fleet.stats().alive).toBe(50 - victims.length);
    await until('the victims dead', (DEAD_AFTER_SECS + 10) * 1000, async () => {
      const nodes = await api.nodes();
      return holding.every((id) => nodes.find((n) => n.node_id === id)?.liveness === 'dead')
        ? true
        : undefined;
    });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(DEAD_AFTER_SECS * 1000);
    // Each moved instance is replaced by one running on a live hollow host, which holds it.
    const replacements = await until('the instances rescheduled', 30_000, async () => {
      const all = await api.instances();
      const out = moved.map((id) => all.find((p) => p.replaces === id && p.state === 'running'));
      return out.every((p) => p !== undefined) ? out : undefined;
    });
    for (const p of replacements) {
      const h = fleet.hosts.find((x) => x.nodeId === p?.node_id);
      expect(h?.dead).toBe(false);
      expect(h?.instanceIds()).toContain(p?.instance_id);
    }
  }, 60_000);

  it('revives killed hosts on their port with their key; the controller finds them alive again', async () => {
    const dead = fleet.hosts.filter((h) => h.dead);
    const before = dead.map((h) => [h.index, h.url, h.nodeId]);
    await fleet.revive(dead.map((h) => h.index));
    const after = dead.map((h) => fleet.host(h.index)).map((h) => [h.index, h.url, h.nodeId]);
    expect(after).toEqual(before);
    await until('the revived hosts alive', 15_000, async () => {
      const nodes = await api.nodes();
      return dead.every((h) => nodes.find((n) => n.node_id === h.nodeId)?.liveness === 'alive')
        ? true
        : undefined;
    });
  }, 30_000);
});
