// The window between the symbolic-link check of a file's path and the read of the file: an attacker who
// swaps a directory for a symbolic link in between must not make the verifier read outside the package.
// The swap is done deterministically from a hook that runs right after the path was inspected.
import { cpSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PackageError } from './errors.js';
import { NO_REVOCATIONS } from './revocation.js';
import { anchorsFor, buildSigned, fixedKeys } from './test-fixtures.js';
import { verifyPackage } from './verify.js';

const hook = vi.hoisted(() => ({
  afterInspect: undefined as ((root: string, path: string) => void) | undefined,
}));

vi.mock('./paths.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('./paths.js')>();
  return {
    ...original,
    inspectPackagePath: (root: string, path: string) => {
      const state = original.inspectPackagePath(root, path);
      hook.afterInspect?.(root, path);
      return state;
    },
  };
});

afterEach(() => {
  hook.afterInspect = undefined;
});

async function verdict(dir: string, keys = fixedKeys(4)): Promise<string> {
  try {
    await verifyPackage(dir, { anchors: anchorsFor([keys]), revocations: NO_REVOCATIONS });
    return 'ok';
  } catch (err) {
    if (err instanceof PackageError) return `${err.code}: ${err.message}`;
    throw err;
  }
}

describe('verifyPackage: a directory swapped for a symbolic link after the path check', () => {
  it('refuses when the link leads to a copy outside the package (other inode)', async () => {
    const keys = fixedKeys(4);
    const built = await buildSigned([keys]);
    const outside = join(built.dir, '..', 'outside-bin');
    hook.afterInspect = (root, path) => {
      if (path !== 'bin/run.sh') return;
      cpSync(join(root, 'bin'), outside, { recursive: true });
      rmSync(join(root, 'bin'), { recursive: true });
      symlinkSync(outside, join(root, 'bin'));
    };
    const v = await verdict(built.dir, keys);
    expect(v).toMatch(/^file_tampered: /);
    expect(readFileSync(join(outside, 'run.sh'), 'utf8')).toBe('#!/bin/sh\necho hi\n');
  });

  it('refuses when the real directory itself was moved outside and linked back (same inode)', async () => {
    const keys = fixedKeys(4);
    const built = await buildSigned([keys]);
    const outside = join(built.dir, '..', 'moved-bin');
    hook.afterInspect = (root, path) => {
      if (path !== 'bin/run.sh') return;
      renameSync(join(root, 'bin'), outside);
      symlinkSync(outside, join(root, 'bin'));
    };
    expect(await verdict(built.dir, keys)).toMatch(/^file_tampered: /);
  });

  it('refuses a file replaced by another one after the check (different inode)', async () => {
    const keys = fixedKeys(4);
    const built = await buildSigned([keys]);
    hook.afterInspect = (root, path) => {
      if (path !== 'run.wasm') return;
      const p = join(root, 'run.wasm');
      // Identical content under a new inode (created before the old one goes, so the number differs):
      // only the identity check notices.
      writeFileSync(`${p}.new`, readFileSync(p));
      renameSync(`${p}.new`, p);
    };
    expect(await verdict(built.dir, keys)).toMatch(/^file_tampered: /);
  });
});
