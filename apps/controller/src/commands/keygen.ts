import { resolve } from 'node:path';
import { EnvelopeError, generateKeyPair, nodeIdFromPublicKey, saveKeyFile, toHex } from '@heddle/envelope';
import { parseCommandArgs } from '../args.js';
import { CliError, ExitCode } from '../cli-error.js';
import { messageOf } from '../error-text.js';
import { type CliIo, emit } from '../io.js';

/** `heddle keygen [--out FILE] [--force]`: writes a new Ed25519 key file (mode 0600). */
export function keygen(args: readonly string[], io: CliIo): number {
  const { flags } = parseCommandArgs(
    'keygen',
    args,
    { out: 'string', force: 'boolean' },
    {
      min: 0,
      max: 0,
      names: '[--out FILE] [--force] [--json]',
    },
  );
  const path = resolve(io.cwd, (flags.out as string | undefined) ?? 'heddle.key');
  const keys = generateKeyPair();
  try {
    saveKeyFile(path, keys, { overwrite: flags.force === true });
  } catch (err) {
    if (err instanceof EnvelopeError)
      throw new CliError(err.code, err.message, ExitCode.badInput, { cause: err });
    throw new CliError('write_failed', `cannot write ${path}: ${messageOf(err)}`, ExitCode.badInput);
  }
  const result = { path, node_id: nodeIdFromPublicKey(keys.publicKey), public_key: toHex(keys.publicKey) };
  emit(io, flags.json === true, result, () => [
    `wrote ${path} (mode 0600)`,
    `node id:    ${result.node_id}`,
    `public key: ${result.public_key}`,
  ]);
  return ExitCode.ok;
}
