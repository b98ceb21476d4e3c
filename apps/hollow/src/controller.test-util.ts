// A real controller daemon for the hollow-host tests: a home written as `heddle init` writes it (with
// short timers), and `heddle controller run` started from source as a child process
// (`node --import tsx apps/controller/src/bin.ts`, @heddle/* mapped to the packages' sources).
import { randomBytes } from 'node:crypto';
import { chmodSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type LoggedProcess, spawnLogged, waitForLog } from '@heddle/cli-kit/testing';
import { generateKeyPair, type KeyPair, saveKeyFile, toHex } from '@heddle/envelope';
import { buildCogPackage } from '@heddle/package';

const here = fileURLToPath(new URL('.', import.meta.url));
const ROOT = resolve(here, '..', '..', '..');
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** Signed cogs (place, load, start, stop, unload) on paired nodes, any network. */
export const TEST_POLICY = {
  version: 1,
  name: 'hollow-test',
  rules: [
    {
      id: 'cogs',
      effect: 'permit',
      actions: ['workload.place', 'workload.load', 'workload.start', 'workload.stop', 'workload.unload'],
      kinds: ['cog'],
      min_node_tier: 'paired',
      max_network: 'egress',
    },
  ],
};

/** A controller home and its daemon. */
export interface TestController {
  readonly home: string;
  readonly keys: KeyPair;
  readonly daemon: LoggedProcess;
  /** The trust file (pins the operator key), for the hosts too. */
  readonly trustFile: string;
  /** The policy file, for the hosts too. */
  readonly policyFile: string;
}

/** Writes a controller home under `root` (dead_after `deadAfterSecs`, refresh 1 s) and starts its daemon. */
export async function startController(
  root: string,
  operator: KeyPair,
  deadAfterSecs: number,
): Promise<TestController> {
  const home = join(root, 'controller');
  mkdirSync(join(home, 'data'), { recursive: true, mode: 0o700 });
  chmodSync(home, 0o700);
  const keys = generateKeyPair();
  saveKeyFile(join(home, 'controller.key'), keys);
  const trustFile = join(root, 'trust.json');
  writeFileSync(
    trustFile,
    JSON.stringify({
      schema: 'heddle.trust.v1',
      keys: [{ id: 'operator', role: 'operator', public_key: toHex(operator.publicKey) }],
    }),
  );
  cpSync(trustFile, join(home, 'trust.json'));
  const policyFile = join(root, 'policy.json');
  writeFileSync(policyFile, JSON.stringify(TEST_POLICY));
  cpSync(policyFile, join(home, 'policy.json'));
  writeFileSync(join(home, 'api.token'), `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  writeFileSync(
    join(home, 'controller.json'),
    JSON.stringify({
      schema: 'heddle.controller.v1',
      api: { host: '127.0.0.1', port: 0 },
      key_file: 'controller.key',
      trust_file: 'trust.json',
      policy_file: 'policy.json',
      revocation_list: 'revocations.json',
      state_db: 'state.db',
      chain_file: 'chain.jsonl',
      data_dir: 'data',
      refresh_secs: 1,
      lifecycle: { dead_after_secs: deadAfterSecs, reschedule_backoff_secs: 1, health_timeout_secs: 2 },
    }),
  );
  const dir = join(ROOT, 'apps', 'controller');
  const daemon = spawnLogged(
    process.execPath,
    ['--import', tsx, join(dir, 'src', 'bin.ts'), 'controller', 'run', '--home', home],
    { cwd: root, env: { ...process.env, TSX_TSCONFIG_PATH: join(dir, 'tsconfig.source.json') } },
  );
  await waitForLog(daemon, 'listening', 30_000);
  return { home, keys, daemon, trustFile, policyFile };
}

/** examples/native-cog, signed by `signer`, built under `root`; returns the package directory. */
export async function nativeCogPackage(root: string, signer: KeyPair): Promise<string> {
  const out = join(root, 'native-cog.pkg');
  await buildCogPackage(join(ROOT, 'examples', 'native-cog'), out, { keys: [signer] });
  return out;
}

/** The example cog's id (its `cog.json`). */
export function nativeCogId(): string {
  // cast: the repository's own example cog.json
  return (
    JSON.parse(readFileSync(join(ROOT, 'examples', 'native-cog', 'cog.json'), 'utf8')) as { id: string }
  ).id;
}
