import { resolve } from 'node:path';
import { errorMessage, parseArgv, requiredString } from '@heddle/cli-kit';
import { EnvelopeError, generateKeyPair, nodeIdFromPublicKey, saveKeyFile, toHex } from '@heddle/envelope';
import { CliError, ExitCode } from '../cli-error.js';
import { KEYGEN } from '../defs/local.js';
import { type CliIo, emit } from '../io.js';

/** `heddle keygen [--out FILE] [--force]`: writes a new Ed25519 key file (mode 0600). */
export function keygen(args: readonly string[], io: CliIo): number {
  const p = parseArgv('heddle', KEYGEN, args);
  const { booleans } = p;
  const path = resolve(io.cwd, requiredString(p, 'out'));
  const keys = generateKeyPair();
  try {
    saveKeyFile(path, keys, { overwrite: booleans.force === true });
  } catch (err) {
    if (err instanceof EnvelopeError)
      throw new CliError(err.code, err.message, ExitCode.badInput, { cause: err });
    throw new CliError('write_failed', `cannot write ${path}: ${errorMessage(err)}`, ExitCode.badInput);
  }
  const result = { path, node_id: nodeIdFromPublicKey(keys.publicKey), public_key: toHex(keys.publicKey) };
  emit(io, booleans.json === true, result, () => [
    `wrote ${path} (mode 0600)`,
    `node id:    ${result.node_id}`,
    `public key: ${result.public_key}`,
  ]);
  return ExitCode.ok;
}
