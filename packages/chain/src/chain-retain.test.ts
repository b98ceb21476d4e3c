// A file chain that keeps only its newest events in memory (`retainEvents`): older events are read
// back from the file by the store's offset index, and everything the chain answers is the same as
// with every event in memory.
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keyPairFromSecret } from '@heddle/envelope';
import { afterAll, describe, expect, it } from 'vitest';
import type { Chain } from './chain.js';
import { ChainError } from './errors.js';
import { openChainFile, openMemoryChain } from './open.js';

const root = mkdtempSync(join(tmpdir(), 'heddle-chain-retain-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const path = (): string => join(root, `chain-${++n}.jsonl`);

async function fill(chain: Chain, count: number, from = 0): Promise<void> {
  await Promise.all(
    Array.from({ length: count }, (_, i) =>
      chain.append(i % 3 === 0 ? 'test.a' : 'test.b', i % 2 === 0 ? 'even' : 'odd', {
        i: from + i,
        text: `é ${'x'.repeat((from + i) % 17)}`, // multi-byte UTF-8: offsets are bytes
      }),
    ),
  );
}

describe('a file chain keeping only its tail (retainEvents)', () => {
  it('answers exactly as a chain holding every event, reading old events back from the file', async () => {
    const clock = () => 1_700_000_000_000;
    const p = path();
    const tail = await openChainFile(p, { retainEvents: 4, clock });
    const full = await openMemoryChain({ clock });
    await fill(tail, 60);
    await fill(full, 60);
    expect(tail.size).toBe(60);
    expect(tail.head).toBe(full.head);
    // Old events come back from the file: a new object on each read, equal to the original.
    expect(tail.get(0)).toEqual(full.get(0));
    expect(tail.get(0)).not.toBe(tail.get(0));
    expect(tail.get(59)).toBe(tail.get(59)); // the newest are in memory
    expect(tail.range(0, 60)).toEqual(full.range(0, 60));
    expect(tail.range(10, 20)).toEqual(full.range(10, 20));
    expect(tail.tail(5)).toEqual(full.tail(5));
    expect([...tail]).toEqual([...full]);
    expect(tail.find({ kind: 'even', source: 'test.a' })).toEqual(
      full.find({ kind: 'even', source: 'test.a' }),
    );
    expect(tail.find({ source: 'test.b', from: 5, to: 40, limit: 7 })).toEqual(
      full.find({ source: 'test.b', from: 5, to: 40, limit: 7 }),
    );
    const old = full.get(3);
    expect(tail.getByHash(old?.hash ?? '')).toEqual(old);
    expect(tail.verify()).toEqual(full.verify());
    expect(tail.verify().ok).toBe(true);
    expect(tail.root()).toBe(full.root());
    expect(tail.root(17)).toBe(full.root(17));
    expect(tail.inclusionProof(2)).toEqual(full.inclusionProof(2));
    expect(tail.consistencyProof(9, 50)).toEqual(full.consistencyProof(9, 50));
    const keys = keyPairFromSecret(new Uint8Array(32).fill(7));
    expect(tail.checkpoint(keys, 30)).toEqual(full.checkpoint(keys, 30));
    expect(tail.checkCheckpoint({ size: 30, head: full.get(29)?.hash ?? '', root: full.root(30) }).ok).toBe(
      true,
    );
    await tail.close();
  });

  it('opens a file it did not write, and after a crash (torn tail) recovers, reads back and appends on', async () => {
    const p = path();
    const first = await openChainFile(p, { retainEvents: 3 });
    await fill(first, 25);
    const head = first.head;
    await first.close();
    // A crash in the middle of writing the next record: a partial line at the end of the file.
    appendFileSync(p, '{"seq":25,"source":"test.a","ki');
    const again = await openChainFile(p, { retainEvents: 3 });
    expect(again.openReport.tornTail?.repaired).toBe(true);
    expect(again.size).toBe(25);
    expect(again.head).toBe(head);
    expect(again.get(0)?.payload).toEqual({ i: 0, text: 'é ' });
    expect(again.verify().ok).toBe(true);
    await fill(again, 10, 25);
    expect(again.get(30)?.payload).toEqual({ i: 30, text: `é ${'x'.repeat(13)}` });
    expect(again.get(24)?.payload).toEqual({ i: 24, text: `é ${'x'.repeat(7)}` });
    expect(again.verify().ok).toBe(true);
    await again.close();
    // And a third open sees all 35, verified.
    const third = await openChainFile(p, { retainEvents: 3 });
    expect(third.size).toBe(35);
    expect(third.range(0, 35).map((e) => (e.payload as { i: number }).i)).toEqual(
      Array.from({ length: 35 }, (_, i) => i),
    );
    await third.close();
  });

  it('an old record changed on disk under the open chain is chain_corrupt when read back', async () => {
    const p = path();
    const chain = await openChainFile(p, { retainEvents: 2 });
    await fill(chain, 12);
    const text = readFileSync(p, 'utf8');
    writeFileSync(p, text.replace('"i":1,', '"i":7,'));
    let err: unknown;
    try {
      chain.get(1);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ChainError);
    expect((err as ChainError).code).toBe('chain_corrupt');
    await chain.close();
  });

  it('is refused on a store that cannot read events back, and for a count below 1', async () => {
    await expect(openMemoryChain({ retainEvents: 10 })).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(openChainFile(path(), { retainEvents: 0 })).rejects.toMatchObject({
      code: 'invalid_argument',
    });
  });
});
