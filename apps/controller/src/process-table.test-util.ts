// A test tool (not part of the app): the native workload processes of a test's hosts, read from the
// process table (/proc), never from a controller's or a host's records. A workload's environment
// carries `HEDDLE_INSTANCE_ID` and a `HEDDLE_DATA_DIR` under its host's data directory (the host
// contract, docs/runtimes.md); its command line carries the config values it was placed with
// (`--<field> <value>`, the cog convention of docs/writing-a-cog.md).
import { readdirSync, readFileSync } from 'node:fs';

/** One live workload process of a test's hosts. */
export interface WorkloadProcess {
  readonly pid: number;
  /** Its process group (a native workload leads one of its own; its children share it). */
  readonly group: number;
  readonly instanceId: string;
  /** `HEDDLE_DATA_DIR`: the host's data directory for the instance. */
  readonly dataDir: string;
  /** Its command line, one string per argument. */
  readonly argv: readonly string[];
}

/** Every live (not zombie) process whose `HEDDLE_DATA_DIR` is under `root`. */
export function workloadProcesses(root: string): WorkloadProcess[] {
  const out: WorkloadProcess[] = [];
  const prefix = `HEDDLE_DATA_DIR=${root.endsWith('/') ? root : `${root}/`}`;
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    let env: string[];
    let stat: string;
    let argv: string[];
    try {
      env = readFileSync(`/proc/${name}/environ`, 'latin1').split('\0');
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').slice(0, -1);
    } catch {
      continue; // gone meanwhile, or not ours to read
    }
    const dataDir = env.find((e) => e.startsWith(prefix))?.slice('HEDDLE_DATA_DIR='.length);
    const id = env.find((e) => e.startsWith('HEDDLE_INSTANCE_ID='))?.slice('HEDDLE_INSTANCE_ID='.length);
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (dataDir === undefined || id === undefined || fields[0] === 'Z') continue;
    out.push({ pid: Number(name), group: Number(fields[2]), instanceId: id, dataDir, argv });
  }
  return out;
}

/** The value of `--<flag> <value>` in `argv`, or undefined. */
export function flagValue(argv: readonly string[], flag: string): string | undefined {
  const i = argv.indexOf(`--${flag}`);
  return i < 0 ? undefined : argv[i + 1];
}

/**
 * The workload process groups by the value of config field `field` (`--<field> <value>` on their
 * command line), each by instance id: what really runs of each order, when each order carries its own
 * value.
 */
export function groupsByValue(root: string, field: string): Map<string, Map<string, Set<number>>> {
  const out = new Map<string, Map<string, Set<number>>>();
  for (const p of workloadProcesses(root)) {
    const v = flagValue(p.argv, field);
    if (v === undefined) continue;
    const byInstance = out.get(v) ?? new Map<string, Set<number>>();
    const groups = byInstance.get(p.instanceId) ?? new Set<number>();
    groups.add(p.group);
    byInstance.set(p.instanceId, groups);
    out.set(v, byInstance);
  }
  return out;
}

/** Ends (SIGKILL) every process group of `root`'s workloads (they outlive their host daemons). */
export function killWorkloads(root: string): void {
  for (const g of new Set(workloadProcesses(root).map((p) => p.group))) {
    try {
      process.kill(-g, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}
