// Run tags: every name the harness makes says which process owns it, so the reaper can tell a dead
// run's leftovers from a live run's (no root needed for these).
import { describe, expect, it } from 'vitest';
import { newRunTag, pidAlive, pidOfTag, tagOfName } from './registry.js';

describe('run tags', () => {
  it('encode the owning pid, and every harness name carries its tag', () => {
    const tag = newRunTag();
    expect(tag).toMatch(/^[0-9a-z]{7}$/);
    expect(pidOfTag(tag)).toBe(process.pid);
    expect(tagOfName(`hdl-${tag}-c`)).toBe(tag);
    expect(tagOfName(`hdl-${tag}-h12`)).toBe(tag);
    expect(tagOfName(`hb${tag}`)).toBe(tag);
    expect(tagOfName(`hv${tag}0a`)).toBe(tag);
    // Names of anything else on the machine are never taken for ours.
    for (const other of ['eth0', 'lo', 'docker0', 'hdl-probe-12', 'hbx', 'br-1234', 'veth12ab'])
      expect(tagOfName(other)).toBeUndefined();
    expect(Number.isNaN(pidOfTag('nope'))).toBe(true);
  });

  it('two fabrics of one process get different tags', () => {
    expect(newRunTag()).not.toBe(newRunTag());
  });

  it('tell a live owner from a dead one', () => {
    expect(pidAlive(process.pid)).toBe(true);
    expect(pidAlive(0)).toBe(false);
    expect(pidAlive(4_194_304 + 1)).toBe(false); // above the kernel's pid_max limit
  });
});
