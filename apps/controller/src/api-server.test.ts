// The operator API in process: a real ControlPlane (SQLite store, chain file, gate) behind the real
// HTTP server on 127.0.0.1, driven with the real ApiClient and with raw requests.
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { type Chain, openChainFile } from '@heddle/chain';
import { Logger } from '@heddle/cli-kit';
import { ControlPlane } from '@heddle/control-plane';
import { SqliteStateStore } from '@heddle/control-plane/sqlite';
import { generateKeyPair, keyPairFromSecret, nodeIdFromPublicKey } from '@heddle/envelope';
import { DEFAULT_POLICY, Gate } from '@heddle/gate';
import { ApiClient, ApiError, ApiServer } from '@heddle/operator-api';
import { NO_REVOCATIONS, RevocationList, TrustAnchors } from '@heddle/package';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planeHandlers } from './api-handlers.js';
import { hexKey, wasiPackage } from './daemon-fixtures.js';
import { tempDir } from './test-io.js';

const controllerKeys = keyPairFromSecret(new Uint8Array(32).fill(0x61));
const operator = keyPairFromSecret(new Uint8Array(32).fill(0x62));
const TOKEN = 'ab'.repeat(32);
const logs: Record<string, unknown>[] = [];
let store: SqliteStateStore;
let plane: ControlPlane;
let chain: Chain;
let api: ApiServer;
let client: ApiClient;
let pkgDir: string;

beforeAll(async () => {
  const dir = tempDir();
  store = SqliteStateStore.open(join(dir, 'state.db'));
  chain = await openChainFile(join(dir, 'chain.jsonl'));
  plane = new ControlPlane({
    keys: controllerKeys,
    store,
    chain,
    gate: new Gate({ policy: DEFAULT_POLICY, recorder: chain }),
    anchors: new TrustAnchors([{ id: 'ops', role: 'operator', publicKey: hexKey(operator) }]),
    revocations: NO_REVOCATIONS,
    stateDir: join(dir, 'data'),
  });
  // cast: the logger writes one JSON object per line.
  const log = new Logger((line) => logs.push(JSON.parse(line) as Record<string, unknown>));
  api = await ApiServer.listen({ handlers: planeHandlers(plane), auth: { token: TOKEN }, log, port: 0 });
  client = new ApiClient({ url: api.url, token: TOKEN });
  pkgDir = (await wasiPackage(operator)).dir;
});

