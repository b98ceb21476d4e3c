import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JsonValue } from '@heddle/envelope';
import { RevocationList } from '@heddle/package';
import { CallFailure } from '@heddle/protocol';
import { hostCogArch } from '@heddle/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BuiltPackage,
  buildPackage,
  call,
  helloSource,
  operatorKeys,
  placeBody,
  request,
  startHost,
  strangerKeys,
  type TestHost,
  tempDir,
  trail,
} from './test-fixtures.js';

const NATIVE = `${hostCogArch() ?? 'x86_64'}-native`;
type Obj = Record<string, unknown>;

let host: TestHost;
let listPath: string;

beforeAll(async () => {
  listPath = join(tempDir('heddle-hs-revoke-'), 'revocations.json');
  host = await startHost({ revocationPath: listPath });
});
afterAll(async () => {
  await host.close();
});

const ok = async (body: { [key: string]: JsonValue }, method: 'workload.revoke' = 'workload.revoke') =>
  (await call(host.url, request(method, body))).result as Obj;

async function refused(
  url: string,
  signed: ReturnType<typeof request>,
): Promise<{ code: string; reason: string }> {
  const err = await call(url, signed).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CallFailure);
  return (err as CallFailure).refusal as { code: string; reason: string };
}

async function placeListener(
  pkg: BuiltPackage,
  start = true,
): Promise<{ instance_id: string; package_id: string }> {
  const body = placeBody(pkg.manifestHash, NATIVE, { start, mode: { type: 'listener' } });
  return (await call(host.url, request('workload.place', body), { pkgDir: pkg.dir })).result as {
    instance_id: string;
    package_id: string;
  };
}

const listJson = (list: RevocationList): JsonValue => list.toJSON() as unknown as JsonValue;

