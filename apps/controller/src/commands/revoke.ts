import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { type ParsedArgs, parseArgv, positional, requiredString } from '@heddle/cli-kit';
import { type KeyPair, toHex } from '@heddle/envelope';
import type { RevocationKind } from '@heddle/model';
import { loadTrustFile, RevocationList } from '@heddle/package';
import { CliError, ExitCode, usageError } from '../cli-error.js';
import { REVOKE_ADD, REVOKE_LS, REVOKE_RENEW } from '../defs/tools.js';
import { type CliIo, emit } from '../io.js';
import { loadKey } from './pkg.js';

const DEFAULT_LIST = 'revocations.json';

/**
 * `heddle revoke <package|signer|artifact> <ref> --key FILE [--list FILE] [--trust FILE] [--reason TEXT]`
 * adds a signed entry to a revocation list (creating it when absent); `heddle revoke ls [--list FILE]
 * [--trust FILE]` prints it. With `--trust`, entries must be signed by its operator keys (and so must
 * the key that adds one); without it, `ls` only checks that each signature matches its named key.
 * Both refuse (`revocation_rollback`) a list older than the generation recorded in
 * `<list>.generation`, the high-water mark that adding (and `ls --trust`) raises.
 */
export function revoke(args: readonly string[], io: CliIo): number {
  const [sub, ...rest] = args;
  if (sub === 'ls') return list(rest, io);
  if (sub === 'renew') return renew(rest, io);
  if (sub === 'package' || sub === 'signer' || sub === 'artifact') return add(sub, rest, io);
  throw usageError(
    'usage: heddle revoke <package|signer|artifact> <ref> --key FILE --list FILE | heddle revoke renew --key FILE --list FILE [--above G] | heddle revoke ls --list FILE',
  );
}

function add(kind: RevocationKind, args: readonly string[], io: CliIo): number {
  const parsed = parseArgv('heddle', REVOKE_ADD[kind], args);
  const { strings, booleans } = parsed;
  const ref = positional(parsed, 0).toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(ref)) {
    throw usageError(
      `heddle revoke ${kind}: <ref> must be 64 hex characters (a ${kind === 'signer' ? 'public key' : 'BLAKE3 hash'})`,
      'ref',
    );
  }
  const { keys, path, current } = openForSigning(parsed, io);
  const next = current.add(
    {
      kind,
      ref,
      revokedAtMs: Date.now(),
      ...(strings.reason !== undefined ? { reason: strings.reason } : {}),
    },
    keys,
    signOptions(strings),
  );
  const changed = next !== current;
  if (changed) next.save(path);
  emit(
    io,
    booleans.json === true,
    { list: path, kind, ref, generation: next.generation, expires_at_ms: next.expiresAtMs ?? null, changed },
    () => [
      changed ? `revoked ${kind} ${ref}` : `${kind} ${ref} was already revoked`,
      `list ${path} at generation ${next.generation}${expiryText(next)}`,
    ],
  );
  return ExitCode.ok;
}

/** The signing key, the list path and the list as it is (an expired one included: it is being renewed). */
function openForSigning(
  parsed: ParsedArgs,
  io: CliIo,
): { keys: KeyPair; path: string; current: RevocationList } {
  const { strings } = parsed;
  const keys = loadKey(resolve(io.cwd, requiredString(parsed, 'key')));
  const signer = toHex(keys.publicKey);
  let trustedKeys = [signer];
  if (strings.trust !== undefined) {
    trustedKeys = loadTrustFile(resolve(io.cwd, strings.trust)).operatorKeys();
    if (!trustedKeys.includes(signer)) {
      throw new CliError(
        'untrusted_key',
        `the key ${signer} is not an operator key of the trust file`,
        ExitCode.badInput,
      );
    }
  }
  const path = resolve(io.cwd, strings.list ?? DEFAULT_LIST);
  const current = RevocationList.load(path, { trustedKeys, allowMissing: true, allowExpired: true });
  return { keys, path, current };
}