afterAll(async () => {
  await api.close(1_000);
  store.close();
  await chain.close();
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

async function raw(
  method: string,
  path: string,
  o: { body?: string | undefined; token?: string | null } = {},
): Promise<{ status: number; body: { error?: { code: string; field?: string; message: string } } }> {
  const headers: Record<string, string> = {};
  if (o.token !== null) headers.authorization = `Bearer ${o.token ?? TOKEN}`;
  const res = await fetch(`${api.url}${path}`, {
    method,
    headers,
    ...(o.body === undefined ? {} : { body: o.body }),
  });
  // cast: the test reads the error body's fields it asserts on; the rest of the shape is not checked here.
  return { status: res.status, body: (await res.json()) as never };
}

describe('operator API', () => {
  it('answers health with the token, 401 without it or with another (nothing else said)', async () => {
    expect(await client.health()).toEqual({
      controller: nodeIdFromPublicKey(controllerKeys.publicKey),
      nodes: 0,
      instances: 0,
      unsettled: 0,
      leadership: null, // a controller running alone
    });
    for (const token of [null, 'cd'.repeat(32), `${TOKEN}x`]) {
      const r = await raw('GET', '/v1/health', { token });
      expect(r.status).toBe(401);
      expect(r.body.error?.code).toBe(token === null ? 'unauthorized' : 'unknown_token');
    }
    // Unauthorised requests learn nothing about routes.
    expect((await raw('GET', '/v1/nope', { token: null })).status).toBe(401);
    expect(JSON.stringify(logs)).not.toContain(TOKEN);
  });

  it('maps unknown things to 404, a wrong method to 405', async () => {
    const e = await failure(client.instance('i-nope'));
    expect([e.status, e.code, e.field]).toEqual([404, 'unknown_instance', 'instance']);
    const n = await failure(client.node('0'.repeat(32)));
    expect([n.status, n.code]).toEqual([404, 'unknown_node']);
    expect((await failure(client.removeNode('f'.repeat(32)))).code).toBe('unknown_node');
    expect((await raw('GET', '/v1/nothing')).body.error?.code).toBe('not_found');
    const m = await raw('PUT', '/v1/nodes');
    expect([m.status, m.body.error?.code]).toEqual([405, 'method_not_allowed']);
    expect((await raw('GET', '/v1/nodes/refresh')).status).toBe(405);
  });

  it('refuses bad bodies with 400 naming the field', async () => {
    const tier = await failure(
      client.addNode('ws://127.0.0.1:1', {
        // cast: a tier outside the type, as a client not written in TypeScript could send.
        tier: 'root' as never,
      }),
    );
    expect([tier.status, tier.code, tier.field]).toEqual([400, 'invalid_input', 'tier']);
    const url = await failure(client.addNode('ftp://example', { tier: 'paired' }));
    expect([url.status, url.code, url.field]).toEqual([400, 'invalid_input', 'url']);
    const extra = await raw('POST', '/v1/nodes', { body: '{"url":"ws://a:1","tier":"paired","x":1}' });
    expect([extra.status, extra.body.error?.code, extra.body.error?.field]).toEqual([
      400,
      'invalid_input',
      'x',
    ]);
    const json = await raw('POST', '/v1/nodes', { body: '{"url":"ws://a:1","url":"ws://b:1"}' });
    expect([json.status, json.body.error?.code]).toEqual([400, 'bad_json']);
    const big = await raw('POST', '/v1/place', { body: JSON.stringify({ package_dir: 'x'.repeat(70_000) }) });
    expect([big.status, big.body.error?.code]).toEqual([400, 'too_large']);
    const rel = await failure(client.place({ package_dir: 'relative/dir' }));
    expect([rel.code, rel.field]).toEqual(['invalid_input', 'package_dir']);
    const both = await failure(client.place({}));
    expect([both.code, both.field]).toEqual(['invalid_input', 'package_dir']);
    const mode = await failure(client.place({ package_dir: pkgDir, mode: { type: 'interval', secs: 0 } }));
    expect([mode.code, mode.field]).toEqual(['invalid_input', 'mode.secs']);
    const lines = await raw('GET', '/v1/instances/i-x/logs?lines=0');
    expect([lines.status, lines.body.error?.field]).toEqual([400, 'lines']);
    const q = await raw('GET', '/v1/nodes?verbose=1');
    expect([q.status, q.body.error?.field]).toEqual([400, 'verbose']);
    const stop = await raw('POST', '/v1/instances/i-x/stop', { body: '{"grace_ms":-1}' });
    expect([stop.status, stop.body.error?.field]).toEqual([400, 'grace_ms']);
    const get = await raw('GET', '/v1/nodes', { body: undefined });
    expect(get.status).toBe(200);
  });

  it('an unplaceable order is 422 with reasons (plain and streamed); nothing is left behind', async () => {
    const e = await failure(client.place({ package_dir: pkgDir }));
    expect([e.status, e.code]).toEqual([422, 'unplaceable']);
    expect(e.reasons).toEqual({});
    const progress: unknown[] = [];
    const s = await failure(client.place({ package_dir: pkgDir }, { onProgress: (p) => progress.push(p) }));
    expect(s.code).toBe('unplaceable');
    expect(progress).toEqual([]);
    expect(await client.instances()).toEqual([]);
    // Bad input is refused before a stream starts: a plain 400.
    const bad = await failure(client.place({ package_dir: 'rel' }, { onProgress: (p) => progress.push(p) }));
    expect([bad.status, bad.code, bad.field]).toEqual([400, 'invalid_input', 'package_dir']);
    const dry = await client.place({ package_dir: pkgDir, dry_run: true });
    expect(dry.status).toBe('dry_run');
  });

  it('a package that does not verify against the anchors is 422 package_invalid', async () => {
    const stranger = await wasiPackage(generateKeyPair());
    const e = await failure(client.place({ package_dir: stranger.dir }));
    expect([e.status, e.code, e.field]).toEqual([422, 'package_invalid', 'package_dir']);
  });

  it('an unreachable node is 502 and is not added', async () => {
    const e = await failure(client.addNode('ws://127.0.0.1:1', { tier: 'paired' }));
    expect([e.status, e.code]).toEqual([502, 'unreachable']);
    expect(await client.nodes()).toEqual([]);
    expect(await client.unsettled()).toEqual([]);
    expect(await client.settle()).toEqual({ placed: [], nothing: [], pending: [] });
  });

  it('survives clients that abort mid-body or send garbage', async () => {
    const port = Number(new URL(api.url).port);
    const send = (text: string): Promise<string> =>
      new Promise((resolve) => {
        const s = connect(port, '127.0.0.1', () => s.write(text));
        let got = '';
        s.on('data', (d) => {
          got += d.toString();
        });
        s.on('close', () => resolve(got));
        s.on('error', () => resolve(got));
        setTimeout(() => s.destroy(), 200);
      });
    await send(
      `POST /v1/nodes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: 1000\r\n\r\n{"url":`,
    );
    expect(await send('NOT HTTP AT ALL\r\n\r\n')).toContain('400');
    expect((await client.health()).nodes).toBe(0);
  });

  it('a close lets the requests in flight finish (within the grace), then refuses connections', async () => {
    // A "node" that accepts and hangs up after 300 ms: the add is in flight that long.
    const slow = createServer((sock) => setTimeout(() => sock.destroy(), 300));
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    const second = await ApiServer.listen({
      handlers: planeHandlers(plane),
      auth: { token: TOKEN },
      log: new Logger(() => {}),
      port: 0,
    });
    const c2 = new ApiClient({ url: second.url, token: TOKEN });
    // cast: a server listening on a TCP port has an AddressInfo address.
    const port = (slow.address() as { port: number }).port;
    const inFlight = c2.addNode(`ws://127.0.0.1:${port}`, { tier: 'paired' }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 100));
    expect(second.inFlight).toBe(1);
    const t0 = Date.now();
    await second.close(5_000);
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(await inFlight).toMatchObject({ code: 'unreachable', status: 502 });
    expect((await failure(c2.health())).code).toBe('controller_not_running');
    slow.close();
  });

  it('a client of a home without api.json, or of a port nobody listens on, says to start the controller', async () => {
    const home = tempDir();
    const e = await failure(Promise.resolve().then(() => ApiClient.fromHome(home)));
    expect(e.code).toBe('controller_not_running');
    expect(e.message).toContain(`heddle controller run --home ${home}`);
    const dead = new ApiClient({ url: 'http://127.0.0.1:1', token: TOKEN, home });
    expect((await failure(dead.health())).code).toBe('controller_not_running');
  });
});

describe('alerts and revocations', () => {
  it('lists alerts (none yet) and refuses to acknowledge an unknown one with 404', async () => {
    expect((await raw('GET', '/v1/alerts')).body).toEqual({ alerts: [] });
    expect((await raw('GET', '/v1/alerts?unacknowledged=1')).body).toEqual({ alerts: [] });
    const r = await raw('POST', '/v1/alerts/al-0000000000000000/ack', { body: '{}' });
    expect(r.status).toBe(404);
    expect(r.body.error?.code).toBe('unknown_alert');
  });

  it('takes a signed revocation list, refuses a forged or older one, and reports each node', async () => {
    const list = RevocationList.empty().add(
      { kind: 'package', ref: 'ab'.repeat(32), revokedAtMs: Date.now(), reason: 'test' },
      operator,
    );
    const ok = await raw('POST', '/v1/revocations', { body: JSON.stringify(list.toJSON()) });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ generation: 1, revoked: [], nodes: expect.any(Array) });
    expect((await raw('GET', '/v1/revocations')).body).toMatchObject({ generation: 1 });

    const forged = RevocationList.empty().add(
      { kind: 'package', ref: 'cd'.repeat(32), revokedAtMs: Date.now() },
      keyPairFromSecret(new Uint8Array(32).fill(0x63)),
    );
    const bad = await raw('POST', '/v1/revocations', { body: JSON.stringify(forged.toJSON()) });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_input', field: expect.stringMatching(/^list/) });

    const older = await raw('POST', '/v1/revocations', {
      body: JSON.stringify(RevocationList.empty().toJSON()),
    });
    expect(older.status).toBe(400);
    expect(older.body.error).toMatchObject({ code: 'invalid_input', field: 'list.generation' });

    const junk = await raw('POST', '/v1/revocations', { body: '{"schema":"nope"}' });
    expect(junk.status).toBe(400);
    expect(junk.body.error?.code).toBe('invalid_input');
  });
});

