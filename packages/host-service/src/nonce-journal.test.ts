import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NonceJournal } from './nonce-journal.js';

const dir = mkdtempSync(join(tmpdir(), 'heddle-nonces-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = (): string => join(dir, `nonces-${n++}.journal`);
const nonce = (i: number): string => i.toString(16).padStart(32, '0');
const T = 1_800_000_000_000;

describe('NonceJournal', () => {
  it('remembers durable nonces across a reopen, forgets expired ones, and compacts the file at open', () => {
    const path = fresh();
    const a = NonceJournal.open({ path, nowMs: T });
    expect(a.report).toMatchObject({ state: 'missing', restored: 0 });
    expect(a.guard.record(nonce(1), T + 60_000, T, true)).toBe('recorded');
    expect(a.guard.record(nonce(2), T + 1_000, T, true)).toBe('recorded');
    expect(a.guard.record(nonce(3), T + 60_000, T, false)).toBe('recorded'); // not durable
    a.journal.close();
    expect(readFileSync(path, 'utf8').trim().split('\n')).toHaveLength(2);
    const b = NonceJournal.open({ path, nowMs: T + 40_000 }); // nonce 2 remembered until T + 31 s
    expect(b.report).toMatchObject({ state: 'ok', restored: 1, tornLine: false });
    expect(b.guard.record(nonce(1), T + 60_000, T + 40_000, true)).toBe('replay');
    expect(b.guard.record(nonce(2), T + 1_000, T + 40_000, true)).toBe('recorded');
    b.journal.close();
  });

  it('ignores a torn last line (its request was never acted on) and sets a corrupt journal aside', () => {
    const path = fresh();
    writeFileSync(path, `${nonce(7)} ${T + 90_000}\n${nonce(8).slice(0, 10)}`);
    const a = NonceJournal.open({ path, nowMs: T });
    expect(a.report).toMatchObject({ state: 'ok', restored: 1, tornLine: true });
    expect(a.guard.has(nonce(7))).toBe(true);
    a.journal.close();
    expect(readFileSync(path, 'utf8')).toBe(`${nonce(7)} ${T + 90_000}\n`);
    appendFileSync(path, 'garbage\n');
    const b = NonceJournal.open({ path, nowMs: T });
    expect(b.report).toMatchObject({ state: 'corrupt', keptAs: `${path}.corrupt-${T}` });
    expect(existsSync(`${path}.corrupt-${T}`)).toBe(true);
    b.journal.close();
  });

  it('rewrites itself with the live nonces once it holds more than twice those plus 4,096 lines', () => {
    const path = fresh();
    const { guard, journal } = NonceJournal.open({ path, nowMs: T });
    for (let i = 0; i < 4200; i++) guard.record(nonce(i), T + 1_000, T, true);
    // All of those are forgotten by T + 40 s; the next append finds the file too long and rewrites it.
    guard.record(nonce(99_999), T + 100_000, T + 40_000, true);
    expect(journal.lines).toBe(1);
    expect(readFileSync(path, 'utf8')).toBe(`${nonce(99_999)} ${T + 130_000}\n`);
    journal.close();
  });
});
