// A kind registered by a library user must not be able to bypass the path rules: the verifier checks
// every file a kind returns, whatever its body schema allowed.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { blake3Hex, utf8 } from '@heddle/envelope';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PackageError } from './errors.js';
import { encodeEnvelope, type PackageFile } from './format.js';
import { type KindDefinition, KindRegistry } from './kind-registry.js';
import { ENVELOPE_FILE, MAX_FILES, PACKAGE_SCHEMA } from './limits.js';
import { NO_REVOCATIONS } from './revocation.js';
import { signEnvelope } from './sign.js';
import { anchorsFor, fixedKeys, tempDir } from './test-fixtures.js';
import { verifyPackage } from './verify.js';

interface BlobBody {
  name: string;
  files: PackageFile[];
}

// A careless kind: its body schema accepts any path, any number of files and duplicates.
const blobKind: KindDefinition<BlobBody> = {
  kind: 'blob',
  bodySchema: z.strictObject({
    name: z.string(),
    files: z.array(z.strictObject({ path: z.string(), size: z.int(), blake3: z.string() })),
  }),
  files: (body) => body.files,
};

const keys = fixedKeys(5);
const anchors = anchorsFor([keys]);
const kinds = () => new KindRegistry().register(blobKind);

/** Writes a `blob` package into a fresh `<tmp>/pkg`, signed by the pinned key; returns its directory. */
function blobPackage(files: unknown[], contents: Record<string, string> = {}): string {
  const dir = join(tempDir(), 'pkg');
  mkdirSync(dir);
  for (const [path, text] of Object.entries(contents)) writeFileSync(join(dir, path), text);
  const env = signEnvelope(
    { schema: PACKAGE_SCHEMA, kind: 'blob', body: { name: 'x', files: files as never }, signatures: [] },
    keys,
  );
  writeFileSync(join(dir, ENVELOPE_FILE), encodeEnvelope(env));
  return dir;
}

const entry = (path: string, text: string): PackageFile => ({
  path,
  size: utf8(text).length,
  blake3: blake3Hex(utf8(text)),
});

async function refusal(dir: string): Promise<{ code: string; field?: string | undefined }> {
  try {
    await verifyPackage(dir, { anchors, revocations: NO_REVOCATIONS, kinds: kinds() });
    return { code: 'ok' };
  } catch (err) {
    if (!(err instanceof PackageError)) throw err;
    return { code: err.code, field: err.field };
  }
}

describe('files of a registered kind', () => {
  it('a well-formed custom kind verifies', async () => {
    const dir = blobPackage([entry('a.txt', 'hello')], { 'a.txt': 'hello' });
    expect(await refusal(dir)).toEqual({ code: 'ok' });
  });

  it('refuses ../ traversal in a custom kind signed by a pinned key (the file outside is never read)', async () => {
    const dir = blobPackage([entry('../secret.txt', 'top secret')]);
    writeFileSync(join(dir, '..', 'secret.txt'), 'top secret');
    expect(await refusal(dir)).toEqual({ code: 'manifest_invalid', field: 'body.files[0].path' });
    const nested = blobPackage([entry('a.txt', 'x'), entry('sub/../../secret.txt', 'top secret')], {
      'a.txt': 'x',
    });
    writeFileSync(join(nested, '..', 'secret.txt'), 'top secret');
    expect(await refusal(nested)).toEqual({ code: 'manifest_invalid', field: 'body.files[1].path' });
  });

  it('refuses an absolute path, a backslash and the envelope name', async () => {
    const outside = join(tempDir(), 'abs.txt');
    writeFileSync(outside, 'abs');
    for (const path of [outside, 'C:/x.txt', 'a\\b.txt', ENVELOPE_FILE, '.hidden']) {
      expect(await refusal(blobPackage([entry(path, 'abs')])), path).toEqual({
        code: 'manifest_invalid',
        field: 'body.files[0].path',
      });
    }
  });

  it('refuses duplicate paths, also differing only in case', async () => {
    const same = blobPackage([entry('a.txt', 'x'), entry('a.txt', 'x')], { 'a.txt': 'x' });
    expect(await refusal(same)).toEqual({ code: 'manifest_invalid', field: 'body.files[1].path' });
    const cased = blobPackage([entry('a.txt', 'x'), entry('b.txt', 'y'), entry('A.TXT', 'x')], {
      'a.txt': 'x',
      'b.txt': 'y',
    });
    expect(await refusal(cased)).toEqual({ code: 'manifest_invalid', field: 'body.files[2].path' });
  });

  it('refuses malformed file entries and more than MAX_FILES files', async () => {
    const negative = blobPackage([{ path: 'a.txt', size: -1, blake3: 'a'.repeat(64) }]);
    expect(await refusal(negative)).toEqual({ code: 'manifest_invalid', field: 'body.files[0].size' });
    const badHash = blobPackage([{ path: 'a.txt', size: 1, blake3: 'ZZ' }]);
    expect(await refusal(badHash)).toEqual({ code: 'manifest_invalid', field: 'body.files[0].blake3' });
    const many = Array.from({ length: MAX_FILES + 1 }, (_, i) => entry(`f${i}`, ''));
    expect(await refusal(blobPackage(many))).toEqual({ code: 'manifest_invalid', field: 'body.files' });
  });

  it('refuses a kind whose files() is not a list of files', async () => {
    const weird: KindDefinition<{ n: number }> = {
      kind: 'weird',
      bodySchema: z.strictObject({ n: z.int() }),
      files: () => 'nope' as never,
    };
    const registry = new KindRegistry().register(weird);
    expect(() => registry.parseBody('weird', { n: 1 })).toThrow(
      expect.objectContaining({ code: 'manifest_invalid', field: 'body.files' }),
    );
  });
});
