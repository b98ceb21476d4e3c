// The controller daemon as a real child process, with a real `heddle-host` daemon: health and the
// token, adding the host, placing the example WASI cog end to end through the API (streamed, with
// progress), stop and unload, a restart (after SIGKILL) that restores nodes and instances from SQLite,
// and a graceful SIGTERM.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPair, loadKeyFile } from '@heddle/envelope';
import {
  ApiClient,
  ApiError,
  ApiInfoSchema,
  type PlaceAnswer,
  type Placement,
  RevocationPushReportSchema,
} from '@heddle/operator-api';
import { RevocationList } from '@heddle/package';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Daemon,
  kill,
  spawnController,
  spawnHostDaemon,
  waitFor,
  wasiPackage,
  writeHostHome,
} from './daemon-fixtures.js';
import { runCaptured, tempDir } from './test-io.js';

const cwd = tempDir();
const home = join(cwd, 'ctl');
let controller: Daemon;
let host: Daemon;
let hostUrl = '';
let hostId = '';

async function startController(): Promise<Daemon> {
  const d = spawnController(['controller', 'run', '--home', home], cwd);
  await waitFor(d, 'listening');
  return d;
}

beforeAll(async () => {
  const init = await runCaptured(['init', '--home', home, '--api-port', '0', '--json'], cwd);
  expect(init.code, init.err).toBe(0);
  // cast: `init --json` prints one object with the controller's public key.
  const { public_key } = JSON.parse(init.out) as { public_key: string };
  const hostHome = writeHostHome(join(cwd, 'host'), {
    hostKeys: generateKeyPair(),
    controllerKey: public_key,
    operatorKey: public_key,
  });
  host = spawnHostDaemon(['run', '--config', hostHome.config], cwd);
  controller = spawnController(['controller', 'run', '--home', home], cwd);
  const [h] = await Promise.all([waitFor(host, 'listening'), waitFor(controller, 'listening')]);
  hostUrl = String(h.url);
  hostId = hostHome.nodeId;
}, 30_000);

afterAll(async () => {
  await Promise.all([kill(controller), kill(host)]);
});

