import { lstatSync } from 'node:fs';
import { basename, join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { InstanceHandle } from '../contract.js';
import { RuntimeError } from '../errors.js';
import { checkDataDir, validatedConfig } from '../local/load-checks.js';
import { checkRunMode, type RuntimeWorkload } from '../workload.js';
import type { NativeAdmitted } from './native-admission.js';
import { nativeConfigArgs, nativeEnvironment } from './native-argv.js';
import { checkInstalledCopy, type NativeInstance } from './native-instance.js';
import {
  type NativeInstanceRecord,
  processStartTime,
  readInstanceRecord,
  readPidRecord,
  removePidRecord,
} from './native-instance-file.js';
import { FifoReader, NATIVE_FIFO_FILES } from './native-output.js';

const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * The record of an instance to adopt from its directory: `unknown_instance` when there is none for
 * this id, `admission` when it was loaded from another workload. `instance.json` is not trusted: the
 * config arguments are rebuilt from its values through the package's schema, its run mode and data
 * dir are checked as load checks them, and its executable must be the expected copy
 * (`<dir>/bin/<file>`) whose BLAKE3 is the verified file's (`admission`, field `executable`).
 */
export function adoptedRecord(
  dir: string,
  handle: InstanceHandle,
  workload: RuntimeWorkload,
  admitted: NativeAdmitted,
  dataRoot: string,
): NativeInstanceRecord {
  const record = readInstanceRecord(dir);
  if (record === undefined || record.instanceId !== handle.instanceId) {
    throw new RuntimeError('unknown_instance', `instanceId: no record of ${handle.instanceId}`, {
      field: 'instanceId',
    });
  }
  if (record.workloadRef !== workload.ref) {
    throw new RuntimeError(
      'admission',
      `workload: ${handle.instanceId} was loaded from ${record.workloadRef}`,
      {
        field: 'workload',
      },
    );
  }
  const expected = join(dir, 'bin', basename(admitted.file.path));
  if (record.executable !== expected) {
    throw new RuntimeError(
      'admission',
      `executable: the record names ${record.executable}, not ${expected}`,
      {
        field: 'executable',
      },
    );
  }
  checkInstalledCopy(expected, admitted.file.blake3);
  let configArgs: string[];
  try {
    checkRunMode(record.runMode);
    checkDataDir(record.host, dataRoot);
    nativeEnvironment(record.host, record.instanceId);
    configArgs = nativeConfigArgs(validatedConfig(admitted.body.config, record.values));
  } catch (cause) {
    const why = cause instanceof Error ? cause.message : String(cause);
    throw new RuntimeError('admission', `instance.json: ${why}`, { field: 'instance', cause });
  }
  return { ...record, executable: expected, configArgs };
}

/**
 * Re-attaches an adopted instance to its process: when the pid file names a process that still runs
 * with the same start time, the instance is `running`, its output FIFOs are read again into its logs
 * and line tail (what it wrote while no host read included, see `ensureOutputFifos`), and it is
 * watched until the process is gone (then `exited`, exit status unknown, unless a stop came first);
 * otherwise it is `exited`.
 */
export function reattachNativeProcess(inst: NativeInstance): void {
  const loop = inst.loop;
  const pid = readPidRecord(inst.dir);
  if (pid !== undefined && pid.startTime !== null && processStartTime(pid.pid) === pid.startTime) {
    const readers = reattachNativeOutput(inst);
    const gone = (async () => {
      while (processStartTime(pid.pid) === pid.startTime) await delay(250);
      // The output written before the end is read, unless a descendant still holds the pipes.
      await Promise.race([Promise.all(readers.map((r) => r.ended)), delay(2000)]);
      for (const r of readers) r.destroy();
      inst.lines.flush({ stderr: 'stderr: ' });
    })();
    inst.adopted = { ...pid, gone };
    loop.state = 'running';
    loop.detail =
      readers.length > 0
        ? 'adopted after a restart: exit status will not be known'
        : 'adopted after a restart: output is not captured, exit status will not be known';
    void gone.then(() => {
      if (inst.adopted?.pid !== pid.pid) return;
      inst.adopted = undefined;
      removePidRecord(inst.dir);
      if (!loop.stopping) {
        loop.state = 'exited';
        loop.detail = 'adopted process ended; exit status unknown';
      }
    });
  } else {
    removePidRecord(inst.dir);
    loop.state = 'exited';
    loop.detail = 'not running after a restart of the host';
  }
}

/**
 * Readers of the instance's output FIFOs feeding its log files and line tail, for a process adopted
 * after a restart. None when the FIFOs are missing (a run from before they existed) or unusable.
 */
export function reattachNativeOutput(inst: NativeInstance): FifoReader[] {
  const readers: FifoReader[] = [];
  const streams = [
    ['stdout', inst.stdoutLog, ''],
    ['stderr', inst.stderrLog, 'stderr: '],
  ] as const;
  for (const [name, log, prefix] of streams) {
    const path = join(inst.dir, NATIVE_FIFO_FILES[name]);
    try {
      if (!lstatSync(path).isFIFO()) continue;
      const decoder = new StringDecoder('utf8');
      readers.push(
        new FifoReader(path, (chunk) => {
          try {
            log.write(chunk);
          } catch {
            // The log is best effort; the line tail still gets it.
          }
          inst.lines.push(name, decoder.write(chunk), prefix);
        }),
      );
    } catch {
      // No FIFO: nothing to read.
    }
  }
  return readers;
}
