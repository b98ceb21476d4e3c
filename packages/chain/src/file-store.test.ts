import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalJson } from '@heddle/envelope';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CHAIN_FILE_HEADER,
  ChainCorruptError,
  type ChainEvent,
  computeEventHash,
  computePayloadHash,
  FileChainStore,
  openChain,
  openChainFile,
  verifyChainFile,
} from './index.js';

const dir = mkdtempSync(join(tmpdir(), 'heddle-chain-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let counter = 0;
const fresh = (): string => join(dir, `chain-${counter++}.jsonl`);

function clock(): () => number {
  let t = 1_700_000_000_000;
  return () => t++;
}

async function write(path: string, n: number): Promise<ChainEvent[]> {
  const chain = await openChainFile(path, { clock: clock() });
  const out: ChainEvent[] = [];
  for (let i = 0; i < n; i++)
    out.push(await chain.append('workload.host', 'workload.place', { i, text: `é-${i}` }));
  await chain.close();
  return out;
}

const lines = (path: string): string[] => readFileSync(path, 'utf8').split('\n');
const offsetOfLine = (path: string, line: number): number =>
  Buffer.byteLength(
    `${lines(path)
      .slice(0, line - 1)
      .join('\n')}\n`,
  );

function editLine(path: string, line: number, edit: (record: Record<string, unknown>) => void): void {
  const all = lines(path);
  const rec = JSON.parse(all[line - 1] as string) as Record<string, unknown>;
  edit(rec);
  all[line - 1] = canonicalJson(rec);
  writeFileSync(path, all.join('\n'));
}

describe('file store', () => {
  it('writes a header and one canonical record per line; reopening preserves everything', async () => {
    const path = fresh();
    const events = await write(path, 25);
    const text = lines(path);
    expect(text[0]).toBe(CHAIN_FILE_HEADER);
    expect(text.length).toBe(27); // header, 25 records, '' after the last newline
    expect(text[1]).toBe(canonicalJson(events[0]));
    const chain = await openChainFile(path, { clock: clock() });
    expect(chain.openReport).toEqual({ tornTail: null, created: false });
    expect(chain.size).toBe(25);
    expect(chain.range(0)).toEqual(events);
    expect(chain.head).toBe(events[24]?.hash);
    expect(chain.verify().ok).toBe(true);
    const next = await chain.append('workload', 'workload.stop', {});
    expect(next.seq).toBe(25);
    expect(next.prev_hash).toBe(events[24]?.hash);
    await chain.close();
    expect((await verifyChainFile(path)).size).toBe(26);
  });

  it('verifies records with tiny payloads and the longest identifiers', async () => {
    const path = fresh();
    const chain = await openChainFile(path, { clock: () => 0 });
    const long = `a${'.b'.repeat(63)}c`; // 128 characters
    expect(long.length).toBe(128);
    const payloads: unknown[] = [null, 0, -1, '', [], {}, true, 'é', { '': '' }, [[[]]]];
    for (const p of payloads) await chain.append(long, long, p);
    for (const p of payloads) await chain.append('a', 'b', p);
    await chain.close();
    const v = await verifyChainFile(path);
    expect(v.failure).toBeNull();
    expect(v.size).toBe(20);
    const again = await openChainFile(path, { readOnly: true });
    expect(again.range(0).map((e) => e.payload)).toEqual([...payloads, ...payloads]);
    expect(again.verify().ok).toBe(true);
  });

  it('creates a missing file; refuses a missing file when read-only or create is false', async () => {
    const path = fresh();
    const chain = await openChainFile(path);
    expect(chain.openReport.created).toBe(true);
    expect(chain.size).toBe(0);
    await chain.close();
    expect(readFileSync(path, 'utf8')).toBe(`${CHAIN_FILE_HEADER}\n`);
    await expect(openChainFile(fresh(), { readOnly: true })).rejects.toMatchObject({
      code: 'chain_file_missing',
    });
    const other = fresh();
    await expect(openChainFile(other, { create: false })).rejects.toMatchObject({
      code: 'chain_file_missing',
    });
    expect(existsSync(other)).toBe(false);
  });

  it('refuses a file that is not a chain file, and leaves it alone', async () => {
    const path = fresh();
    writeFileSync(path, '{"some":"config"}');
    await expect(openChainFile(path)).rejects.toMatchObject({ code: 'not_a_chain_file' });
    await expect(verifyChainFile(path)).rejects.toMatchObject({ code: 'not_a_chain_file' });
    expect(readFileSync(path, 'utf8')).toBe('{"some":"config"}');
  });

  it('initialises an empty file and repairs an incomplete header', async () => {
    const empty = fresh();
    writeFileSync(empty, '');
    const a = await openChainFile(empty);
    expect(a.openReport.tornTail).toBeNull();
    await a.append('workload', 'k', {});
    await a.close();
    expect((await verifyChainFile(empty)).size).toBe(1);
    const partial = fresh();
    writeFileSync(partial, CHAIN_FILE_HEADER.slice(0, 10));
    const b = await openChainFile(partial);
    expect(b.openReport.tornTail).toMatchObject({ offset: 0, line: 1, seq: 0, repaired: true });
    await b.close();
    expect(readFileSync(partial, 'utf8')).toBe(`${CHAIN_FILE_HEADER}\n`);
  });

  it('repairs a torn tail on open and reports it; read-only reports without repairing', async () => {
    for (const cut of [1, 10, 100]) {
      const path = fresh();
      const events = await write(path, 6);
      const full = readFileSync(path).length;
      truncateSync(path, full - cut);
      const tornAt = offsetOfLine(path, 7);
      const ro = await openChainFile(path, { readOnly: true });
      expect(ro.size).toBe(5);
      expect(ro.openReport.tornTail).toEqual({
        offset: tornAt,
        length: full - cut - tornAt,
        line: 7,
        seq: 5,
        reason: 'incomplete last record (no terminating newline)',
        repaired: false,
      });
      await expect(ro.append('workload', 'k', {})).rejects.toMatchObject({ code: 'chain_read_only' });
      expect(readFileSync(path).length).toBe(full - cut);
      const v = await verifyChainFile(path);
      expect(v.ok).toBe(false);
      expect(v.failure).toMatchObject({ reason: 'torn_tail', seq: 5, line: 7, offset: tornAt });
      const rw = await openChainFile(path);
      expect(rw.openReport.tornTail).toMatchObject({ offset: tornAt, seq: 5, repaired: true });
      expect(readFileSync(path).length).toBe(tornAt);
      expect(rw.range(0)).toEqual(events.slice(0, 5));
      const e = await rw.append('workload', 'k', { after: 'repair' });
      expect(e.seq).toBe(5);
      await rw.close();
      expect((await verifyChainFile(path)).ok).toBe(true);
    }
  });

  it('treats an unparseable last line (zeros, garbage) as torn, but not an unparseable earlier line', async () => {
    const path = fresh();
    await write(path, 4);
    const good = readFileSync(path).length;
    appendFileSync(path, Buffer.alloc(300)); // zeros, as after a power cut
    let chain = await openChainFile(path);
    expect(chain.openReport.tornTail).toMatchObject({ offset: good, length: 300, seq: 4, line: 6 });
    await chain.close();
    expect(readFileSync(path).length).toBe(good);
    appendFileSync(path, '{"hash":"ab\n');
    chain = await openChainFile(path);
    expect(chain.openReport.tornTail).toMatchObject({ offset: good, seq: 4, repaired: true });
    expect(chain.openReport.tornTail?.reason).toMatch(/^last record unparseable/);
    await chain.close();
    // The same garbage followed by a valid record is corruption, not a torn tail.
    const path2 = fresh();
    await write(path2, 4);
    const all = lines(path2);
    all.splice(3, 0, '{"hash":"ab');
    writeFileSync(path2, all.join('\n'));
    const before = readFileSync(path2);
    await expect(openChainFile(path2)).rejects.toMatchObject({
      code: 'chain_corrupt',
      failure: { reason: 'malformed', seq: 2, line: 4, offset: offsetOfLine(path2, 4) },
    });
    expect(readFileSync(path2).equals(before)).toBe(true);
  });

  it('reports corruption before the tail precisely and never truncates it', async () => {
    const cases: [string, (path: string) => void, Record<string, unknown>][] = [
      [
        'payload',
        (p) => editLine(p, 4, (r) => ((r.payload as { i: number }).i = 77)),
        { reason: 'payload_hash_mismatch' },
      ],
      ['ts', (p) => editLine(p, 4, (r) => (r.ts = 5)), { reason: 'hash_mismatch' }],
      ['hash', (p) => editLine(p, 4, (r) => (r.hash = 'e'.repeat(64))), { reason: 'hash_mismatch' }],
      [
        'prev_hash',
        (p) => editLine(p, 4, (r) => (r.prev_hash = 'e'.repeat(64))),
        { reason: 'hash_mismatch' },
      ],
      ['field type', (p) => editLine(p, 4, (r) => (r.seq = '2')), { reason: 'malformed', field: 'seq' }],
      ['extra field', (p) => editLine(p, 4, (r) => (r.note = 1)), { reason: 'malformed', field: 'note' }],
      [
        'bad hex',
        (p) => editLine(p, 4, (r) => (r.prev_hash = 'G'.repeat(64))),
        { reason: 'malformed', field: 'prev_hash' },
      ],
      [
        'bad kind',
        (p) => editLine(p, 4, (r) => (r.kind = 'Workload')),
        { reason: 'malformed', field: 'kind' },
      ],
      [
        'float payload',
        (p) => {
          const all = lines(p);
          all[3] = (all[3] as string).replace(/"payload":\{[^}]*\}/, '"payload":1.5');
          writeFileSync(p, all.join('\n'));
        },
        { reason: 'malformed', field: 'payload' },
      ],
      [
        'non-canonical',
        (p) => {
          const all = lines(p);
          all[3] = (all[3] as string).replace('{"hash"', '{ "hash"');
          writeFileSync(p, all.join('\n'));
        },
        { reason: 'malformed', field: '$' },
      ],
      [
        'rehashed edit',
        (p) =>
          editLine(p, 4, (r) => {
            r.payload = { forged: 1 };
            r.payload_hash = computePayloadHash(r.payload);
            r.hash = computeEventHash(r as never);
          }),
        { reason: 'broken_link', seq: 3, line: 5 },
      ],
      [
        'swap',
        (p) => {
          const all = lines(p);
          [all[3], all[4]] = [all[4] as string, all[3] as string];
          writeFileSync(p, all.join('\n'));
        },
        { reason: 'reordered' },
      ],
      [
        'drop',
        (p) => {
          const all = lines(p);
          all.splice(3, 1);
          writeFileSync(p, all.join('\n'));
        },
        { reason: 'dropped' },
      ],
      [
        'invalid utf-8',
        (p) => {
          const buf = readFileSync(p);
          const at = offsetOfLine(p, 4) + buf.subarray(offsetOfLine(p, 4)).indexOf('é');
          buf[at] = 0xff;
          writeFileSync(p, buf);
        },
        { reason: 'malformed' },
      ],
    ];
    for (const [name, corrupt, expected] of cases) {
      const path = fresh();
      await write(path, 8);
      corrupt(path);
      const before = readFileSync(path);
      const at = { seq: 2, line: 4, ...expected };
      const where = { ...at, offset: offsetOfLine(path, at.line as number) };
      const err = await openChainFile(path).catch((e: unknown) => e);
      expect(err, name).toBeInstanceOf(ChainCorruptError);
      expect((err as ChainCorruptError).failure, name).toMatchObject(where);
      expect((err as Error).message, name).toContain(
        `event ${where.seq} (line ${where.line}, byte ${where.offset})`,
      );
      await expect(openChainFile(path, { readOnly: true }), name).rejects.toMatchObject({
        code: 'chain_corrupt',
      });
      const v = await verifyChainFile(path);
      expect(v.ok, name).toBe(false);
      expect(v.failure, name).toMatchObject(where);
      expect(readFileSync(path).equals(before), `${name}: file untouched`).toBe(true);
    }
  });

  it('detects truncation at a record boundary against a checkpoint', async () => {
    const path = fresh();
    await write(path, 10);
    const chain = await openChainFile(path, { readOnly: true });
    const anchor = { size: 10, head: chain.head, root: chain.root() };
    expect((await verifyChainFile(path, { checkpoint: anchor })).ok).toBe(true);
    truncateSync(path, offsetOfLine(path, 10));
    const v = await verifyChainFile(path, { checkpoint: anchor });
    expect(v.failure).toMatchObject({ reason: 'truncated', seq: 8 });
    expect(v.size).toBe(8);
    // A rewritten history of the same length: the head (and the root) differ.
    const forged = fresh();
    await write(forged, 10);
    editLine(forged, 2, (r) => {
      r.ts = 1;
    });
    const other = await openChainFile(fresh(), { clock: () => 1 });
    for (const e of chain.range(0)) await other.append(e.source, e.kind, e.payload);
    expect(other.checkCheckpoint(anchor).failure?.reason).toBe('checkpoint_mismatch');
    expect(
      (
        await verifyChainFile(path, {
          checkpoint: { ...anchor, size: 8, head: chain.get(7)?.hash as string },
        })
      ).ok,
    ).toBe(false);
    expect(
      (
        await verifyChainFile(path, {
          checkpoint: { size: 8, head: chain.get(7)?.hash as string, root: chain.root(8) },
        })
      ).ok,
    ).toBe(true);
  });

  it('group commit: concurrent appends share one write and one fsync', async () => {
    const path = fresh();
    const store = new FileChainStore(path);
    const chain = await openChain(store, { clock: clock() });
    const n = 200;
    const events = await Promise.all(
      Array.from({ length: n }, (_, i) => chain.append('workload', 'workload.start', { i })),
    );
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: n }, (_, i) => i));
    const s = store.stats;
    expect(s.records).toBe(n);
    expect(s.syncs).toBe(1);
    expect(s.batches).toBe(1);
    expect(s.writes).toBe(1);
    expect(s.maxBatch).toBe(n);
    // Appends made while a batch is in flight form the next batch.
    const first = chain.append('workload', 'k', { wave: 1 });
    await Promise.resolve();
    await Promise.resolve();
    const more = Array.from({ length: 50 }, () => chain.append('workload', 'k', { wave: 2 }));
    await Promise.all([first, ...more]);
    expect(store.stats.records).toBe(n + 51);
    expect(store.stats.syncs).toBeLessThanOrEqual(3);
    // Sequential appends each get their own fsync, and each resolves after it.
    const before = store.stats.syncs;
    for (let i = 0; i < 5; i++) {
      await chain.append('workload', 'k', { i });
      expect(store.stats.syncs).toBe(before + i + 1);
    }
    await chain.close();
    expect((await verifyChainFile(path)).size).toBe(n + 56);
  });

  it('close waits for pending appends', async () => {
    const path = fresh();
    const chain = await openChainFile(path);
    const pending = Array.from({ length: 20 }, (_, i) => chain.append('workload', 'k', { i }));
    await chain.close();
    await Promise.all(pending);
    expect((await verifyChainFile(path)).size).toBe(20);
    await expect(chain.append('workload', 'k', {})).rejects.toMatchObject({ code: 'chain_closed' });
  });
});
