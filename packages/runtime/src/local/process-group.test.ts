import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { childExited, killProcessGroup, processGroupAlive, terminateProcessGroup } from './process-group.js';

/** Live (non-zombie) members of process group `pgid`, from /proc (Linux); zombies wait for a reaper. */
function liveMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(rest[2]) === pgid && rest[0] !== 'Z') out.push(Number(d));
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

describe('process groups', () => {
  it('terminates a whole group, escalating to SIGKILL after the grace period', async () => {
    const child = spawn('/bin/sh', ['-c', "trap '' TERM; sleep 30 & sleep 30 & wait"], {
      detached: true,
      stdio: 'ignore',
    });
    const pid = child.pid ?? 0;
    await new Promise((r) => setTimeout(r, 100));
    expect(processGroupAlive(pid)).toBe(true);
    if (process.platform === 'linux') expect(liveMembers(pid).length).toBe(3);
    const r = await terminateProcessGroup(pid, childExited(child), 200);
    expect(r.killed).toBe(true);
    expect(r.elapsedMs).toBeGreaterThanOrEqual(190);
    await new Promise((res) => setTimeout(res, 100));
    if (process.platform === 'linux') expect(liveMembers(pid)).toEqual([]);
  });

  it('never signals pid 0 or 1', () => {
    expect(killProcessGroup(0, 'SIGKILL')).toBe(false);
    expect(killProcessGroup(1, 'SIGKILL')).toBe(false);
    expect(processGroupAlive(1)).toBe(false);
  });
});
