import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { errorMessage, inputOrSystemError, parseArgv } from '@heddle/cli-kit';
import {
  generateKeyPair,
  makeDirs,
  nodeIdFromPublicKey,
  readTextBounded,
  saveKeyFile,
  toHex,
  writeFileAtomic,
} from '@heddle/envelope';
import { DEFAULT_POLICY, loadPolicyFile } from '@heddle/gate';
import { loadTrustFile, TRUST_SCHEMA } from '@heddle/package';
import { badInput, usageError } from '../cli-error.js';
import {
  API_HOST,
  CONTROLLER_CONFIG_SCHEMA,
  type ControllerConfigFile,
  DEFAULT_API_PORT,
  DEFAULT_REFRESH_SECS,
  parseControllerConfig,
} from '../controller-config.js';
import { INIT } from '../defs/local.js';
import { API_TOKEN_FILE, CONTROLLER_CONFIG_FILE, CONTROLLER_KEY_FILE, homeDir } from '../home.js';
import { type CliIo, emit } from '../io.js';
import { remoteTls } from '../remote-api.js';

const TRUST_FILE = 'trust.json';
const POLICY_FILE = 'policy.json';

/** The files `init` writes into the home, relative to it (as controller.json names them). */
export const HOME_LAYOUT = {
  key_file: CONTROLLER_KEY_FILE,
  trust_file: TRUST_FILE,
  policy_file: POLICY_FILE,
  revocation_list: 'revocations.json',
  state_db: 'state.db',
  chain_file: 'chain.jsonl',
  data_dir: 'data',
} as const;

function parsePort(text: string | undefined): number {
  if (text === undefined) return DEFAULT_API_PORT;
  const n = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= 0 && n <= 65_535)) {
    throw usageError(`--api-port: expected a port 0..65535, got ${JSON.stringify(text)}`, 'api-port');
  }
  return n;
}

/** `--remote <ip>:<port>` as `api.remote`'s host and port. */
function parseRemote(text: string | undefined): { host: string; port: number } | undefined {
  if (text === undefined) return undefined;
  const m = /^(\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-fA-F:]+\]):(\d{1,5})$/.exec(text);
  const port = Number(m?.[2]);
  if (m?.[1] === undefined || !(port >= 0 && port <= 65_535)) {
    throw usageError(`--remote: expected <ip>:<port> (0.0.0.0:7443), got ${JSON.stringify(text)}`, 'remote');
  }
  return { host: m[1].replace(/^\[|\]$/g, ''), port };
}

/** Reads a given file and checks it with `check` (exit 3 naming the flag when it does not pass). */
function given(io: CliIo, flag: string, path: string, check: (p: string) => unknown): string {
  const abs = resolve(io.cwd, path);
  try {
    check(abs);
    return readTextBounded(abs, 1024 * 1024);
  } catch (err) {
    throw badInput(`${flag}_invalid`, `--${flag}: ${abs}: ${errorMessage(err)}`, flag, err);
  }
}

/**
 * `heddle init [--home D] [--trust FILE] [--policy FILE] [--api-port N] [--force] [--json]`: creates
 * the controller home (mode 0700) with a controller key (0600), `controller.json`, trust anchors (the
 * given file, or one naming the controller key as an `operator`), a policy (the given file, or the
 * default policy), and an API token (0600). Prints the node id and the public key that hosts need.
 */
