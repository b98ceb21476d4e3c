import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OperatorStore, readOperatorsFile, tokenHash } from './operator-store.js';

const dir = (): string => mkdtempSync(join(tmpdir(), 'heddle-ops-'));
const K1 = 'a1'.repeat(32);
const K2 = 'b2'.repeat(32);
const failure = (f: () => unknown): { code?: string; field?: string } => {
  try {
    f();
  } catch (err) {
    return err as { code?: string; field?: string };
  }
  throw new Error('did not throw');
};

describe('OperatorStore', () => {
  it('adds and removes operators, saved 0600, and read back by another store', () => {
    const path = join(dir(), 'operators.json');
    const s = OperatorStore.open(path);
    expect(s.list()).toEqual([]);
    s.add({ name: 'alice', role: 'viewer', added_at_ms: 1, public_key: K1 });
    s.add({ name: 'ci', role: 'operator', added_at_ms: 2, token_sha256: tokenHash('hdt_x') });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const again = OperatorStore.open(path);
    expect(again.byKey(K1)?.name).toBe('alice');
    expect(again.byTokenHash(tokenHash('hdt_x'))?.role).toBe('operator');
    expect(failure(() => s.add({ name: 'alice', role: 'admin', added_at_ms: 3, public_key: K2 })).code).toBe(
      'operator_exists',
    );
    expect(failure(() => s.add({ name: 'bob', role: 'admin', added_at_ms: 3, public_key: K1 })).code).toBe(
      'operator_exists',
    );
    expect(s.remove('alice').name).toBe('alice');
    expect(failure(() => s.remove('alice')).code).toBe('unknown_operator');
    expect(again.byKey(K1)).toBeUndefined();
  });

  it('refuses a bad file naming the field', () => {
    const path = join(dir(), 'operators.json');
    const bad = (v: unknown): { code?: string; field?: string } => {
      writeFileSync(path, JSON.stringify(v));
      return failure(() => readOperatorsFile(path));
    };
    const op = { name: 'alice', role: 'viewer', added_at_ms: 1, public_key: K1 };
    expect(bad({ schema: 'x', operators: [] })).toMatchObject({ code: 'operators_invalid', field: 'schema' });
    expect(bad({ schema: 'heddle.operators.v1', operators: [{ ...op, role: 'root' }] }).field).toBe(
      'operators[0].role',
    );
    expect(bad({ schema: 'heddle.operators.v1', operators: [op, { ...op, public_key: K2 }] }).field).toBe(
      'operators[1].name',
    );
    expect(bad({ schema: 'heddle.operators.v1', operators: [op, { ...op, name: 'bob' }] }).field).toBe(
      'operators[1].public_key',
    );
    writeFileSync(path, '{"schema":');
    expect(failure(() => readOperatorsFile(path))).toMatchObject({ code: 'operators_invalid', field: '$' });
  });

  it('picks up an edit by hand, and fails closed on a broken one', () => {
    const path = join(dir(), 'operators.json');
    const s = OperatorStore.open(path);
    const op = { name: 'alice', role: 'viewer', added_at_ms: 1, public_key: K1 };
    writeFileSync(path, JSON.stringify({ schema: 'heddle.operators.v1', operators: [op] }));
    expect(s.byKey(K1)?.name).toBe('alice');
    writeFileSync(path, `${JSON.stringify({ schema: 'heddle.operators.v1', operators: [op] })} x`);
    expect(s.byKey(K1)).toBeUndefined();
    expect(s.problem).toContain('not valid JSON');
    expect(readFileSync(path, 'utf8')).toContain(' x');
  });
});
