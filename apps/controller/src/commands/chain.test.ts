import { appendFileSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openChainFile, verifyInclusion } from '@heddle/chain';
import { describe, expect, it } from 'vitest';
import { runCaptured, tempDir } from '../test-io.js';

async function makeChain(dir: string, n: number): Promise<string> {
  const path = join(dir, 'audit.chain');
  const c = await openChainFile(path);
  for (let i = 0; i < n; i++) await c.append('workload', 'workload.place', { i, node: `n${i % 3}` });
  await c.close();
  return path;
}

/** Two controllers' chains in `dir`/chains: A leads then places; B takes over from A and stops it. */
async function twoControllers(dir: string, bogus = false): Promise<void> {
  const A = 'a'.repeat(32);
  const B = 'b'.repeat(32);
  const { mkdirSync } = await import('node:fs');
  mkdirSync(join(dir, 'chains'));
  const a = await openChainFile(join(dir, 'chains', 'a.jsonl'));
  const b = await openChainFile(join(dir, 'chains', 'b.jsonl'));
  const lead = await a.append('controller', 'controller.leader', { controller: A, epoch: 1, previous: null });
  const placed = await a.append('workload.placement', 'workload.place', { controller: A, phase: 'decision' });
  await b.append('controller', 'controller.leader', {
    controller: B,
    epoch: 2,
    previous: { controller: A, epoch: 1, event: lead.hash },
    refers_to: [{ controller: A, event: bogus ? placed.hash : lead.hash, kind: 'controller.leader' }],
  });
  await b.append('workload.placement', 'workload.stop', {
    controller: B,
    phase: 'decision',
    refers_to: [{ controller: null, event: placed.hash, kind: 'workload.place' }],
  });
  await a.close();
  await b.close();
}

describe('heddle chain verify with several controllers', () => {
  it('verifies each chain of a directory and their cross-references', async () => {
    const dir = tempDir();
    await twoControllers(dir);
    const r = await runCaptured(['chain', 'verify', 'chains', '--json'], dir);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out);
    expect(out).toMatchObject({ ok: true, cross_refs: { ok: true, references: 2, resolved: 2 } });
    expect(out.chains.map((c: { ok: boolean; size: number }) => [c.ok, c.size])).toEqual([
      [true, 2],
      [true, 2],
    ]);
    const human = await runCaptured(['chain', 'verify', 'chains/a.jsonl', 'chains/b.jsonl'], dir);
    expect(human.out).toContain('cross-references: 2 of 2 resolved');
    // One chain alone: its own references to the other chain are unresolved, not failed.
    const alone = await runCaptured(['chain', 'verify', 'chains/b.jsonl', '--json'], dir);
    expect(alone.code).toBe(0);
    expect(JSON.parse(alone.out).cross_refs).toMatchObject({ ok: true, references: 2, resolved: 0 });
  });

  it('fails when a takeover names an event the other chain does not hold under that kind', async () => {
    const dir = tempDir();
    await twoControllers(dir, true);
    const r = await runCaptured(['chain', 'verify', 'chains'], dir);
    expect(r.code).toBe(1);
    expect(r.out).toContain('cross-references: 1 of 2 resolved, 1 FAILED');
    expect(r.out).toMatch(
      /FAILED .*b\.jsonl seq 0: event [0-9a-f]{64} is a workload\.place, not a controller\.leader/,
    );
    expect((await runCaptured(['chain', 'verify', 'empty'], dir)).code).toBe(3);
  });
});

