import { resolve } from 'node:path';
import { parseArgv } from '@heddle/cli-kit';
import { nodeIdFromPublicKey, toHex } from '@heddle/envelope';
import { ID } from '../command-defs.js';
import { HOST_CONFIG_FILE, loadHostConfig } from '../config.js';
import { loadNodeKey } from '../daemon.js';
import { type CliIo, emit } from '../io.js';
import { DEFAULT_HOST_DIR } from './init.js';

/** The config path a command uses: `--config`, else `./heddle-host/heddle-host.json`. */
export function configPath(flag: string | undefined, io: CliIo): string {
  return resolve(io.cwd, flag ?? `${DEFAULT_HOST_DIR}/${HOST_CONFIG_FILE}`);
}

/** `heddle-host id [--config F] [--json]`: prints the node id and public key of the configured key. */
export function id(args: readonly string[], io: CliIo): number {
  const a = parseArgv('heddle-host', ID, args);
  const config = loadHostConfig(configPath(a.strings.config, io));
  const keys = loadNodeKey(config);
  const nodeId = nodeIdFromPublicKey(keys.publicKey);
  const publicKey = toHex(keys.publicKey);
  emit(io, a.booleans.json === true, { node_id: nodeId, public_key: publicKey }, () => [
    `node id     ${nodeId}`,
    `public key  ${publicKey}`,
  ]);
  return 0;
}