describe('the controller daemon', () => {
  it('answers /v1/health with the token and 401 without; api.json is 0600', async () => {
    const info = ApiInfoSchema.parse(JSON.parse(readFileSync(join(home, 'api.json'), 'utf8')));
    expect(info.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(info.pid).toBe(controller.proc.pid);
    expect(statSync(join(home, 'api.json')).mode & 0o777).toBe(0o600);
    const client = ApiClient.fromHome(home);
    expect((await client.health()).nodes).toBe(0);
    expect((await fetch(`${info.url}/v1/health`)).status).toBe(401);
    const token = readFileSync(join(home, 'api.token'), 'utf8').trim();
    const logged = JSON.stringify(controller.lines);
    expect(logged).not.toContain(token);
    expect(logged).toContain('"path":"/v1/health"');
  });

  it('adds a real host: POST /v1/nodes, then GET /v1/nodes lists it', async () => {
    const client = ApiClient.fromHome(home);
    const added = await client.addNode(hostUrl, { tier: 'paired' });
    expect(added).toMatchObject({ node_id: hostId, url: hostUrl, tier: 'paired', key_source: 'tofu' });
    expect(added.routes).toEqual(['wasi']);
    // The host reports its software in describe; the controller stores and shows it.
    const hostVersion =
      // cast: a package.json of this repository, which has a version.
      (
        JSON.parse(readFileSync(join(import.meta.dirname, '../../host/package.json'), 'utf8')) as {
          version: string;
        }
      ).version;
    expect(added.software).toEqual({ name: 'heddle-host', version: hostVersion });
    const nodes = await client.nodes();
    expect(nodes.map((n) => n.node_id)).toEqual([hostId]);
    // Adding a known node again updates its tier (same key): idempotent.
    expect(await client.addNode(hostUrl, { tier: 'pinned' })).toMatchObject({
      node_id: hostId,
      tier: 'pinned',
    });
    expect((await client.node(hostId)).tier).toBe('pinned');
    expect((await client.addNode(hostUrl, { tier: 'paired' })).tier).toBe('paired');
    const wrongKey = await failure(client.addNode(hostUrl, { tier: 'paired', key: 'ab'.repeat(32) }));
    expect([wrongKey.status, wrongKey.code]).toEqual([409, 'key_mismatch']);
  });

  it('places the WASI cog through the API (streamed, with progress), then status, logs, stop, unload', async () => {
    const client = ApiClient.fromHome(home);
    const keys = loadKeyFile(join(home, 'controller.key'));
    const pkg = await wasiPackage(keys);
    const progress: { node_id: string; bytes: number; total: number }[] = [];
    const placed = await client.place(
      { package_dir: pkg.dir, mode: { type: 'interval', secs: 30 } },
      { onProgress: (p) => progress.push(p) },
    );
    expect(placed.status).toBe('placed');
    expect(placed.instance).toMatchObject({ node_id: hostId, workload: 'wasi-cog', state: 'running' });
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.at(-1)).toMatchObject({ node_id: hostId });
    expect(progress.at(-1)?.bytes).toBe(progress.at(-1)?.total);
    const id = placedInstance(placed).instance_id;

    const status = await client.instance(id);
    expect(status.placement.instance_id).toBe(id);
    expect(status.node).toMatchObject({ instance_id: id });
    let lines: readonly string[] = [];
    for (let i = 0; i < 40 && lines.length === 0; i++) {
      lines = (await client.logs(id, 10)).lines;
      if (lines.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(lines.join('\n')).toContain('wasi-cog');

    const stopped = await client.stop(id, 500);
    expect(stopped.placement.state).toBe('stopped');
    const unloaded = await client.unload(id);
    expect(unloaded.state).toBe('unloaded');
    expect((await client.health()).instances).toBe(0);
    const e = await failure(client.start('i-nope'));
    expect([e.status, e.code]).toEqual([404, 'unknown_instance']);
  });

  it('restores nodes and instances from SQLite after being killed', async () => {
    let client = ApiClient.fromHome(home);
    const pkg = await wasiPackage(loadKeyFile(join(home, 'controller.key')));
    const placed = await client.place({ package_dir: pkg.dir, mode: { type: 'interval', secs: 30 } });
    const id = placedInstance(placed).instance_id;
    const before = await client.instances();
    expect(before).toHaveLength(2);

    await kill(controller);
    // api.json is left behind by a killed daemon: the client says to start it.
    expect(existsSync(join(home, 'api.json'))).toBe(true);
    expect((await failure(ApiClient.fromHome(home).health())).code).toBe('controller_not_running');

    controller = await startController();
    client = ApiClient.fromHome(home);
    expect((await client.instances()).map((p) => [p.instance_id, p.state])).toEqual(
      before.map((p) => [p.instance_id, p.state]),
    );
    expect((await client.nodes()).map((n) => [n.node_id, n.tier])).toEqual([[hostId, 'paired']]);
    expect((await client.health()).instances).toBe(1);
    const status = await client.instance(id);
    expect(status.node).toMatchObject({ instance_id: id, state: 'running' });
    expect((await failure(client.unload(id))).code).toBe('refused'); // running: stop it first
    await client.stop(id, 500);
    await client.unload(id);
  });

  it('distributes a signed revocation list: the controller keeps it, the host tears the instance down, the placement is revoked', async () => {
    const client = ApiClient.fromHome(home);
    const keys = loadKeyFile(join(home, 'controller.key'));
    const placed = await client.place({
      package_dir: (await wasiPackage(keys)).dir,
      mode: { type: 'interval', secs: 30 },
    });
    const id = placedInstance(placed).instance_id;
    const list = RevocationList.empty().add(
      {
        kind: 'package',
        ref: placedInstance(placed).package_id,
        revokedAtMs: Date.now(),
        reason: 'test',
      },
      keys,
    );
    const info = ApiInfoSchema.parse(JSON.parse(readFileSync(join(home, 'api.json'), 'utf8')));
    const token = readFileSync(join(home, 'api.token'), 'utf8').trim();
    const res = await fetch(`${info.url}/v1/revocations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: JSON.stringify(list.toJSON()),
    });
    expect(res.status).toBe(200);
    const report = RevocationPushReportSchema.parse(await res.json());
    expect(report).toMatchObject({
      generation: 1,
      revoked: [id],
      nodes: [expect.objectContaining({ node_id: hostId, outcome: 'applied', torn_down: [id] })],
    });
    expect((await client.instances()).find((p) => p.instance_id === id)?.state).toBe('revoked');
    // cast: the list file the controller saved; only its generation is read.
    const held = JSON.parse(readFileSync(join(home, 'revocations.json'), 'utf8')) as { generation: number };
    expect(held.generation).toBe(1);
    const again = await fetch(`${info.url}/v1/revocations`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(await again.json()).toMatchObject({
      generation: 1,
      nodes: [expect.objectContaining({ node_id: hostId, generation: 1 })],
    });
  });

  it('shuts down gracefully on SIGTERM: exit 0, api.json removed', async () => {
    controller.proc.kill('SIGTERM');
    expect(await controller.exited).toBe(0);
    expect(existsSync(join(home, 'api.json'))).toBe(false);
    expect(controller.lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['shutting down', 'stopped']));
  });
});

async function failure(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  if (!(err instanceof ApiError)) throw new Error('not an ApiError');
  return err;
}

/** The instance a place made (fails the test when it made none). */
function placedInstance(placed: PlaceAnswer): Placement {
  if (placed.instance === null) throw new Error(`the place made no instance: ${placed.status}`);
  return placed.instance;
}
