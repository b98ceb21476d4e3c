import { spawnSync } from 'node:child_process';
import type { Capability } from '@heddle/placement';
import { type NativeRunUser, resolveRunUser, runningAsRoot } from '../native/native-user.js';
import { hostCogArch } from './elf.js';

/**
 * `runtime.native` (attrs: `arch`, `os`, `run_as`) when a trivial program really runs: `/bin/sh -c
 * 'exit 0'` is spawned with an empty environment (as `runAsUser` when configured). Nothing when it
 * fails, when the host's arch is not a cog arch, or when there is no `runAsUser` and the host runs as
 * root or did not opt in with `allowHostUser`.
 */
export function probeNative(runAsUser: string | undefined, allowHostUser = true): readonly Capability[] {
  const arch = hostCogArch();
  if (arch === undefined) return [];
  let user: NativeRunUser | undefined;
  try {
    user = runAsUser !== undefined ? resolveRunUser(runAsUser) : undefined;
    if (runAsUser === undefined && (runningAsRoot() || !allowHostUser)) return [];
  } catch {
    return [];
  }
  const r = spawnSync('/bin/sh', ['-c', 'exit 0'], {
    env: {},
    timeout: 5000,
    stdio: 'ignore',
    ...(user === undefined ? {} : { uid: user.uid, gid: user.gid }),
  });
  if (r.status !== 0) return [];
  return [
    {
      id: 'runtime.native',
      attrs: { arch, os: process.platform, run_as: user === undefined ? 'self' : user.name },
      provenance: 'probed',
      state: 'available',
      exclusive: false,
    },
  ];
}
