import { chmodSync, copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { hashFile } from '@heddle/package';
import { RuntimeError } from '../errors.js';
import { ensureDataDir } from '../local/data-dir.js';
import type { HostContract } from '../workload.js';
import type { NativeAdmitted } from './native-admission.js';

/** The instance directory of `instanceId` under the adapter's state directory. */
export function nativeInstanceDir(stateDir: string, instanceId: string): string {
  return join(resolve(stateDir), instanceId);
}

/**
 * Lays out an instance directory for load: `bin/` (0711) holding a read-only copy of the verified
 * executable, `logs/` (0700), and the data dir (0700, owned by the run-as user when there is one).
 * The copy's BLAKE3 must be the verified one; otherwise the directory is removed and the load refused
 * (`admission`, field `files.<path>`). Returns the path of the copy.
 */
export async function installNativeExecutable(
  dir: string,
  admitted: NativeAdmitted,
  host: HostContract,
): Promise<string> {
  mkdirSync(join(dir, 'bin'), { recursive: true, mode: 0o711 });
  mkdirSync(join(dir, 'logs'), { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o711);
  chmodSync(join(dir, 'bin'), 0o711);
  const executable = join(dir, 'bin', basename(admitted.file.path));
  rmSync(executable, { force: true });
  copyFileSync(admitted.file.absolutePath, executable);
  chmodSync(executable, 0o555);
  const digest = await hashFile(executable);
  if (digest.blake3 !== admitted.file.blake3) {
    rmSync(dir, { recursive: true, force: true });
    throw new RuntimeError('admission', `${admitted.file.path}: changed since it was verified`, {
      field: `files.${admitted.file.path}`,
    });
  }
  ensureDataDir(host.dataDir, admitted.user);
  return executable;
}
