import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createBlake3, fsyncDir, type KeyPair, writeFileAtomic } from '@heddle/envelope';
import { parseVariantName } from '@heddle/model';
import type { CogBody, CogVariant } from './cog.js';
import { defaultKindRegistry } from './cog.js';
import { COG_SOURCE_FILE, MAX_COG_SOURCE_BYTES, parseCogSource } from './cog-source.js';
import { PackageError } from './errors.js';
import { encodeEnvelope, type PackageEnvelope, type PackageFile } from './format.js';
import {
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_MAX_TOTAL_BYTES,
  ENVELOPE_FILE,
  PACKAGE_SCHEMA,
  type SizeLimits,
} from './limits.js';
import { type ParsedPackage, parseEnvelope } from './manifest.js';
import { firstDuplicatePath, inspectPackagePath } from './paths.js';
import { signEnvelope } from './sign.js';

/** Options of {@link buildCogPackage}. */
export interface BuildOptions extends SizeLimits {
  /** Replace the contents of a non-empty output directory that already holds a package (default false). */
  readonly force?: boolean;
  /** Keys to sign the new package with (optional; `signPackage` can add signatures later). */
  readonly keys?: readonly KeyPair[];
}

/** What {@link buildCogPackage} produced. */
export interface BuildResult {
  /** The output directory (absolute). */
  readonly dir: string;
  /** The package as a verifier will read it. */
  readonly package: ParsedPackage;
}

const failed = (message: string, field?: string, cause?: unknown): PackageError =>
  new PackageError('build_failed', message, { ...(field === undefined ? {} : { field }), cause });

/**
 * Builds a `cog` package from a source directory holding `cog.json`: the variant files and extra files
 * are copied into `outDir` (each hashed with BLAKE3 on the way, written atomically), the envelope is
 * written as canonical JSON. The same input always gives the same bytes. Refuses (`source_invalid`) a
 * malformed `cog.json`, and (`build_failed`) a listed file that is missing, a symbolic link, too large,
 * or an output directory that is not empty (unless `force` and it already holds a package).
 */
export async function buildCogPackage(
  srcDir: string,
  outDir: string,
  options: BuildOptions = {},
): Promise<BuildResult> {
  const src = resolve(srcDir);
  const out = resolve(outDir);
  const sourcePath = join(src, COG_SOURCE_FILE);
  const st = inspectPackagePath(src, COG_SOURCE_FILE);
  if (st.state !== 'file')
    throw new PackageError('source_invalid', `${sourcePath}: missing or not a regular file`, {
      field: COG_SOURCE_FILE,
    });
  if (st.size > MAX_COG_SOURCE_BYTES)
    throw new PackageError('source_invalid', `${sourcePath}: larger than ${MAX_COG_SOURCE_BYTES} bytes`);
  const source = parseCogSource(readFileSync(sourcePath, 'utf8'));

  const paths = [...new Set([...Object.values(source.variants), ...(source.files ?? [])])].sort();
  const dup = firstDuplicatePath(paths);
  if (dup !== undefined)
    throw new PackageError(
      'source_invalid',
      `${COG_SOURCE_FILE}: ${dup} is listed twice (paths compare case-insensitively)`,
      { field: 'files' },
    );
  prepareOutDir(out, src, options.force === true);

  const maxFile = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const maxTotal = options.maxTotalBytes ?? DEFAULT_MAX_TOTAL_BYTES;
  const files: PackageFile[] = [];
  let total = 0;
  for (const path of paths) {
    const state = inspectPackagePath(src, path);
    if (state.state === 'missing') throw failed(`${path}: listed in ${COG_SOURCE_FILE} but missing`, path);
    if (state.state === 'not-regular') throw failed(`${path}: ${state.why}`, path);
    if (state.size > maxFile)
      throw failed(`${path}: ${state.size} bytes exceeds the limit of ${maxFile}`, path);
    const file = await copyAndHash(
      join(src, ...path.split('/')),
      join(out, ...path.split('/')),
      path,
      maxFile,
    );
    total += file.size;
    if (total > maxTotal)
      throw failed(`files: ${total} bytes in total exceeds the limit of ${maxTotal}`, 'files');
    files.push(file);
  }

  const variants: Record<string, CogVariant> = {};
  for (const [name, file] of Object.entries(source.variants).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const v = parseVariantName(name);
    if (!v)
      throw new PackageError('source_invalid', `variants.${name}: not <arch>-<route>`, {
        field: `variants.${name}`,
      });
    variants[name] = { route: v.route, arch: v.arch, file };
  }
  const body: CogBody = {
    id: source.id,
    version: source.version,
    variants,
    files,
    config: source.config ?? {},
    console: source.console ?? [],
    resources: source.resources,
    ...(source.source === undefined ? {} : { source: source.source }),
    ...(source.redistributable === undefined ? {} : { redistributable: source.redistributable }),
  };
  let envelope: PackageEnvelope = {
    schema: PACKAGE_SCHEMA,
    kind: 'cog',
    // cast: a cog body is one of the envelope's body kinds (checked by the registry when read)
    body: body as unknown as PackageEnvelope['body'],
    signatures: [],
  };
  for (const keys of options.keys ?? []) envelope = signEnvelope(envelope, keys);
  const bytes = encodeEnvelope(envelope);
  // Parse what we are about to write with the verifier's own rules, so a build never emits a package
  // that verification would refuse as malformed.
  const parsed = parseEnvelope(bytes, {
    kinds: defaultKindRegistry(),
    maxFileBytes: maxFile,
    maxTotalBytes: maxTotal,
  });
  writeFileAtomic(join(out, ENVELOPE_FILE), bytes);
  return { dir: out, package: parsed };
}

function prepareOutDir(out: string, src: string, force: boolean): void {
  if (out === src) throw failed('the output directory must differ from the source directory', 'out');
  let entries: string[];
  try {
    entries = readdirSync(out);
  } catch {
    mkdirSync(out, { recursive: true });
    return;
  }
  if (entries.length === 0) return;
  if (!force || !entries.includes(ENVELOPE_FILE)) {
    throw failed(
      `${out} is not empty${force ? ' and holds no package' : ' (use force to replace a package)'}`,
      'out',
    );
  }
  for (const e of entries) rmSync(join(out, e), { recursive: true, force: true });
}

async function copyAndHash(from: string, to: string, path: string, maxBytes: number): Promise<PackageFile> {
  mkdirSync(dirname(to), { recursive: true });
  const tmp = join(dirname(to), `.${randomBytes(6).toString('hex')}.tmp`);
  const hasher = await createBlake3();
  const input = openSync(from, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  let output: number | undefined;
  let size = 0;
  try {
    output = openSync(tmp, 'wx', 0o644);
    const buffer = Buffer.allocUnsafe(1024 * 1024);
    for (;;) {
      const n = readSync(input, buffer, 0, buffer.length, size);
      if (n === 0) break;
      size += n;
      if (size > maxBytes)
        throw failed(`${path}: grew beyond the limit of ${maxBytes} bytes while copying`, path);
      const chunk = buffer.subarray(0, n);
      hasher.update(chunk);
      let off = 0;
      while (off < n) off += writeSync(output, chunk, off, n - off);
    }
    fsyncSync(output);
    closeSync(output);
    output = undefined;
    renameSync(tmp, to);
    fsyncDir(dirname(to));
  } catch (err) {
    if (output !== undefined) closeSync(output);
    rmSync(tmp, { force: true });
    throw err;
  } finally {
    closeSync(input);
  }
  return { path, size, blake3: hasher.digestHex() };
}
