// The real daemons of a fault-injection cluster: homes written by hand (what `heddle init` and
// `heddle-host init` write, with short timers), and the controller and host daemons started from source
// as child processes (`node --import tsx <app>/src/bin.ts`, with the app's tsconfig.source.json mapping
// @heddle/* to the packages' sources, so no build is needed).
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type LoggedProcess, spawnLogged, tempDir } from '@heddle/cli-kit/testing';
import { ControllerConfigFileSchema } from '@heddle/control-plane';
import { generateKeyPair, type KeyPair, nodeIdFromPublicKey, saveKeyFile, toHex } from '@heddle/envelope';
import { HostConfigFileSchema } from '@heddle/host-service';

const here = fileURLToPath(new URL('.', import.meta.url));
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const APPS = resolve(here, '..', '..');

/** A daemon child process and what it logged. */
export type Daemon = LoggedProcess;

/** The policy of the controller and every host: signed cogs on paired nodes, any network (native included). */
export const FAULTS_POLICY: object = {
  version: 1,
  name: 'faults',
  description: 'Fault-injection suite: operator-signed cogs on paired nodes, any network.',
  rules: [
    {
      id: 'faults-cogs',
      effect: 'permit',
      actions: ['workload.place', 'workload.load', 'workload.start', 'workload.stop', 'workload.unload'],
      kinds: ['cog'],
      min_package_trust: 'operator_attested',
      min_node_tier: 'paired',
      max_network: 'egress',
    },
  ],
};

/**
 * Timers the suite would like shorter than the defaults, by the configuration field that would carry
 * them. Only the fields the daemon's configuration schema knows are written (the schemas are strict),
 * so the suite uses each one as soon as the daemon offers it.
 */
export const CONTROLLER_TUNABLES: Readonly<Record<string, unknown>> = {
  refresh_secs: 1,
  call_timeout_secs: 3,
  place_timeout_secs: 30,
  shutdown_grace_secs: 1,
  // Not offered (yet): how long a lost place answer is reconciled before it is kept unsettled.
  reconcile_timeout_secs: 3,
  lifecycle: {
    dead_after_secs: 8,
    reschedule_backoff_secs: 1,
    reschedule_backoff_max_secs: 10,
    reschedule_timeout_secs: 20,
    health_timeout_secs: 2,
  },
};

/** The same for hosts (`heddle-host.json`). */
export const HOST_TUNABLES: Readonly<Record<string, unknown>> = {
  shutdown_grace_secs: 1,
  revocation_check_secs: 1,
  supervisor: { interval_ms: 250 },
};

/** The parts of a zod schema {@link knownFields} uses. */
interface Parser {
  safeParse(value: unknown):
    | { success: true }
    | {
        success: false;
        error: { issues: readonly { code: string; path: PropertyKey[]; keys?: string[] }[] };
      };
}

/**
 * The entries of `wanted` the strict zod object `schema` declares, nested objects filtered the same
 * way (a section the schema declares keeps only the fields it declares; an empty one is left out).
 * Found by parsing `wanted` and dropping what the schema reports as unrecognized keys, so it works
 * through any schema (optional sections, transforms) without looking into its shape.
 */
export function knownFields(
  schema: Parser,
  wanted: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const r = schema.safeParse(wanted);
  const unknown = new Set<string>();
  if (!r.success) {
    for (const issue of r.error.issues) {
      if (issue.code !== 'unrecognized_keys') continue;
      for (const key of issue.keys ?? []) unknown.add(JSON.stringify([...issue.path.map(String), key]));
    }
  }
  const filter = (value: Readonly<Record<string, unknown>>, at: string[]): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (unknown.has(JSON.stringify([...at, k]))) continue;
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
        const inner = filter(Object.fromEntries(Object.entries(v)), [...at, k]);
        if (Object.keys(inner).length > 0) out[k] = inner;
      } else out[k] = v;
    }
    return out;
  };
  return filter(wanted, []);
}

/** Controller tunables the controller in this tree accepts (see {@link CONTROLLER_TUNABLES}). */
export function controllerTunables(): Record<string, unknown> {
  return knownFields(ControllerConfigFileSchema, CONTROLLER_TUNABLES);
}

/** Host tunables the host in this tree accepts (see {@link HOST_TUNABLES}). */
export function hostTunables(): Record<string, unknown> {
  return knownFields(HostConfigFileSchema, HOST_TUNABLES);
}

/** A fresh cluster root that native workloads (run as `nobody` under root) can pass through. */
export function clusterRoot(): string {
  const dir = tempDir('heddle-faults-');
  chmodSync(dir, 0o711);
  return dir;
}

