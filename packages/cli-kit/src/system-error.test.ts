import { mkdirSync, writeFileSync } from 'node:fs';
import { HeddleError } from '@heddle/envelope';
import { describe, expect, it } from 'vitest';
import { ExitCode } from './cli-error.js';
import { toCliError } from './report-error.js';
import { inputOrSystemError, systemCliError } from './system-error.js';

/** The real error a system call gives. */
function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

describe('file-system failures get their own codes, not "internal error"', () => {
  it('a full device (ENOSPC, from writing /dev/full) is disk_full, exit 1', () => {
    const err = thrown(() => writeFileSync('/dev/full', 'x'));
    expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
    const e = toCliError(err);
    expect(e).toMatchObject({ code: 'disk_full', exitCode: ExitCode.failed, details: { errno: 'ENOSPC' } });
    expect(e.message).toContain('no space left');
  });

  it('a refused permission (EACCES, from creating a directory in sysfs) is permission_denied', () => {
    const err = thrown(() => mkdirSync('/sys/heddle-test-dir'));
    expect(['EACCES', 'EPERM']).toContain((err as NodeJS.ErrnoException).code);
    expect(toCliError(err)).toMatchObject({ code: 'permission_denied', exitCode: ExitCode.failed });
  });

  it('a read-only file system (EROFS) and SQLite full/read-only are mapped, also when wrapped as a cause', () => {
    const erofs = Object.assign(new Error("EROFS: read-only file system, open '/data/x'"), {
      code: 'EROFS',
      path: '/data/x',
    });
    expect(toCliError(erofs)).toMatchObject({ code: 'read_only_filesystem', details: { path: '/data/x' } });
    const sqlite = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    expect(toCliError(new Error('saving state failed', { cause: sqlite }))).toMatchObject({
      code: 'disk_full',
    });
    const wrapped = inputOrSystemError('state_invalid', 'state_db: cannot open: EROFS', 'state_db', erofs);
    expect(wrapped).toMatchObject({ code: 'read_only_filesystem', field: 'state_db', exitCode: 1 });
    expect(wrapped.message).toMatch(/^state_db: cannot open: EROFS: the file system is read-only/);
  });

  it('anything else keeps its mapping: bad input stays bad input, a bug stays internal', () => {
    const enoent = thrown(() => mkdirSync('/proc/self/heddle-x'));
    expect(inputOrSystemError('home_unusable', 'cannot create', 'home', enoent)).toMatchObject({
      code: 'home_unusable',
      exitCode: ExitCode.badInput,
    });
    expect(systemCliError(new TypeError('x is undefined'))).toBeUndefined();
    expect(toCliError(new TypeError('x is undefined')).code).toBe('internal');
    expect(toCliError(new HeddleError('chain_locked', 'held')).code).toBe('chain_locked');
  });
});
