import { PackageError } from '@heddle/package';
import { Refusal } from '@heddle/protocol';
import { RuntimeError, type RuntimeErrorCode } from '@heddle/runtime';
import { WireError, type WireErrorCode } from '@heddle/wire';
import { describe, expect, it } from 'vitest';
import { refusalOf } from './refusal-map.js';

describe('refusalOf', () => {
  it.each<[RuntimeErrorCode, string]>([
    ['admission', 'admission'],
    ['governance', 'governance'],
    ['runtime', 'runtime'],
    ['unknown_instance', 'unknown_instance'],
    ['invalid_config', 'invalid_request'],
  ])('maps RuntimeError %s to %s, keeping its field', (code, refusal) => {
    const err = new RuntimeError(code, 'adapter said no', { field: 'config.values.port' });
    const r = refusalOf(err, 'place');
    expect(r).toBeInstanceOf(Refusal);
    expect(r.code).toBe(refusal);
    expect(r.authenticated).toBe(true);
    expect(r.field).toBe('config.values.port');
    expect(r.reason).toBe('place: adapter said no');
    expect(r.cause).toBe(err);
  });

  it('a RuntimeError without a field gives a refusal without one', () => {
    expect(refusalOf(new RuntimeError('runtime', 'x'), 'start').field).toBeUndefined();
  });

  it.each(['file_tampered', 'untrusted_signer', 'revoked', 'manifest_invalid'] as const)(
    'maps PackageError %s to verify with the code in the reason',
    (code) => {
      const err = new PackageError(code, 'bad package', { field: 'files[0]' });
      const r = refusalOf(err, 'verify package');
      expect(r.code).toBe('verify');
      expect(r.authenticated).toBe(true);
      expect(r.reason).toBe(`verify package: ${code}: bad package`);
      expect(r.cause).toBe(err);
    },
  );

  it.each<[WireErrorCode, string]>([
    ['piece_rejected', 'verify'],
    ['manifest_mismatch', 'verify'],
    ['artifact_mismatch', 'verify'],
    ['manifest_invalid', 'verify'],
    ['timeout', 'fetch'],
    ['closed', 'fetch'],
    ['fetch_refused', 'fetch'],
    ['too_large', 'fetch'],
  ])('maps WireError %s to %s, keeping code and field', (code, refusal) => {
    const err = new WireError(code, 'while fetching', { field: 'pieces[3]' });
    const r = refusalOf(err, 'fetch');
    expect(r.code).toBe(refusal);
    expect(r.authenticated).toBe(true);
    expect(r.field).toBe('pieces[3]');
    expect(r.reason.startsWith(`fetch: ${code}: `)).toBe(true);
    expect(r.reason).toContain('while fetching');
    expect(r.cause).toBe(err);
  });

  it('maps a plain Error to runtime with its message', () => {
    const err = new Error('disk on fire');
    const r = refusalOf(err, 'load');
    expect(r.code).toBe('runtime');
    expect(r.authenticated).toBe(true);
    expect(r.reason).toBe('load: disk on fire');
    expect(r.field).toBeUndefined();
    expect(r.cause).toBe(err);
  });

  it('maps a thrown non-Error to runtime with its string form', () => {
    const r = refusalOf('just a string', 'load');
    expect(r.code).toBe('runtime');
    expect(r.authenticated).toBe(true);
    expect(r.reason).toBe('load: just a string');
  });

  it('passes a Refusal through unchanged', () => {
    for (const authenticated of [true, false]) {
      const refusal = new Refusal('unknown_instance', 'no such instance', {
        authenticated,
        field: 'body.instance_id',
      });
      expect(refusalOf(refusal, 'stop')).toBe(refusal);
    }
  });
});
