// What the namespace tests do on a machine that cannot make namespaces: skip with the reason, except
// in CI, where that is a failure. And what this machine can do, said in one line.
import { describe, expect, it } from 'vitest';
import { netnsSkipReason, netnsSupport } from './sys.js';

describe('netns support', () => {
  const no = { ok: false, reason: 'network namespaces need root (this process is not uid 0)' };

  it('skips with the reason outside CI', () => {
    expect(netnsSkipReason({}, no)).toBe(
      'skipped: the network-namespace fault harness cannot run here: network namespaces need root (this process is not uid 0)',
    );
    expect(netnsSkipReason({ CI: 'false' }, no)).toMatch(/^skipped: /);
  });

  it('fails in CI', () => {
    expect(() => netnsSkipReason({ CI: 'true' }, no)).toThrow(
      /must run in CI, but cannot: network namespaces need root/,
    );
    expect(() => netnsSkipReason({ CI: '1' }, no)).toThrow(/must run in CI/);
  });

  it('runs when supported', () => {
    expect(netnsSkipReason({ CI: 'true' }, { ok: true, reason: '' })).toBeUndefined();
  });

  it('says what this machine can do', () => {
    const s = netnsSupport();
    expect(s.ok || s.reason.length > 0).toBe(true);
    if (process.getuid?.() !== 0) expect(s).toEqual({ ok: false, reason: expect.stringContaining('root') });
  });
});
