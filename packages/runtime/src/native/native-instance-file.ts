import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type JsonValue, parseJson, readTextBounded, writeFileAtomic } from '@heddle/envelope';
import { z } from 'zod';
import type { HostContract, RunMode } from '../workload.js';

/** What load records in the instance directory (`instance.json`, mode 0600: it may hold the ingest token). */
export interface NativeInstanceRecord {
  readonly instanceId: string;
  readonly workloadRef: string;
  readonly workloadId: string;
  readonly version: string;
  /** The instance's copy of the verified executable. */
  readonly executable: string;
  /** Config arguments (`--<field> <value>` pairs). */
  readonly configArgs: readonly string[];
  readonly runMode: RunMode;
  readonly host: HostContract;
  readonly values: Readonly<Record<string, JsonValue>>;
}

/** The pid file of a running instance (`run.pid.json`): enough to find the same process after a restart. */
export interface NativePidRecord {
  readonly pid: number;
  /** The process's start time as the OS reports it (`/proc/<pid>/stat` field 22, or `ps -o lstart`). */
  readonly startTime: string | null;
  readonly startedAtMs: number;
}

/** File name of the instance record inside the instance directory. */
export const INSTANCE_FILE = 'instance.json';
/** File name of the pid file inside the instance directory. */
export const PID_FILE = 'run.pid.json';

const RunModeSchema = z.union([
  z.object({ type: z.literal('once') }),
  z.object({ type: z.literal('interval'), secs: z.number() }),
  z.object({ type: z.literal('listener') }),
]);

const HostContractSchema = z.object({
  nodeId: z.string(),
  dataDir: z.string(),
  sensorFeedPort: z.number().exactOptional(),
  ingestUrl: z.string().exactOptional(),
  ingestToken: z.string().exactOptional(),
});

/** The shape of `instance.json` (a file the host wrote, read back after a restart: checked, not trusted). */
const InstanceRecordSchema = z.object({
  instanceId: z.string(),
  workloadRef: z.string(),
  workloadId: z.string(),
  version: z.string(),
  executable: z.string(),
  configArgs: z.array(z.string()),
  runMode: RunModeSchema,
  host: HostContractSchema,
  values: z.record(z.string(), z.json()),
}) satisfies z.ZodType<NativeInstanceRecord>;

/** The shape of `run.pid.json`: a pid that can lead a process group (above 1). */
const PidRecordSchema = z.object({
  pid: z.number().int().min(2).max(Number.MAX_SAFE_INTEGER),
  startTime: z.string().nullable(),
  startedAtMs: z.number(),
}) satisfies z.ZodType<NativePidRecord>;

/** Writes the instance record atomically. */
export function writeInstanceRecord(dir: string, record: NativeInstanceRecord): void {
  writeFileAtomic(join(dir, INSTANCE_FILE), `${JSON.stringify(record)}\n`, { mode: 0o600 });
}

/** Reads the instance record, or undefined when it is missing, unreadable or not of the record's shape. */
export function readInstanceRecord(dir: string): NativeInstanceRecord | undefined {
  try {
    const r = InstanceRecordSchema.safeParse(
      parseJson(readTextBounded(join(dir, INSTANCE_FILE), 1024 * 1024)),
    );
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}

/** Records the running process. */
export function writePidRecord(dir: string, record: NativePidRecord): void {
  writeFileSync(join(dir, PID_FILE), `${JSON.stringify(record)}\n`, { mode: 0o600 });
}

/** Reads the pid file, or undefined when it is missing, unreadable or not of the pid file's shape. */
export function readPidRecord(dir: string): NativePidRecord | undefined {
  try {
    const r = PidRecordSchema.safeParse(parseJson(readTextBounded(join(dir, PID_FILE), 64 * 1024)));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}

/** Removes the pid file (the run ended). */
export function removePidRecord(dir: string): void {
  rmSync(join(dir, PID_FILE), { force: true });
}

/**
 * The start time of process `pid` as the OS reports it, to tell it from a later process that reused
 * the pid: on Linux field 22 of `/proc/<pid>/stat` (clock ticks since boot), elsewhere `ps -o lstart=`.
 * Undefined when the process does not exist.
 */
export function processStartTime(pid: number): string | undefined {
  if (process.platform === 'linux') {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // The command name (field 2) may contain spaces and parentheses: fields resume after the last ')'.
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (rest[0] === 'Z') return undefined;
      return rest[19];
    } catch {
      return undefined;
    }
  }
  try {
    const out = execFileSync('ps', ['-o', 'lstart=', '-p', String(pid)], { encoding: 'utf8' }).trim();
    return out === '' ? undefined : out;
  } catch {
    return undefined;
  }
}
