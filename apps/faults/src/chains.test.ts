import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openChainFile } from '@heddle/chain';
import { ChainKind } from '@heddle/model';
import { afterEach, describe, expect, it } from 'vitest';
import { ChainWatch, illegalTransitions } from './chains.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function chainWith(moves: [string, string][]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'heddle-faults-chain-'));
  dirs.push(dir);
  const path = join(dir, 'chain.jsonl');
  const chain = await openChainFile(path);
  await chain.append('workload.host', ChainKind.place, { instance_id: 'i-1' });
  for (const [from, to] of moves) {
    await chain.append('workload.host', ChainKind.lifecycle, {
      instance_id: 'i-1',
      from,
      to,
      reason: 'test',
    });
  }
  await chain.close();
  return path;
}

describe('the lifecycle audit of a chain', () => {
  it('passes legal transitions and names each illegal one', async () => {
    const legal = await chainWith([
      ['placed', 'fetching'],
      ['fetching', 'verified'],
      ['verified', 'loaded'],
      ['loaded', 'running'],
      ['running', 'lost'],
      ['lost', 'rescheduled'],
      ['rescheduled', 'unloaded'],
    ]);
    expect(illegalTransitions(legal)).toEqual([]);
    const bad = await chainWith([
      ['loaded', 'running'],
      ['unloaded', 'running'],
      ['running', 'nowhere'],
    ]);
    expect(illegalTransitions(bad)).toEqual(['i-1: unloaded -> running', 'i-1: running -> nowhere']);
  });

  it('fails the chain check of a file that verifies but records an illegal move', async () => {
    const path = await chainWith([['rescheduled', 'running']]);
    const [r] = await new ChainWatch().check([{ name: 'host 0', path }]);
    expect(r?.ok).toBe(false);
    expect(r?.problem).toContain('rescheduled -> running');
  });
});