/** `--valid-days N` (1..366) as signing options. */
function signOptions(strings: ParsedArgs['strings']): { validForMs?: number } {
  const days = strings['valid-days'];
  if (days === undefined) return {};
  if (!/^[1-9][0-9]{0,2}$/.test(days) || Number(days) > 366) {
    throw usageError('--valid-days must be a whole number of days from 1 to 366', 'valid-days');
  }
  return { validForMs: Number(days) * 24 * 3600 * 1000 };
}

function expiryText(l: RevocationList): string {
  if (l.expiresAtMs === undefined) return '';
  return `, ${l.expired === undefined ? 'valid until' : 'EXPIRED at'} ${new Date(l.expiresAtMs).toISOString()}`;
}

/**
 * `heddle revoke renew --key FILE [--list FILE] [--trust FILE] [--valid-days N] [--above G]`: re-signs
 * the same entries at the next generation (or at G + 1, to get past a host's generation mark) with a
 * fresh expiry. How a list is kept from expiring, and the supported recovery of a host whose mark is
 * above the list.
 */
function renew(args: readonly string[], io: CliIo): number {
  const parsed = parseArgv('heddle', REVOKE_RENEW, args);
  const { strings, booleans } = parsed;
  let above: number | undefined;
  if (strings.above !== undefined) {
    if (!/^(0|[1-9][0-9]{0,9})$/.test(strings.above)) {
      throw usageError('--above must be a generation (a non-negative integer)', 'above');
    }
    above = Number(strings.above);
  }
  const { keys, path, current } = openForSigning(parsed, io);
  const next = current.renew(keys, { ...signOptions(strings), ...(above === undefined ? {} : { above }) });
  next.save(path);
  emit(
    io,
    booleans.json === true,
    {
      list: path,
      generation: next.generation,
      expires_at_ms: next.expiresAtMs ?? null,
      entries: next.entries.length,
    },
    () => [
      `renewed ${path}: generation ${next.generation}${expiryText(next)}, ${next.entries.length} entries`,
    ],
  );
  return ExitCode.ok;
}

function list(args: readonly string[], io: CliIo): number {
  const { strings, booleans } = parseArgv('heddle', REVOKE_LS, args);
  const path = resolve(io.cwd, strings.list ?? DEFAULT_LIST);
  const trust = strings.trust;
  const checked = trust !== undefined;
  // A list that does not exist yet is the empty list (nothing revoked), unless its generation mark
  // says a list was seen here before: then the missing file is a rollback and load refuses it.
  const l = checked
    ? RevocationList.load(path, {
        trustedKeys: loadTrustFile(resolve(io.cwd, trust)).operatorKeys(),
        allowExpired: true,
        allowMissing: true,
      })
    : RevocationList.load(path, {
        trustedKeys: [],
        trustNamedSigners: true,
        allowExpired: true,
        allowMissing: true,
      });
  if (!existsSync(path)) {
    emit(
      io,
      booleans.json === true,
      { list: path, exists: false, generation: 0, expires_at_ms: null, expired: false, entries: [] },
      () => [`no revocation list at ${path}: nothing is revoked (generation 0)`],
    );
    return ExitCode.ok;
  }
  emit(
    io,
    booleans.json === true,
    {
      list: path,
      exists: true,
      generation: l.generation,
      expires_at_ms: l.expiresAtMs ?? null,
      expired: l.expired !== undefined,
      signers_checked: checked,
      entries: l.entries,
    },
    () => [
      `${path}: generation ${l.generation}${expiryText(l)}, ${l.entries.length} entr${l.entries.length === 1 ? 'y' : 'ies'}`,
      ...(checked
        ? []
        : ['(signatures checked against the keys they name only; pass --trust to check the signers)']),
      ...l.entries.map(
        (e) =>
          `  ${e.kind.padEnd(8)} ${e.ref}  ${new Date(e.revoked_at_ms).toISOString()}  by ${e.signer.slice(0, 16)}${e.reason === undefined ? '' : `  ${e.reason}`}`,
      ),
    ],
  );
  return ExitCode.ok;
}
