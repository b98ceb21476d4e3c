import { copyFileSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { badInput, inputOrSystemError, parseArgv, usageError } from '@heddle/cli-kit';
import {
  generateKeyPair,
  makeDirs,
  nodeIdFromPublicKey,
  parsePublicKey,
  saveKeyFile,
  toHex,
  writeFileAtomic,
} from '@heddle/envelope';
import { COG_ROUTES, type CogRoute, isCogRoute, isNodeTier, NODE_TIERS, type NodeTier } from '@heddle/model';
import { INIT } from '../command-defs.js';
import { HOST_CONFIG_FILE, HOST_CONFIG_SCHEMA, type HostConfigFile, parseHostConfig } from '../config.js';
import { EMPTY_TRUST_FILE, loadHostAnchors } from '../host-trust.js';
import { type CliIo, emit } from '../io.js';
import { nativeRouteWithheld } from '../native-user-check.js';

/** Default directory of `init`. */
export const DEFAULT_HOST_DIR = 'heddle-host';
/** Default listen address of `init`. */
export const DEFAULT_LISTEN = '0.0.0.0:7400';

const KEY_FILE = 'node.key';
const TRUST_FILE = 'trust.json';
const REVOCATION_FILE = 'revocations.json';
const DATA_DIR = 'data';

/** Parses `HOST:PORT` (`[::1]:7400` for IPv6). */
export function parseListen(text: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s[\]]+)):(\d{1,5})$/.exec(text);
  const port = m === null ? Number.NaN : Number(m[3]);
  if (m === null || port > 65_535) {
    throw usageError(`--listen: expected HOST:PORT (port 0..65535), got ${JSON.stringify(text)}`, 'listen');
  }
  return { host: m[1] ?? m[2] ?? '', port };
}

function parseRoutes(text: string): CogRoute[] {
  const routes = text.split(',').map((r) => r.trim());
  const unique: CogRoute[] = [];
  for (const r of new Set(routes)) {
    if (!isCogRoute(r)) {
      throw usageError(
        `--routes: unknown route ${JSON.stringify(r)} (expected ${COG_ROUTES.join(', ')})`,
        'routes',
      );
    }
    unique.push(r);
  }
  return unique;
}

function parseTier(text: string): NodeTier {
  if (!isNodeTier(text)) {
    throw usageError(`--tier: expected one of ${NODE_TIERS.join(', ')}, got ${JSON.stringify(text)}`, 'tier');
  }
  return text;
}

function parseController(text: string, i: number): string {
  try {
    return toHex(parsePublicKey(text));
  } catch (err) {
    throw usageError(
      `--controller #${i + 1}: not an Ed25519 public key: ${err instanceof Error ? err.message : String(err)}`,
      'controller',
    );
  }
}

/**
 * `heddle-host init [--dir D] [--listen HOST:PORT] [--controller PUBKEY]... [--trust FILE]
 * [--routes native,wasi] [--tier T] [--force] [--json]`: creates a node key (0600), a config, a trust
 * file and a data directory in D, and prints the node id and public key.
 */
export function init(args: readonly string[], io: CliIo): number {
  const { strings, booleans, lists } = parseArgv('heddle-host', INIT, args);
  const json = booleans.json === true;
  const force = booleans.force === true;
  const dir = resolve(io.cwd, strings.dir ?? DEFAULT_HOST_DIR);
  const listen = parseListen(strings.listen ?? DEFAULT_LISTEN);
  const controllers = (lists.controller ?? []).map(parseController);
  const routes = parseRoutes(strings.routes ?? 'native,wasi');
  const tier = parseTier(strings.tier ?? 'paired');
  const trustSource = strings.trust;
  const trustAnchors =
    trustSource === undefined ? 0 : loadHostAnchors(resolve(io.cwd, trustSource)).anchors.length;

  const configPath = join(dir, HOST_CONFIG_FILE);
  const keyPath = join(dir, KEY_FILE);
  const trustPath = join(dir, TRUST_FILE);
  if (!force) {
    for (const p of [configPath, keyPath, trustPath]) {
      if (existsSync(p)) {
        throw badInput(
          'exists',
          `${p} already exists; pass --force to replace it (a new key, a new node id)`,
          'dir',
        );
      }
    }
  }
  const file: HostConfigFile = {
    schema: HOST_CONFIG_SCHEMA,
    listen,
    key_file: KEY_FILE,
    controllers: controllers.map((public_key) => ({ public_key })),
    trust_file: TRUST_FILE,
    revocation_list: REVOCATION_FILE,
    routes,
    tier,
    data_dir: DATA_DIR,
    native: {},
    limits: {},
    revocation_check_secs: 10,
  };
  parseHostConfig(file, configPath); // what init writes, run accepts
  // 0711: others may pass through (a native workload running as another user must reach its own
  // directories below) but not list; the key file itself is 0600.
  try {
    makeDirs(dir, 0o711);
    makeDirs(join(dir, DATA_DIR), 0o711);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw inputOrSystemError('dir_unusable', `cannot create ${dir}: ${why}`, 'dir', err);
  }
  const keys = generateKeyPair();
  saveKeyFile(keyPath, keys, { overwrite: force });
  if (trustSource === undefined) writeFileAtomic(trustPath, EMPTY_TRUST_FILE);
  else copyFileSync(resolve(io.cwd, trustSource), trustPath);
  writeFileAtomic(configPath, `${JSON.stringify(file, null, 2)}\n`);

  const nodeId = nodeIdFromPublicKey(keys.publicKey);
  const publicKey = toHex(keys.publicKey);
  const notes: string[] = [];
  if (trustAnchors === 0) {
    notes.push(
      `${trustPath} pins no key: this host verifies no package until you add an operator key to it (see docs/host.md)`,
    );
  }
  if (controllers.length === 0) {
    notes.push(`no controller is authorised: add one to "controllers" in ${configPath}`);
  }
  if (routes.includes('native') && process.getuid?.() === 0) {
    notes.push(
      'running as root: set native.run_as_user to an unprivileged account, or native workloads are refused',
    );
  }
  const withheld = nativeRouteWithheld({ routes, runAsUser: undefined, uid: process.getuid?.() });
  if (withheld !== undefined) notes.push(withheld);
  emit(
    io,
    json,
    {
      node_id: nodeId,
      public_key: publicKey,
      config: configPath,
      key_file: keyPath,
      trust_file: trustPath,
      trust_anchors: trustAnchors,
      controllers: controllers.length,
      notes,
    },
    () => [
      `node id     ${nodeId}`,
      `public key  ${publicKey}`,
      `config      ${configPath}`,
      `key file    ${keyPath} (mode 0600)`,
      `trust file  ${trustPath} (${trustAnchors} pinned key${trustAnchors === 1 ? '' : 's'})`,
      ...notes.map((n) => `note: ${n}`),
      `start it with: heddle-host run --config ${configPath}`,
    ],
  );
  return 0;
}
