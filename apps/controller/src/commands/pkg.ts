import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgv, positional, requiredString } from '@heddle/cli-kit';
import { EnvelopeError, type KeyPair, loadKeyFile, writeFileAtomic } from '@heddle/envelope';
import {
  buildCogPackage,
  COG_SOURCE_FILE,
  cogSourceTemplate,
  defaultKindRegistry,
  loadTrustFile,
  NO_REVOCATIONS,
  PackageError,
  RevocationList,
  readEnvelope,
  signPackage,
  type VerifiedWorkload,
  verifyPackage,
} from '@heddle/package';
import { CliError, ExitCode, usageError } from '../cli-error.js';
import { PKG_BUILD, PKG_INIT, PKG_INSPECT, PKG_SIGN, PKG_VERIFY } from '../defs/tools.js';
import { type CliIo, emit } from '../io.js';

const SUBCOMMANDS = 'init | build | sign | verify | inspect';

/**
 * `heddle pkg <init|build|sign|verify|inspect>`: work with signed workload packages.
 *
 * - `pkg init [dir] [--id ID] [--force]` writes a `cog.json` template.
 * - `pkg build <src> -o <dir> [--key FILE] [--force]` builds a package (optionally signed).
 * - `pkg sign <dir> --key FILE` adds a signature.
 * - `pkg verify <dir> --trust FILE [--revocations FILE] [--max-file-bytes N]` verifies; exit 1 when refused.
 *   The list fails closed (unreadable, tampered, or older than the generation recorded in
 *   `<list>.generation`: every package is revoked); without `--revocations` nothing is checked for
 *   revocation, and the output says so.
 * - `pkg inspect <dir>` shows the envelope without checking trust.
 */
export async function pkg(args: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'init':
      return init(rest, io);
    case 'build':
      return build(rest, io);
    case 'sign':
      return sign(rest, io);
    case 'verify':
      return verify(rest, io);
    case 'inspect':
      return inspect(rest, io);
    default:
      throw usageError(`usage: heddle pkg <${SUBCOMMANDS}> ...`);
  }
}

/** Loads a secret key file, mapping failures to exit code 3. */
export function loadKey(path: string): KeyPair {
  try {
    return loadKeyFile(path);
  } catch (err) {
    if (err instanceof EnvelopeError)
      throw new CliError(err.code, err.message, ExitCode.badInput, { cause: err });
    throw err;
  }
}

function init(args: readonly string[], io: CliIo): number {
  const { strings, booleans, positionals } = parseArgv('heddle', PKG_INIT, args);
  const dir = resolve(io.cwd, positionals[0] ?? '.');
  const path = join(dir, COG_SOURCE_FILE);
  if (existsSync(path) && booleans.force !== true) {
    throw new CliError('exists', `${path} already exists (use --force to replace it)`, ExitCode.badInput);
  }
  const id = strings.id ?? 'hello-cog';
  if (!/^[a-z0-9][a-z0-9._-]{0,63}$/.test(id)) {
    throw usageError('heddle pkg init: --id must match [a-z0-9][a-z0-9._-]{0,63}', 'id');
  }
  mkdirSync(dir, { recursive: true });
  writeFileAtomic(path, `${JSON.stringify(cogSourceTemplate(id), null, 2)}\n`);
  emit(io, booleans.json === true, { path }, () => [
    `wrote ${path}`,
    'add the files it names, then: heddle pkg build <dir> -o <out>',
  ]);
  return ExitCode.ok;
}

async function build(args: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseArgv('heddle', PKG_BUILD, args);
  const { strings, booleans } = parsed;
  const keys = strings.key !== undefined ? [loadKey(resolve(io.cwd, strings.key))] : [];
  const result = await buildCogPackage(
    resolve(io.cwd, positional(parsed, 0)),
    resolve(io.cwd, requiredString(parsed, 'out')),
    {
      keys,
      force: booleans.force === true,
    },
  );
  const p = result.package;
  emit(
    io,
    booleans.json === true,
    {
      dir: result.dir,
      package_id: p.packageId,
      manifest_hash: p.manifestHash,
      files: p.files,
      signatures: p.envelope.signatures.map((s) => s.public_key),
    },
    () => [
      `built ${result.dir}`,
      `package id:    ${p.packageId}`,
      `manifest hash: ${p.manifestHash}`,
      ...p.files.map((f) => `  ${f.blake3}  ${String(f.size).padStart(10)}  ${f.path}`),
      p.envelope.signatures.length === 0
        ? 'unsigned: heddle pkg sign <dir> --key <file>'
        : `signed by ${p.envelope.signatures.length} key(s)`,
    ],
  );
  return ExitCode.ok;
}

