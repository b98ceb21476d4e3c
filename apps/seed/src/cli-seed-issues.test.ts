// Issue 17 against the documented Seed (the simulator): one code per cause, recorded installs, console.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deriveInstanceId } from '@heddle/model';
import { SeedApiFailure, seedPinWorkload } from '@heddle/seed-adapter';
import { SeedSimulator } from '@heddle/seed-adapter/simulator';
import { afterEach, describe, expect, it } from 'vitest';
import { toCliError } from './cli-error.js';
import { nodeIdOf } from './governed.js';
import { tempDir } from './test-io.js';
import { ProfileRunner } from './test-seed.js';

const sims: SeedSimulator[] = [];
afterEach(async () => {
  for (const s of sims.splice(0)) await s.close();
});

/** A plain-http simulator on loopback and a paired profile with `pins` added. */
async function paired(pins: string[][], o: Parameters<typeof SeedSimulator.start>[0] = {}) {
  const sim = await SeedSimulator.start({ installDelayMs: 20, tickMs: 50, ...o });
  sims.push(sim);
  const p = new ProfileRunner(join(tempDir(), 'seed'));
  await p.json(0, 'init', '--url', sim.url, '--allow-plain-http');
  await p.json(0, 'pair', '--open-window');
  for (const pin of pins) await p.json(0, 'pin', 'add', ...pin);
  return { sim, p };
}

describe('one cause, one code: a token the Seed refuses is not_paired (exit 1) in every command', () => {
  it('run, start, stop, console, rm, config set and a mid-transition failure all say not_paired', async () => {
    const { sim, p } = await paired([['thermal@1.0.3', '--console=--once']]);
    await p.json(0, 'run', 'thermal@1.0.3');
    sim.revokeTokens();
    for (const argv of [
      ['run', 'thermal@1.0.3'],
      ['start', 'thermal'],
      ['stop', 'thermal'],
      ['console', 'thermal', '--', '--once'],
      ['rm', 'thermal'],
      ['config', 'set', 'thermal', 'interval=3'],
    ]) {
      const e = await p.json(1, ...argv);
      expect([argv[0], e.code]).toEqual([argv[0], 'not_paired']);
    }
    const mid = toCliError(
      new SeedApiFailure('not_paired', 'start thermal: the Seed API failed (not_paired)'),
    );
    expect([mid.code, mid.exitCode]).toEqual(['not_paired', 1]);
  });
});

describe('installs are recorded before they are sent: what heddle-seed installed is always removable', () => {
  it('an install whose answer is lost (the Seed finishes it later) is recorded, listed, and rm removes it', async () => {
    const { sim, p } = await paired([['thermal@1.0.3']], { installDelayMs: 4_600 });
    sim.installWithoutAnswer('early');
    const lost = await p.json(1, 'run', 'thermal@1.0.3');
    expect(String(lost.message)).toContain('heddle-seed rm thermal removes it');
    const installed = JSON.parse(readFileSync(join(p.home, 'installed.json'), 'utf8')) as {
      instances: Array<{ workloadId: string; pending?: boolean; storeInstalled?: boolean }>;
    };
    expect(installed.instances).toMatchObject([
      { workloadId: 'thermal', pending: true, storeInstalled: true },
    ]);
    while (sim.installed().length === 0) await new Promise((r) => setTimeout(r, 100));
    const ls = (await p.json(0, 'ls')).installed as Array<{
      id: string;
      installed_here: boolean;
      pending: boolean;
    }>;
    expect(ls).toMatchObject([{ id: 'thermal', installed_here: true, pending: true }]);
    const rm = await p.json(0, 'rm', 'thermal');
    expect(rm).toMatchObject({ uninstalled: true, installed: true });
    expect(sim.installed()).toEqual([]);
  }, 15_000);

  it('a recorded install (the process died after sending it) is removed by rm, or dropped when it never landed', async () => {
    const { sim, p } = await paired([['thermal@1.0.3'], ['presence@2.0.0']]);
    const nodeId = nodeIdOf(sim.deviceId);
    const pending = (id: string, version: string) => {
      const w = seedPinWorkload({ id, version, console_commands: [] });
      return {
        instanceId: deriveInstanceId(w.id, w.ref, {}, { type: 'listener' }, nodeId),
        runtime: 'remote.api',
        workloadId: id,
        version,
        storeInstalled: true,
        pending: true,
      };
    };
    writeFileSync(
      join(p.home, 'installed.json'),
      JSON.stringify({ version: 1, instances: [pending('thermal', '1.0.3'), pending('presence', '2.0.0')] }),
    );
    // thermal's install landed (and auto-started); presence's never did.
    const other = sim.addToken();
    await fetch(`${sim.url}/api/v1/apps/install`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'thermal' }),
    });
    const human = await p.run('ls');
    expect(human.out).toMatch(/presence\s+2\.0\.0\s+not on the Seed/);
    expect((await p.json(0, 'rm', 'presence')).installed).toBe(false);
    expect((await p.json(0, 'rm', 'thermal')).uninstalled).toBe(true);
    expect(sim.installed()).toEqual([]);
    const chain = readFileSync(join(p.home, 'chain.jsonl'), 'utf8');
    expect(chain).toContain('seed.intent_dropped');
    expect(chain).toContain('workload.unload');
  });

  it('a refused install that left nothing drops its record (rm then says not_loaded)', async () => {
    const { sim, p } = await paired([['thermal@1.0.3']]);
    sim.failNextInstall('flash write failed');
    expect((await p.json(1, 'run', 'thermal@1.0.3')).code).toBe('seed_error');
    expect((await p.json(3, 'rm', 'thermal')).code).toBe('not_loaded');
  });
});

describe('console as documented', () => {
  it('console <id> -- --help runs the pinned --help command (not the CLI usage)', async () => {
    const { p } = await paired([['thermal@1.0.3', '--console=--help']]);
    await p.json(0, 'run', 'thermal@1.0.3');
    const r = await p.run('console', 'thermal', '--', '--help');
    expect(r.code).toBe(0);
    expect(r.out).toContain('usage: cog-thermal-arm');
    expect(r.out).not.toContain('usage: heddle-seed');
    expect((await p.run('console', '--help')).out).toContain('usage: heddle-seed console');
  });

  it('a run on synthetic data (the feed is held elsewhere) fails with synthetic_feed, evidence printed', async () => {
    const { sim, p } = await paired([['thermal@1.0.3', '--console=--once']]);
    await p.json(0, 'run', 'thermal@1.0.3');
    sim.holdFeed(true);
    const r = await p.run('console', 'thermal', '--', '--once');
    expect(r.code).toBe(1);
    expect(r.out).toContain('synthetic');
    expect(r.err).toContain('synthetic_feed');
    sim.holdFeed(false);
    expect((await p.run('console', 'thermal', '--', '--once')).code).toBe(0);
  });

  it('a Seed that goes away mid-run: the cogs left stopped are named, with how to start them', async () => {
    const { sim, p } = await paired([['thermal@1.0.3', '--console=--once'], ['presence@2.0.0']]);
    await p.json(0, 'run', 'thermal@1.0.3');
    await p.json(0, 'run', 'presence@2.0.0');
    sim.vanishAfterNextConsole();
    const r = await p.run('console', 'thermal', '--', '--once');
    expect(r.code).toBe(1);
    expect(r.err).toContain('not_resumed');
    expect(r.err).toContain('may still be stopped');
    expect(r.err).toContain('heddle-seed start presence');
    expect(r.err).toContain('heddle-seed start thermal');
  });
});