describe('workload.revoke', () => {
  let gen1: RevocationList;
  let gen2: RevocationList;
  let placed: { instance_id: string; package_id: string };

  it('writes a newer list with its mark, tears down what it revokes and chains workload.revoke', async () => {
    const pkg = await buildPackage(helloSource());
    placed = await placeListener(pkg);
    const from = host.chain.size;
    gen1 = RevocationList.empty().add(
      { kind: 'package', ref: placed.package_id, revokedAtMs: Date.now(), reason: 'bad build' },
      operatorKeys,
    );
    const r = await ok({ list: listJson(gen1) });
    expect(r).toEqual({ generation: 1, applied: true, torn_down: [placed.instance_id] });
    expect(readFileSync(listPath, 'utf8')).toBe(gen1.encode());
    expect(existsSync(`${listPath}.generation`)).toBe(true);
    expect(host.holder.list.generation).toBe(1);
    const kinds = trail(host.chain, from);
    expect(kinds).toEqual(
      expect.arrayContaining([
        'workload.runtime workload.stop',
        'workload.runtime workload.unload',
        'workload.host workload.revoke',
      ]),
    );
    const revoke = host.chain.range(from).find((e) => e.kind === 'workload.revoke');
    expect(revoke?.payload).toMatchObject({
      generation: 1,
      signer: gen1.toJSON().signer,
      torn_down: [placed.instance_id],
      applied: true,
    });
    const status = (await call(host.url, request('workload.status', { include_departed: true }))).result;
    expect(status).toMatchObject({
      instances: [],
      departed: [{ instance_id: placed.instance_id, reason: 'revoked' }],
    });
  });

  it('the same list again is not applied (nothing written), a newer one is', async () => {
    expect(await ok({ list: listJson(gen1) })).toEqual({ generation: 1, applied: false, torn_down: [] });
    gen2 = gen1.add({ kind: 'artifact', ref: 'c3'.repeat(32), revokedAtMs: Date.now() }, operatorKeys);
    expect(await ok({ list: listJson(gen2) })).toEqual({ generation: 2, applied: true, torn_down: [] });
    expect(host.holder.list.generation).toBe(2);
  });

  it('refuses an older generation (governance, naming body.list.generation) and keeps the newer list', async () => {
    const r = await refused(host.url, request('workload.revoke', { list: listJson(gen1) }));
    expect(r.code).toBe('governance');
    expect(r.reason).toContain('body.list.generation');
    expect(readFileSync(listPath, 'utf8')).toBe(gen2.encode());
  });

  it("refuses a list not signed by this node's operator keys (verify), and a bad body (invalid_request)", async () => {
    const forged = gen2.add({ kind: 'package', ref: 'd4'.repeat(32), revokedAtMs: 1 }, strangerKeys);
    const r = await refused(host.url, request('workload.revoke', { list: listJson(forged) }));
    expect(r.code).toBe('verify');
    expect(r.reason).toContain('body.list.entries[2].signer: not a trusted operator key');
    const tampered = { ...(gen2.toJSON() as unknown as Obj), generation: 3 } as JsonValue;
    const t = await refused(host.url, request('workload.revoke', { list: tampered }));
    expect(t.code).toBe('verify');
    expect(t.reason).toContain('body.list.signature');
    const bad = await refused(host.url, request('workload.revoke', { list: { schema: 'nope' } }));
    expect(bad.code).toBe('invalid_request');
    expect(bad.reason).toContain('body.list');
    expect(host.holder.list.generation).toBe(2);
  });

  it('refuses a list that drops an entry the host held (append-only) and a generation jump, keeping its list', async () => {
    // Signed by a trusted operator key, one generation up, but without gen2's entries: an un-revocation.
    const dropping = RevocationList.empty()
      .add({ kind: 'artifact', ref: 'e5'.repeat(32), revokedAtMs: 1 }, operatorKeys)
      .renew(operatorKeys, { above: 2 });
    const r = await refused(host.url, request('workload.revoke', { list: listJson(dropping) }));
    expect(r.code).toBe('governance');
    expect(r.reason).toContain('body.list.entries: the list lacks package:');
    const jump = gen2.renew(operatorKeys, { above: 2 + 65_536 });
    const j = await refused(host.url, request('workload.revoke', { list: listJson(jump) }));
    expect(j.code).toBe('governance');
    expect(j.reason).toContain('jumps more than 65536');
    expect(readFileSync(listPath, 'utf8')).toBe(gen2.encode());
    // The same list dropping an entry, written to the file under the running host: fails closed.
    dropping.save(listPath);
    host.holder.reload();
    expect(host.holder.failure).toMatch(/^revocation_entries_dropped: /);
    gen2.renew(operatorKeys, { above: 3 }).save(listPath);
    host.holder.reload();
    expect(host.holder.failure).toBeUndefined();
    expect(host.holder.list.generation).toBe(4);
    gen2 = host.holder.list;
  });

  it('a host without a revocation file refuses (runtime)', async () => {
    const fixed = await startHost();
    try {
      const r = await refused(fixed.url, request('workload.revoke', { list: listJson(gen1) }));
      expect(r.code).toBe('runtime');
      expect(r.reason).toContain('this host keeps no revocation file');
    } finally {
      await fixed.close();
    }
  });
});

describe('start re-checks revocations', () => {
  it('a start of an instance revoked since its load is refused (governance) and the instance torn down', async () => {
    const pkg = await buildPackage(helloSource());
    const loaded = await placeListener(pkg, false);
    // The list changes on disk and is re-read, but nothing swept the instances yet.
    RevocationList.load(listPath, { trustedKeys: [], trustNamedSigners: true })
      .add({ kind: 'package', ref: loaded.package_id, revokedAtMs: Date.now() }, operatorKeys)
      .save(listPath);
    expect(host.holder.reload()).toBe(true);
    const from = host.chain.size;
    const r = await refused(host.url, request('workload.start', { instance_id: loaded.instance_id }));
    expect(r.code).toBe('governance');
    expect(r.reason).toContain('torn down');
    expect(trail(host.chain, from)).toEqual(expect.arrayContaining(['workload.runtime workload.unload']));
    expect(trail(host.chain, from)).not.toContain('workload.runtime workload.start');
    const status = (await call(host.url, request('workload.status', { include_departed: true }))).result as {
      instances: Obj[];
      departed: Obj[];
    };
    expect(status.instances).toEqual([]);
    expect(status.departed).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ instance_id: loaded.instance_id, reason: 'revoked' }),
      ]),
    );
  });
});