describe('heddle chain verify', () => {
  it('reports a good chain with exit 0 and its head', async () => {
    const dir = tempDir();
    await makeChain(dir, 5);
    const r = await runCaptured(['chain', 'verify', 'audit.chain', '--json'], dir);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ ok: true, size: 5, failure: null });
  });

  it('reports the bytes a torn-tail repair quarantined, with exit 1, until they are moved away', async () => {
    const dir = tempDir();
    const path = await makeChain(dir, 3);
    const good = readFileSync(path).length;
    appendFileSync(path, '{"hash":"torn');
    await (await openChainFile(path)).close(); // the writer's open repairs the tail
    const r = await runCaptured(['chain', 'verify', 'audit.chain', '--json'], dir);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toMatchObject({
      ok: true,
      size: 3,
      quarantined: [{ path: `${path}.torn-${good}`, offset: good, bytes: 13 }],
    });
    const human = await runCaptured(['chain', 'verify', 'audit.chain'], dir);
    expect(human.out).toContain(`QUARANTINED: 13 bytes cut off at byte ${good}`);
    renameSync(`${path}.torn-${good}`, join(dir, 'inspected.torn'));
    expect((await runCaptured(['chain', 'verify', 'audit.chain'], dir)).code).toBe(0);
  });

  it('names the edited event, its line and reason, with exit 1', async () => {
    const dir = tempDir();
    const path = await makeChain(dir, 5);
    writeFileSync(path, readFileSync(path, 'utf8').replace('"i":2', '"i":7'));
    const r = await runCaptured(['chain', 'verify', 'audit.chain', '--json'], dir);
    expect(r.code).toBe(1);
    const res = JSON.parse(r.out) as { ok: boolean; size: number; failure: { seq: number; reason: string } };
    expect(res).toMatchObject({ ok: false, size: 2, failure: { seq: 2, reason: 'payload_hash_mismatch' } });
    const human = await runCaptured(['chain', 'verify', 'audit.chain'], dir);
    expect(human.out).toMatch(/FAILED at seq 2 \(line \d+, byte \d+\): payload_hash_mismatch/);
  });

  it('checks a signed checkpoint and detects truncation after it', async () => {
    const dir = tempDir();
    const path = await makeChain(dir, 6);
    await runCaptured(['keygen', '--out', 'node.key'], dir);
    const cp = await runCaptured(['chain', 'checkpoint', 'audit.chain', '--key', 'node.key'], dir);
    expect(cp.code).toBe(0);
    writeFileSync(join(dir, 'cp.json'), cp.out);
    const args = [
      'chain',
      'verify',
      'audit.chain',
      '--checkpoint',
      'cp.json',
      '--public-key',
      'node.key',
      '--json',
    ];
    expect((await runCaptured(args, dir)).code).toBe(0);
    const lines = readFileSync(path, 'utf8').split('\n');
    writeFileSync(path, `${lines.slice(0, -3).join('\n')}\n`); // drop the last two events
    const r = await runCaptured(args, dir);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toMatchObject({ ok: false, failure: { reason: 'truncated' } });
  });

  it('refuses a checkpoint signed by another key, and flags given alone', async () => {
    const dir = tempDir();
    await makeChain(dir, 2);
    await runCaptured(['keygen', '--out', 'a.key'], dir);
    await runCaptured(['keygen', '--out', 'b.key'], dir);
    writeFileSync(
      join(dir, 'cp.json'),
      (await runCaptured(['chain', 'checkpoint', 'audit.chain', '--key', 'a.key'], dir)).out,
    );
    const wrong = await runCaptured(
      ['chain', 'verify', 'audit.chain', '--checkpoint', 'cp.json', '--public-key', 'b.key', '--json'],
      dir,
    );
    expect(wrong.code).toBe(3);
    expect(JSON.parse(wrong.err).error.code).toMatch(/checkpoint/);
    expect((await runCaptured(['chain', 'verify', 'audit.chain', '--checkpoint', 'cp.json'], dir)).code).toBe(
      2,
    );
  });

  it('reports a torn tail without repairing the file', async () => {
    const dir = tempDir();
    const path = await makeChain(dir, 3);
    writeFileSync(path, `${readFileSync(path, 'utf8')}{"seq":3,"ts":`);
    const before = readFileSync(path);
    const r = await runCaptured(['chain', 'verify', 'audit.chain', '--json'], dir);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toMatchObject({ failure: { reason: 'torn_tail', seq: 3 } });
    expect(readFileSync(path)).toEqual(before);
  });

  it('refuses missing and foreign files with exit 3', async () => {
    const dir = tempDir();
    expect((await runCaptured(['chain', 'verify', 'nope.chain'], dir)).code).toBe(3);
    writeFileSync(join(dir, 'x.txt'), 'hello\n');
    const r = await runCaptured(['chain', 'verify', 'x.txt', '--json'], dir);
    expect(r.code).toBe(3);
    expect(JSON.parse(r.err).error.code).toBe('not_a_chain_file');
  });
});

describe('heddle chain tail and proof', () => {
  it('tails the last events, filtered by kind', async () => {
    const dir = tempDir();
    const path = await makeChain(dir, 4);
    const c = await openChainFile(path);
    await c.append('workload.host', 'workload.start', { i: 99 });
    await c.close();
    const r = await runCaptured(['chain', 'tail', 'audit.chain', '--n', '2', '--json'], dir);
    const res = JSON.parse(r.out) as { size: number; events: { seq: number }[] };
    expect(res.size).toBe(5);
    expect(res.events.map((e) => e.seq)).toEqual([3, 4]);
    const starts = JSON.parse(
      (await runCaptured(['chain', 'tail', 'audit.chain', '--kind', 'workload.start', '--json'], dir)).out,
    );
    expect(starts.events).toHaveLength(1);
    expect((await runCaptured(['chain', 'tail', 'audit.chain'], dir)).out.split('\n')).toHaveLength(5);
    expect((await runCaptured(['chain', 'tail', 'audit.chain', '--n', 'x'], dir)).code).toBe(2);
  });

  it('prints an inclusion proof that verifies on its own', async () => {
    const dir = tempDir();
    await makeChain(dir, 9);
    const r = await runCaptured(['chain', 'proof', 'audit.chain', '4', '--json'], dir);
    expect(r.code).toBe(0);
    const p = JSON.parse(r.out) as { leaf: string; seq: number; size: number; path: string[]; root: string };
    expect(p).toMatchObject({ seq: 4, size: 9, verified: true });
    expect(verifyInclusion(p.leaf, p.seq, p.size, p.path, p.root)).toBe(true);
    expect(verifyInclusion(p.leaf, 5, p.size, p.path, p.root)).toBe(false);
    expect((await runCaptured(['chain', 'proof', 'audit.chain', '9'], dir)).code).toBe(3);
    expect((await runCaptured(['chain', 'proof', 'audit.chain', '-1'], dir)).code).toBe(2);
    expect((await runCaptured(['chain', 'frob'], dir)).code).toBe(2);
  });
});