export function init(args: readonly string[], io: CliIo): number {
  const { strings, booleans } = parseArgv('heddle', INIT, args);
  const json = booleans.json === true;
  const force = booleans.force === true;
  const home = homeDir(strings.home, io);
  const port = parsePort(strings['api-port']);
  const remote = parseRemote(strings.remote);
  const trustFlag = strings.trust;
  const policyFlag = strings.policy;
  const trustText = trustFlag === undefined ? undefined : given(io, 'trust', trustFlag, loadTrustFile);
  const policyText = policyFlag === undefined ? undefined : given(io, 'policy', policyFlag, loadPolicyFile);

  const configPath = join(home, CONTROLLER_CONFIG_FILE);
  const keyPath = join(home, CONTROLLER_KEY_FILE);
  const tokenPath = join(home, API_TOKEN_FILE);
  const trustPath = join(home, TRUST_FILE);
  const policyPath = join(home, POLICY_FILE);
  if (!force) {
    for (const p of [configPath, keyPath, tokenPath, trustPath, policyPath]) {
      if (existsSync(p)) {
        throw badInput(
          'exists',
          `${p} already exists; pass --force to replace it (a new controller key: hosts must be told the new one)`,
          'home',
        );
      }
    }
  }
  const file: ControllerConfigFile = {
    schema: CONTROLLER_CONFIG_SCHEMA,
    api: { host: API_HOST, port, ...(remote === undefined ? {} : { remote }) },
    ...HOME_LAYOUT,
    refresh_secs: DEFAULT_REFRESH_SECS,
  };
  parseControllerConfig(file, configPath); // what init writes, run accepts
  try {
    makeDirs(home, 0o700);
    chmodSync(home, 0o700);
    makeDirs(join(home, HOME_LAYOUT.data_dir), 0o700);
  } catch (err) {
    throw inputOrSystemError('home_unusable', `cannot create ${home}: ${errorMessage(err)}`, 'home', err);
  }
  const keys = generateKeyPair();
  saveKeyFile(keyPath, keys, { overwrite: force });
  const publicKey = toHex(keys.publicKey);
  const nodeId = nodeIdFromPublicKey(keys.publicKey);
  writeFileAtomic(
    trustPath,
    trustText ??
      `${JSON.stringify({ schema: TRUST_SCHEMA, keys: [{ id: 'controller', role: 'operator', public_key: publicKey }] }, null, 2)}\n`,
  );
  writeFileAtomic(policyPath, policyText ?? `${JSON.stringify(DEFAULT_POLICY, null, 2)}\n`);
  writeFileAtomic(tokenPath, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  writeFileAtomic(configPath, `${JSON.stringify(file, null, 2)}\n`);
  // The remote listener's self-signed certificate is made now, so its fingerprint can be given to
  // operators before the daemon first runs.
  const tls =
    remote === undefined ? undefined : remoteTls(home, { ...remote, tls: undefined }, { replace: force });

  const notes: string[] = [];
  if (trustText === undefined) {
    notes.push(
      `${trustPath} names the controller key as an operator: packages signed with ${keyPath} verify (heddle pkg sign --key ${keyPath})`,
    );
  }
  notes.push(`authorise this controller on each host: heddle-host init --controller ${publicKey}`);
  if (remote !== undefined && tls !== undefined) {
    notes.push(
      `operators on other machines: heddle context add <name> --url https://<this machine>:${remote.port} --fingerprint ${tls.fingerprint} --key <their key>`,
    );
  }
  emit(
    io,
    json,
    {
      home,
      node_id: nodeId,
      public_key: publicKey,
      config: configPath,
      key_file: keyPath,
      trust_file: trustPath,
      policy_file: policyPath,
      token_file: tokenPath,
      api: { host: API_HOST, port },
      ...(remote === undefined || tls === undefined
        ? {}
        : { remote: { ...remote, fingerprint: tls.fingerprint } }),
      notes,
    },
    () => [
      `home        ${home} (mode 0700)`,
      `node id     ${nodeId}`,
      `public key  ${publicKey}`,
      `config      ${configPath}`,
      `key file    ${keyPath} (mode 0600)`,
      `trust file  ${trustPath}`,
      `policy      ${policyPath}${policyText === undefined ? ' (the default policy)' : ''}`,
      `api token   ${tokenPath} (mode 0600)`,
      ...(remote === undefined || tls === undefined
        ? []
        : [`remote api  https://${remote.host}:${remote.port} (TLS, certificate ${tls.fingerprint})`]),
      ...notes.map((n) => `note: ${n}`),
      `start it with: heddle controller run --home ${home}`,
    ],
  );
  return 0;
}