function sign(args: readonly string[], io: CliIo): number {
  const parsed = parseArgv('heddle', PKG_SIGN, args);
  const keys = loadKey(resolve(io.cwd, requiredString(parsed, 'key')));
  const p = signPackage(resolve(io.cwd, positional(parsed, 0)), [keys]);
  const signers = p.envelope.signatures.map((s) => s.public_key);
  emit(
    io,
    parsed.booleans.json === true,
    { package_id: p.packageId, manifest_hash: p.manifestHash, signers },
    () => [
      `signed package ${p.packageId}`,
      `manifest hash: ${p.manifestHash}`,
      `signers: ${signers.join(', ')}`,
    ],
  );
  return ExitCode.ok;
}

async function verify(args: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseArgv('heddle', PKG_VERIFY, args);
  const { strings, booleans } = parsed;
  const anchors = loadTrustFile(resolve(io.cwd, requiredString(parsed, 'trust')));
  let maxFileBytes: number | undefined;
  if (strings['max-file-bytes'] !== undefined) {
    maxFileBytes = Number(strings['max-file-bytes']);
    if (!/^[0-9]{1,15}$/.test(strings['max-file-bytes']))
      throw usageError('--max-file-bytes must be a whole number', 'max-file-bytes');
  }
  // Enforced by default: loadOrFailClosed keeps the generation high-water mark next to the list.
  const revocations =
    strings.revocations !== undefined
      ? RevocationList.loadOrFailClosed(resolve(io.cwd, strings.revocations), {
          trustedKeys: anchors.operatorKeys(),
          // Verification reads the mark but never writes it: a read-only user can verify.
          readOnlyMark: true,
        })
      : undefined;
  const dir = resolve(io.cwd, positional(parsed, 0));
  let w: VerifiedWorkload;
  try {
    w = await verifyPackage(dir, {
      anchors,
      revocations: revocations ?? NO_REVOCATIONS,
      ...(maxFileBytes === undefined ? {} : { maxFileBytes }),
    });
  } catch (err) {
    if (!(err instanceof PackageError)) throw err;
    emit(
      io,
      booleans.json === true,
      { verdict: 'refused', code: err.code, field: err.field, message: err.message, dir },
      () => [`verdict: REFUSED (${err.code})`, err.message],
    );
    return ExitCode.checkFailed;
  }
  emit(
    io,
    booleans.json === true,
    {
      verdict: 'ok',
      dir,
      kind: w.kind,
      package_id: w.packageId,
      manifest_hash: w.manifestHash,
      signers: w.signerKeys.map((k, i) => ({ id: w.signerIds[i], public_key: k })),
      files: w.files.map((f) => ({ path: f.path, size: f.size, blake3: f.blake3 })),
      revocation_generation: revocations?.generation,
    },
    () => [
      `package id:    ${w.packageId}`,
      `manifest hash: ${w.manifestHash}`,
      `kind:          ${w.kind}`,
      `signers:       ${w.signerKeys.map((k, i) => `${w.signerIds[i]} (${k})`).join(', ')}`,
      'files:',
      ...w.files.map((f) => `  ${f.blake3}  ${String(f.size).padStart(10)}  ${f.path}`),
      revocations === undefined
        ? 'revocations:   not checked (no --revocations list)'
        : `revocations:   checked against generation ${revocations.generation}`,
      'verdict: OK',
    ],
  );
  return ExitCode.ok;
}

function inspect(args: readonly string[], io: CliIo): number {
  const parsed = parseArgv('heddle', PKG_INSPECT, args);
  const kinds = defaultKindRegistry();
  const p = readEnvelope(resolve(io.cwd, positional(parsed, 0)), { kinds });
  // cast: the registry's describe takes the body its own kind parsed (readEnvelope parsed it with that kind)
  const describe = kinds.get(p.envelope.kind)?.describe?.(p.body as never) ?? [];
  emit(
    io,
    parsed.booleans.json === true,
    {
      package_id: p.packageId,
      manifest_hash: p.manifestHash,
      kind: p.envelope.kind,
      body: p.envelope.body,
      signatures: p.envelope.signatures.map((s) => s.public_key),
    },
    () => [
      `package id:    ${p.packageId}`,
      `manifest hash: ${p.manifestHash}`,
      ...describe,
      'files:',
      ...p.files.map((f) => `  ${f.blake3}  ${String(f.size).padStart(10)}  ${f.path}`),
      `signatures (not checked; use heddle pkg verify): ${p.envelope.signatures.map((s) => s.public_key).join(', ') || 'none'}`,
    ],
  );
  return ExitCode.ok;
}
