import { HeddleError } from '@heddle/envelope';
import { describe, expect, it } from 'vitest';
import { badInput, CliError, ExitCode, usageError } from './cli-error.js';
import { reportCliError, toCliError } from './report-error.js';

function report(err: unknown, json: boolean, extra: { toCliError?: (e: unknown) => CliError } = {}) {
  const lines: string[] = [];
  const code = reportCliError(err, {
    name: 'place',
    json,
    io: { err: (l) => lines.push(l) },
    prefix: 'heddle',
    ...extra,
  });
  return { code, lines };
}

describe('CliError helpers', () => {
  it('keeps the shared exit codes', () => {
    expect(ExitCode).toEqual({ ok: 0, failed: 1, usage: 2, badInput: 3, internal: 4 });
  });

  it('makes usage and bad-input errors with their codes, fields and causes', () => {
    const u = usageError('usage: heddle place <pkg>', 'pkg');
    expect([u.code, u.exitCode, u.field, u.message]).toEqual([
      'usage',
      2,
      'pkg',
      'usage: heddle place <pkg>',
    ]);
    expect(usageError('no field').field).toBeUndefined();
    const cause = new Error('EACCES');
    const b = badInput('key_unreadable', 'key: unreadable', 'key', cause);
    expect([b.code, b.exitCode, b.field, b.cause]).toEqual(['key_unreadable', 3, 'key', cause]);
    expect(b).toBeInstanceOf(HeddleError);
    expect(b.name).toBe('CliError');
    expect('cause' in badInput('x', 'y')).toBe(false);
  });
});

describe('toCliError', () => {
  it('maps a CliError as is, a HeddleError to exit 3, anything else to internal (4)', () => {
    const c = new CliError('check_failed', 'chain does not verify', ExitCode.failed);
    expect(toCliError(c)).toBe(c);
    const h = toCliError(new HeddleError('invalid_json', 'policy: not JSON', { field: 'policy' }));
    expect([h.code, h.message, h.exitCode, h.field]).toEqual([
      'invalid_json',
      'policy: not JSON',
      3,
      'policy',
    ]);
    const i = toCliError(new TypeError('boom'));
    expect([i.code, i.exitCode]).toEqual(['internal', 4]);
    expect(i.message).toMatch(/^internal error: TypeError: boom\n/);
    expect(toCliError('text').message).toBe('internal error: text');
  });

  it('lets the caller choose the exit code of a HeddleError', () => {
    const e = toCliError(new HeddleError('unreachable', 'seed: unreachable'), () => ExitCode.failed);
    expect(e.exitCode).toBe(1);
  });
});

describe('reportCliError', () => {
  it('prints `<prefix> <name>: <message>` and returns the exit code', () => {
    expect(report(usageError('unknown flag --x'), false)).toEqual({
      code: 2,
      lines: ['heddle place: unknown flag --x'],
    });
    expect(report(new HeddleError('invalid_json', 'bad'), false)).toEqual({
      code: 3,
      lines: ['heddle place: bad'],
    });
  });

  it('does not double the prefix when the message already carries it', () => {
    expect(report(usageError('heddle place: needs <pkg>'), false).lines).toEqual([
      'heddle place: needs <pkg>',
    ]);
    expect(report(usageError('usage: heddle place <pkg>'), false).lines).toEqual([
      'heddle place: usage: heddle place <pkg>',
    ]);
  });

  it('prints one JSON line with code, message, field and details under --json', () => {
    expect(report(badInput('no_node', 'no node fits', 'node'), true)).toEqual({
      code: 3,
      lines: ['{"error":{"code":"no_node","message":"no node fits","field":"node"}}'],
    });
    expect(report(usageError('bad'), true).lines).toEqual(['{"error":{"code":"usage","message":"bad"}}']);
    const withDetails = new CliError('refused', 'the Seed refused', ExitCode.failed, {
      details: { status: 409, evidence: ['line'] },
    });
    expect(report(withDetails, true)).toEqual({
      code: 1,
      lines: ['{"error":{"code":"refused","message":"the Seed refused","status":409,"evidence":["line"]}}'],
    });
    const internal = report(new RangeError('oops'), true);
    expect(internal.code).toBe(4);
    const parsed = JSON.parse(internal.lines[0] ?? '') as { error: { code: string; message: string } };
    expect(parsed.error.code).toBe('internal');
    expect(parsed.error.message).toMatch(/^internal error: RangeError: oops/);
  });

  it('uses the given mapping', () => {
    const r = report(new HeddleError('unreachable', 'gone'), false, {
      toCliError: (e) => toCliError(e, () => ExitCode.failed),
    });
    expect(r).toEqual({ code: 1, lines: ['heddle place: gone'] });
  });
});
