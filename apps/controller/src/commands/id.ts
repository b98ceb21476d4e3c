import { resolve } from 'node:path';
import { errorMessage, parseArgv, positional } from '@heddle/cli-kit';
import {
  EnvelopeError,
  loadKeyFile,
  nodeIdFromPublicKey,
  parsePublicKey,
  publicKeyToPem,
  readTextBounded,
  toHex,
} from '@heddle/envelope';
import { CliError, ExitCode } from '../cli-error.js';
import { ID } from '../defs/local.js';
import { type CliIo, emit } from '../io.js';

/**
 * `heddle id <key>`: prints the node id and public key of a secret key file, a public key file (hex or
 * PEM), or a public key given inline as 64 hex characters.
 */
export function id(args: readonly string[], io: CliIo): number {
  const p = parseArgv('heddle', ID, args);
  const publicKey = resolvePublicKey(positional(p, 0), io.cwd);
  const result = {
    node_id: nodeIdFromPublicKey(publicKey),
    public_key: toHex(publicKey),
    public_key_pem: publicKeyToPem(publicKey),
  };
  emit(io, p.booleans.json === true, result, () => [
    `node id:    ${result.node_id}`,
    `public key: ${result.public_key}`,
  ]);
  return ExitCode.ok;
}

function resolvePublicKey(arg: string, cwd: string): Uint8Array {
  if (/^[0-9a-fA-F]{64}$/.test(arg)) return parsePublicKey(arg);
  const path = resolve(cwd, arg);
  let text: string;
  try {
    text = readTextBounded(path, 64 * 1024);
  } catch (err) {
    throw new CliError('key_unreadable', `cannot read ${arg}: ${errorMessage(err)}`, ExitCode.badInput);
  }
  try {
    if (text.includes('"heddle.ed25519.secret-key')) return loadKeyFile(path).publicKey;
    return parsePublicKey(text);
  } catch (err) {
    if (err instanceof EnvelopeError)
      throw new CliError(err.code, err.message, ExitCode.badInput, { cause: err });
    throw err;
  }
}
