import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgv, synopsis } from '@heddle/cli-kit';
import { describe, expect, it } from 'vitest';
import { cliReference, OPERATOR_COMMANDS } from './cli-reference.js';
import { JSON_OUTPUTS } from './json-outputs.js';

const DOC = join(import.meta.dirname, '../../../docs/cli-reference.md');

describe('CLI reference', () => {
  it('docs/cli-reference.md is the generated reference (run node apps/controller/scripts/cli-reference.mjs)', () => {
    expect(readFileSync(DOC, 'utf8')).toBe(cliReference());
  });

  it('documents every operator command: synopsis, flags, exit codes 0..4 and a --json schema', () => {
    const doc = cliReference();
    for (const def of OPERATOR_COMMANDS) {
      expect(doc).toContain(`## heddle ${def.name}\n`);
      expect(doc).toContain(synopsis('heddle', def));
      for (const f of def.flags) expect(doc).toContain(`--${f.name}`);
      expect(Object.keys(def.exits).sort()).toEqual(['0', '1', '2', '3', '4']);
      expect(JSON_OUTPUTS[def.name], def.name).toBeDefined();
    }
    expect(Object.keys(JSON_OUTPUTS).sort()).toEqual(OPERATOR_COMMANDS.map((d) => d.name).sort());
  });

  it('parses what the definitions declare, including repeated flags', () => {
    const place = OPERATOR_COMMANDS.find((d) => d.name === 'place');
    if (place === undefined) throw new Error('no place');
    const p = parseArgv('heddle', place, ['dir', '--prefer', 'a', '--prefer', 'b', '--no-start', '--json']);
    expect(p.positionals).toEqual(['dir']);
    expect(p.lists.prefer).toEqual(['a', 'b']);
    expect(p.lists.avoid).toEqual([]);
    expect(p.booleans['no-start']).toBe(true);
    expect(p.booleans.json).toBe(true);
  });
});