describe('approvals and node routes: refusals on the wire', () => {
  it('lists approvals (none), validates the state filter and the note, and answers each refusal with its status', async () => {
    expect((await raw('GET', '/v1/approvals')).body).toEqual({ approvals: [] });
    expect((await raw('GET', '/v1/approvals?state=pending')).body).toEqual({ approvals: [] });
    const badState = await raw('GET', '/v1/approvals?state=maybe');
    expect([badState.status, badState.body.error?.code, badState.body.error?.field]).toEqual([
      400,
      'invalid_input',
      'state',
    ]);
    const longNote = await raw('POST', `/v1/approvals/${'ab'.repeat(16)}/approve`, {
      body: JSON.stringify({ note: 'x'.repeat(2049) }),
    });
    expect([longNote.status, longNote.body.error?.field]).toEqual([400, 'note']);
    // This plane was built without a queue: deciding is refused as such.
    const off = await raw('POST', `/v1/approvals/${'ab'.repeat(16)}/reject`, { body: '{}' });
    expect([off.status, off.body.error?.code]).toEqual([409, 'approvals_disabled']);
  });

  it('refuses bad labels naming the field, and unknown nodes with 404', async () => {
    const node = 'cd'.repeat(16);
    const bad = await raw('POST', `/v1/nodes/${node}/labels`, { body: '{"set":{"Room":"x"}}' });
    expect([bad.status, bad.body.error?.code]).toEqual([400, 'invalid_input']);
    expect(bad.body.error?.field).toMatch(/^set/);
    const unknown = await raw('POST', `/v1/nodes/${node}/cordon`, { body: '{}' });
    expect([unknown.status, unknown.body.error?.code]).toEqual([404, 'unknown_node']);
    const drain = await raw('POST', `/v1/nodes/${node}/drain`, { body: '{}' });
    expect([drain.status, drain.body.error?.code]).toEqual([404, 'unknown_node']);
  });
});