/** A free TCP port on 127.0.0.1 (listened on and released). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const a = s.address();
  const port = typeof a === 'object' && a !== null ? a.port : 0;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

function trustFile(operator: KeyPair): string {
  return JSON.stringify({
    schema: 'heddle.trust.v1',
    keys: [{ id: 'operator', role: 'operator', public_key: toHex(operator.publicKey) }],
  });
}

/** A controller home: key, trust (the operator key), the suite's policy, an API token, short timers. */
export function writeControllerHome(home: string, operator: KeyPair): { keys: KeyPair; nodeId: string } {
  mkdirSync(join(home, 'data'), { recursive: true, mode: 0o700 });
  chmodSync(home, 0o700);
  const keys = generateKeyPair();
  saveKeyFile(join(home, 'controller.key'), keys);
  writeFileSync(join(home, 'trust.json'), trustFile(operator));
  writeFileSync(join(home, 'policy.json'), JSON.stringify(FAULTS_POLICY));
  writeFileSync(join(home, 'api.token'), `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  const config = {
    schema: 'heddle.controller.v1',
    api: { host: '127.0.0.1', port: 0 },
    key_file: 'controller.key',
    trust_file: 'trust.json',
    policy_file: 'policy.json',
    revocation_list: 'revocations.json',
    state_db: 'state.db',
    chain_file: 'chain.jsonl',
    data_dir: 'data',
    ...controllerTunables(),
  };
  writeFileSync(join(home, 'controller.json'), JSON.stringify(config, null, 2));
  return { keys, nodeId: nodeIdFromPublicKey(keys.publicKey) };
}

/** What a host home needs: who may call it, whom it trusts, and its fixed port. */
export interface HostHomeOptions {
  readonly controllerKey: KeyPair;
  /** A second authorised key the suite reads hosts' listings with (never the controller's own). */
  readonly observerKey: KeyPair;
  readonly operator: KeyPair;
  readonly port: number;
}

/** A host home: native and WASI routes, tier paired, listening on 127.0.0.1:`port` (kept across restarts). */
export function writeHostHome(
  dir: string,
  o: HostHomeOptions,
): { config: string; dataDir: string; nodeId: string; keys: KeyPair } {
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir, { recursive: true, mode: 0o711 });
  chmodSync(dir, 0o711);
  const keys = generateKeyPair();
  saveKeyFile(join(dir, 'node.key'), keys);
  writeFileSync(join(dir, 'trust.json'), trustFile(o.operator));
  writeFileSync(join(dir, 'policy.json'), JSON.stringify(FAULTS_POLICY));
  const config = join(dir, 'heddle-host.json');
  const root = process.getuid?.() === 0;
  writeFileSync(
    config,
    JSON.stringify(
      {
        schema: 'heddle.host.v1',
        listen: { host: '127.0.0.1', port: o.port },
        key_file: 'node.key',
        controllers: [
          { public_key: toHex(o.controllerKey.publicKey), name: 'controller' },
          { public_key: toHex(o.observerKey.publicKey), name: 'faults-observer' },
        ],
        trust_file: 'trust.json',
        revocation_list: 'revocations.json',
        routes: ['native', 'wasi'],
        tier: 'paired',
        policy_file: 'policy.json',
        data_dir: 'data',
        native: root ? { run_as_user: 'nobody' } : { allow_host_user: true },
        ...hostTunables(),
      },
      null,
      2,
    ),
  );
  return { config, dataDir, nodeId: nodeIdFromPublicKey(keys.publicKey), keys };
}

function spawnApp(app: 'controller' | 'host', args: readonly string[], cwd: string): Daemon {
  const dir = join(APPS, app);
  return spawnLogged(process.execPath, ['--import', tsx, join(dir, 'src', 'bin.ts'), ...args], {
    cwd,
    env: { ...process.env, TSX_TSCONFIG_PATH: join(dir, 'tsconfig.source.json') },
  });
}

/** Starts `heddle controller run --home <home>` from source. */
export function spawnControllerDaemon(home: string, cwd: string): Daemon {
  return spawnApp('controller', ['controller', 'run', '--home', home], cwd);
}

/** Starts `heddle-host run --config <config>` from source. */
export function spawnHostDaemon(config: string, cwd: string): Daemon {
  return spawnApp('host', ['run', '--config', config], cwd);
}

/** A native workload process a host started (from its pid file), alive now. */
export interface NativeProcess {
  readonly instanceDir: string;
  readonly pid: number;
}

/** The start time of `pid` (`/proc/<pid>/stat` field 22), or undefined when it does not run. */
function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z') return undefined; // a zombie does not run
    return fields[19];
  } catch {
    return undefined;
  }
}

/**
 * The native workload processes still running under a host's data directory: every
 * `<data_dir>/native/<instance>/run.pid.json` whose process runs with the recorded start time (so a
 * reused pid is not mistaken for it). They lead their own process group and outlive a host killed
 * with SIGKILL.
 */
export function nativeProcesses(dataDir: string): NativeProcess[] {
  const root = join(dataDir, 'native');
  if (!existsSync(root)) return [];
  const out: NativeProcess[] = [];
  for (const name of readdirSync(root)) {
    const file = join(root, name, 'run.pid.json');
    if (!existsSync(file)) continue;
    try {
      // cast: both fields are typed unknown and checked before use.
      const rec = JSON.parse(readFileSync(file, 'utf8')) as { pid?: unknown; startTime?: unknown };
      if (typeof rec.pid !== 'number' || rec.pid <= 1) continue;
      const now = startTimeOf(rec.pid);
      if (now !== undefined && (rec.startTime === null || rec.startTime === now)) {
        out.push({ instanceDir: join(root, name), pid: rec.pid });
      }
    } catch {
      // a torn pid file: its writer died mid-write
    }
  }
  return out;
}

/** A workload process found in the process table: its instance, pid and process group. */
export interface WorkloadProcess {
  readonly instanceId: string;
  readonly pid: number;
  readonly pgid: number;
}

/**
 * Every live process of a workload a host under `dataDir` started, found from the process table (not
 * from pid files, which a host tricked into a second copy does not keep for it): each process whose
 * environment has `HEDDLE_INSTANCE_ID` and a `HEDDLE_DATA_DIR` inside `dataDir` (the host contract,
 * docs/runtimes.md). Children a workload started share its environment and its process group: one
 * copy of an instance is one process group.
 */
export function workloadProcesses(dataDir: string): WorkloadProcess[] {
  const prefix = `HEDDLE_DATA_DIR=${resolve(dataDir)}/`;
  const out: WorkloadProcess[] = [];
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n));
  } catch {
    return out;
  }
  for (const name of pids) {
    const pid = Number(name);
    if (pid === process.pid) continue;
    let env: string[];
    let stat: string;
    try {
      env = readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile, or not ours to read
    }
    if (!env.some((e) => e.startsWith(prefix))) continue;
    const id = env.find((e) => e.startsWith('HEDDLE_INSTANCE_ID='))?.slice('HEDDLE_INSTANCE_ID='.length);
    if (id === undefined || id === '') continue;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z') continue; // a zombie does not run
    out.push({ instanceId: id, pid, pgid: Number(fields[2]) });
  }
  return out;
}

/** The copies of each instance running under `dataDir`: instance id to one pid per process group. */
export function workloadCopies(dataDir: string): Map<string, number[]> {
  const groups = new Map<string, Map<number, number>>();
  for (const p of workloadProcesses(dataDir)) {
    let g = groups.get(p.instanceId);
    if (g === undefined) {
      g = new Map();
      groups.set(p.instanceId, g);
    }
    const leader = g.get(p.pgid);
    if (leader === undefined || p.pid === p.pgid) g.set(p.pgid, p.pid);
  }
  return new Map([...groups].map(([id, g]) => [id, [...g.values()]]));
}

/**
 * Kills (SIGKILL, whole process group) every native workload still running under `dataDir`, found
 * from pid files and from the process table, but those of `except` (instance ids).
 */
export function killNativeProcesses(dataDir: string, except: ReadonlySet<string> = new Set()): number {
  let n = 0;
  const table = workloadProcesses(dataDir);
  const leaders = new Set(table.filter((p) => p.pid === p.pgid).map((p) => p.pid));
  const found = [
    ...nativeProcesses(dataDir).map((p) => ({ id: basename(p.instanceDir), pid: p.pid, group: true })),
    // A group is killed whole only when a workload process leads it (never a daemon's own group).
    ...table.map((p) => ({ id: p.instanceId, pid: p.pid, group: leaders.has(p.pgid) && p.pid === p.pgid })),
  ];
  for (const p of found) {
    if (except.has(p.id)) continue;
    for (const target of p.group ? [-p.pid, p.pid] : [p.pid]) {
      try {
        process.kill(target, 'SIGKILL');
        n++;
        break;
      } catch {
        // not a group leader, or already gone
      }
    }
  }
  return n;
}
