import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { verifyChainFile } from '@heddle/chain';
import type { SeedSimulator } from '@heddle/seed-adapter/simulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './test-io.js';
import { httpsSimulator, ProfileRunner } from './test-seed.js';

let sim: SeedSimulator;

beforeAll(async () => {
  sim = await httpsSimulator();
});
afterAll(async () => {
  await sim.close();
});

describe('heddle-seed: the full flow over pinned HTTPS', () => {
  it('init -> pair -> pin -> store -> run -> ls -> logs -> console -> stop -> rm, chain verifies, token never printed', async () => {
    const p = new ProfileRunner(join(tempDir(), 'seed'));
    const spki = sim.spki ?? '';

    // init without a pin: refused, the SPKI shown, nothing written.
    const refused = await p.run('init', '--url', sim.url);
    expect(refused.code).toBe(3);
    expect(refused.err).toContain(spki);
    expect(refused.err).toContain('trust is never implicit');
    expect(() => statSync(join(p.home, 'seed.json'))).toThrow();
    const refusedJson = await p.json(3, 'init', '--url', sim.url);
    expect(refusedJson.code).toBe('spki_required');
    expect(refusedJson.spki).toBe(spki);

    expect((await p.json(0, 'init', '--url', sim.url, '--pin-spki', spki)).spki).toBe(spki);

    // Not paired yet: ls refuses, status works without a token.
    expect((await p.json(3, 'ls')).code).toBe('not_paired');
    const st = await p.json(0, 'status');
    expect(st.paired_here).toBe(false);

    const paired = await p.json(0, 'pair', '--open-window');
    expect(paired.paired).toBe(true);
    expect(statSync(join(p.home, 'token')).mode & 0o777).toBe(0o600);
    const token = p.token();
    expect((await p.json(0, 'status')).paired_here).toBe(true);

    // Pins.
    const store0 = (await p.json(0, 'store')).cogs as { id: string; sha256: string; pin: string }[];
    const aq = store0.find((c) => c.id === 'air-quality');
    expect(aq?.pin).toBe('unpinned');
    expect(
      (
        await p.run(
          'pin',
          'add',
          'air-quality@1.2.0',
          '--sha256',
          aq?.sha256 ?? '',
          '--console=--once',
          '--console=--once --interval 1',
        )
      ).code,
    ).toBe(0);
    expect((await p.run('pin', 'add', 'vibration@0.4.1')).code).toBe(0);
    const pins = (await p.json(0, 'pin', 'ls')).pins as unknown[];
    expect(pins).toHaveLength(2);
    const store1 = (await p.json(0, 'store')).cogs as { id: string; pin: string }[];
    expect(store1.find((c) => c.id === 'air-quality')?.pin).toBe('pinned');
    const human = await p.run('store');
    expect(human.out.split('\n')[0]).toMatch(/^ID\s+VERSION\s+SIZE\s+PIN/);

    // Run two cogs.
    const run1 = await p.json(0, 'run', 'air-quality@1.2.0', '--set', 'interval=5');
    expect(run1).toMatchObject({ installed_here: true, started: true, state: 'running' });
    const run2 = await p.json(0, 'run', 'vibration@0.4.1');
    expect(run2.state).toBe('running');
    const ls = (await p.json(0, 'ls')).installed as {
      id: string;
      running: boolean;
      installed_here: boolean;
    }[];
    expect(ls.map((c) => [c.id, c.running, c.installed_here]).sort()).toEqual([
      ['air-quality', true, true],
      ['vibration', true, true],
    ]);
    expect((await p.json(0, 'config', 'get', 'air-quality')).config).toMatchObject({ interval: 5 });
    expect((await p.json(0, 'config', 'set', 'air-quality', 'interval=7')).config).toMatchObject({
      interval: 7,
    });

    await new Promise((r) => setTimeout(r, 150));
    const logs = await p.json(0, 'logs', 'air-quality', '--lines', '5');
    expect(Array.isArray(logs.output)).toBe(true);

    // Console: both cogs hold the feed, so both are preempted and resumed; the command as documented.
    const con = await p.json(0, 'console', 'air-quality', '--', '--once');
    expect([...(con.evidence as { stopped_for_console: string[] }).stopped_for_console].sort()).toEqual([
      'air-quality',
      'vibration',
    ]);
    expect(con.command).toBe('--once');
    expect(sim.installed().filter((c) => c.running).length).toBe(2);
    const words = await p.json(0, 'console', 'air-quality', '--', '--once', '--interval', '1');
    expect(words.command).toBe('--once --interval 1');
    const unpinnedCmd = await p.json(3, 'console', 'air-quality', 'reboot');
    expect(unpinnedCmd.code).toBe('invalid_config');

    const stopped = await p.run('stop', 'air-quality');
    expect(stopped.code).toBe(0);
    expect(stopped.out).toContain('output');
    expect(sim.installed().find((c) => c.id === 'air-quality')?.running).toBe(false);

    expect((await p.json(0, 'rm', 'air-quality')).uninstalled).toBe(true);
    expect((await p.json(0, 'rm', 'vibration')).uninstalled).toBe(true);
    expect(sim.installed()).toEqual([]);
    expect((await p.json(3, 'rm', 'vibration')).code).toBe('not_loaded');

    // Refusals: not pinned, drift.
    expect((await p.json(3, 'run', 'thermal@1.0.3')).code).toBe('not_pinned');
    expect((await p.run('pin', 'add', 'presence@1.9.0')).code).toBe(0);
    const drift = await p.json(1, 'run', 'presence@1.9.0');
    expect(drift.code).toBe('admission');
    expect(String(drift.message)).toContain('2.0.0');
    expect(
      ((await p.json(0, 'store')).cogs as { id: string; pin: string }[]).find((c) => c.id === 'presence')
        ?.pin,
    ).toBe('drift');
    expect(sim.installed()).toEqual([]);

    // The chain verifies and never holds the token; no output ever did.
    const chainPath = join(p.home, 'chain.jsonl');
    const v = await verifyChainFile(chainPath);
    expect(v.ok).toBe(true);
    const chainText = await readFile(chainPath, 'utf8');
    expect(chainText).toContain('workload.install');
    expect(chainText).toContain('preempt-for-console');
    expect(chainText).not.toContain(token);
    p.assertNeverPrinted(token);

    expect((await p.json(0, 'unpair')).removed).toBe(true);
    expect((await p.json(3, 'ls')).code).toBe('not_paired');
  });
});
