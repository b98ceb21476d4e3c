import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RuntimeError } from '@heddle/runtime';
import { describe, expect, it } from 'vitest';
import { parseSeedPins, readSeedPinsFile, SEED_REGISTRY, seedPinWorkload } from './seed-pins.js';

const SHA = 'a'.repeat(64);

function refused(f: () => unknown): RuntimeError {
  try {
    f();
  } catch (e) {
    if (e instanceof RuntimeError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('Seed pins', () => {
  it('parses an array or a {pins} file, defaulting console_commands', () => {
    const pins = parseSeedPins([
      { id: 'air-quality', version: '1.2.0', sha256: SHA, console_commands: ['calibrate'] },
    ]);
    expect(pins).toEqual([
      { id: 'air-quality', version: '1.2.0', sha256: SHA, console_commands: ['calibrate'] },
    ]);
    expect(parseSeedPins({ pins: [{ id: 'thermal', version: '1.0.3' }] })).toEqual([
      { id: 'thermal', version: '1.0.3', console_commands: [] },
    ]);
  });

  it('refuses duplicates, malformed fields and unknown fields, naming the field', () => {
    const dup = refused(() =>
      parseSeedPins([
        { id: 'thermal', version: '1.0.3' },
        { id: 'thermal', version: '1.0.4' },
      ]),
    );
    expect(dup.code).toBe('invalid_config');
    expect(dup.field).toBe('pins[1].id');
    expect(dup.message).toContain('pinned twice');
    expect(refused(() => parseSeedPins([{ id: 'Bad Id', version: '1.0.0' }])).field).toBe('pins[0].id');
    expect(refused(() => parseSeedPins([{ id: 'x', version: 'latest' }])).field).toBe('pins[0].version');
    expect(refused(() => parseSeedPins([{ id: 'x', version: '1.0.0', sha256: 'ABC' }])).field).toBe(
      'pins[0].sha256',
    );
    expect(
      refused(() => parseSeedPins([{ id: 'x', version: '1.0.0', console_commands: ['rm\n-rf'] }])).field,
    ).toBe('pins[0].console_commands.0');
    expect(refused(() => parseSeedPins([{ id: 'x', version: '1.0.0', extra: 1 }])).code).toBe(
      'invalid_config',
    );
    expect(refused(() => parseSeedPins('nope')).field).toBe('pins');
  });

  it('reads a pins file and refuses one that is missing or not JSON', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'seed-pins-'));
    const good = join(dir, 'pins.json');
    writeFileSync(good, JSON.stringify({ pins: [{ id: 'vibration', version: '0.4.1' }] }));
    expect(await readSeedPinsFile(good)).toHaveLength(1);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{nope');
    await expect(readSeedPinsFile(bad)).rejects.toMatchObject({ code: 'invalid_config', field: 'pins' });
    await expect(readSeedPinsFile(join(dir, 'missing.json'))).rejects.toMatchObject({
      code: 'invalid_config',
    });
  });

  it('turns a pin into a store-pin workload of the Seed registry', () => {
    const [pin] = parseSeedPins([
      { id: 'air-quality', version: '1.2.0', sha256: SHA, console_commands: ['calibrate'] },
    ]);
    if (pin === undefined) throw new Error('no pin');
    const w = seedPinWorkload(pin);
    expect(w.ref).toBe(`${SEED_REGISTRY}/air-quality@1.2.0`);
    expect(w.artifactHashes).toEqual([SHA]);
    expect(w.source).toMatchObject({ type: 'store_pin', consoleCommands: ['calibrate'] });
  });
});
