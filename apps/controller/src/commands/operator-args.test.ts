import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorOutputSchema } from '../json-outputs.js';
import { runCaptured, tempDir } from '../test-io.js';
import { newLines } from './logs.js';
import { parseMode, parseSets } from './place-order.js';

const NODE = 'ab'.repeat(16);

/** Runs with a home where no controller runs, so only argument checks can pass or fail. */
async function run(...argv: string[]) {
  const cwd = tempDir();
  return runCaptured([...argv, '--home', join(cwd, 'home')], cwd);
}

function jsonError(err: string) {
  return ErrorOutputSchema.parse(JSON.parse(err)).error;
}

describe('--mode and --set', () => {
  it('parses run modes', () => {
    expect(parseMode('once')).toEqual({ type: 'once' });
    expect(parseMode('listener')).toEqual({ type: 'listener' });
    expect(parseMode('interval:30')).toEqual({ type: 'interval', secs: 30 });
  });

  it.each(['interval', 'interval:0', 'interval:86401', 'interval:1.5', 'interval:-1', 'daily', 'ONCE', ''])(
    'refuses --mode %j naming the field',
    (m) => {
      expect(() => parseMode(m)).toThrow(expect.objectContaining({ code: 'invalid_input', field: 'mode' }));
    },
  );

  it('types config values', () => {
    expect(parseSets(['a=1', 'b=true', 'c=null', 'd=hello', 'e="true"', 'f=', 'g=a=b', 'h=-2.5e3'])).toEqual({
      a: 1,
      b: true,
      c: null,
      d: 'hello',
      e: 'true',
      f: '',
      g: 'a=b',
      h: -2500,
    });
  });

  it('refuses malformed --set naming the field', () => {
    expect(() => parseSets(['novalue'])).toThrow(expect.objectContaining({ field: 'set' }));
    expect(() => parseSets(['Bad=1'])).toThrow(expect.objectContaining({ field: 'values.Bad' }));
    expect(() => parseSets(['a=1', 'a=2'])).toThrow(expect.objectContaining({ field: 'values.a' }));
    expect(() => parseSets(['a="open'])).toThrow(expect.objectContaining({ field: 'values.a' }));
  });
});

describe('argument refusals', () => {
  it('exits 3 naming the field for values that do not fit, before asking the controller', async () => {
    const cases: [string[], string][] = [
      [['place', 'pkg', '--mode', 'interval:0'], 'mode'],
      [['place', 'pkg', '--set', 'x'], 'set'],
      [['place', 'pkg', '--node', 'nope'], 'node'],
      [['place', 'pkg', '--prefer', NODE, '--prefer', 'short'], 'prefer'],
      [['place', 'pkg', '--avoid', 'XYZ'], 'avoid'],
      [['node', 'add', 'ws://127.0.0.1:1', '--tier', 'gold'], 'tier'],
      [['node', 'add', 'ws://127.0.0.1:1', '--tier', 'paired', '--key', 'abc'], 'key'],
      [['node', 'pin', NODE, '--key', 'zz'.repeat(32)], 'key'],
      [['logs', 'i-1', '--lines', '0'], 'lines'],
      [['logs', 'i-1', '--lines', '10001'], 'lines'],
      [['stop', 'i-1', '--grace-ms', 'soon'], 'grace-ms'],
    ];
    for (const [argv, field] of cases) {
      const r = await run(...argv, '--json');
      expect(r.code, argv.join(' ')).toBe(3);
      expect(r.out).toBe('');
      const e = jsonError(r.err);
      expect(e.code).toBe('invalid_input');
      expect(e.field, argv.join(' ')).toBe(field);
      const human = await run(...argv);
      expect(human.err).toMatch(new RegExp(`^heddle [a-z ]+: --${field}`));
    }
  });

  it('exits 2 for usage errors: unknown flag, missing argument or required flag, extra argument', async () => {
    const cases: string[][] = [
      ['ps', '--bogus'],
      ['ps', 'extra'],
      ['status'],
      ['place'],
      ['node', 'add', 'ws://127.0.0.1:1'],
      ['node', 'pin', NODE],
      ['node', 'frobnicate'],
      ['node'],
      ['logs', 'i-1', '--lines'],
    ];
    for (const argv of cases) {
      const r = await run(...argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.err).toContain('usage');
    }
    const j = await run('node', 'add', 'ws://x', '--json');
    expect(jsonError(j.err)).toMatchObject({ code: 'usage', field: 'tier' });
  });

  it('prints help with --help', async () => {
    const r = await run('place', '--help');
    expect(r.code).toBe(0);
    expect(r.out).toContain('usage: heddle place <package-dir>');
    expect(r.out).toContain('--set <key=value>');
  });

  it('says how to start the controller when none runs (exit 1)', async () => {
    const r = await run('ps');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^heddle ps: no controller is running in .*heddle controller run/);
    const j = await run('ps', '--json');
    expect(jsonError(j.err).code).toBe('controller_not_running');
  });

  it('says so when the controller home has a stale api.json (exit 1)', async () => {
    const cwd = tempDir();
    const home = join(cwd, 'home');
    mkdirSync(home);
    writeFileSync(
      join(home, 'api.json'),
      JSON.stringify({ url: 'http://127.0.0.1:9', pid: 1, node_id: NODE }),
    );
    writeFileSync(join(home, 'api.token'), 'x');
    const r = await runCaptured(['node', 'ls', '--home', home], cwd);
    expect(r.code).toBe(1);
    expect(r.err).toContain('heddle controller run');
  });
});

describe('logs --follow: new lines', () => {
  it('finds what is new in a growing or sliding tail', () => {
    expect(newLines([], ['a', 'b'])).toEqual(['a', 'b']);
    expect(newLines(['a', 'b'], ['a', 'b', 'c'])).toEqual(['c']);
    expect(newLines(['x', 'a', 'b'], ['a', 'b', 'c', 'd'])).toEqual(['c', 'd']);
    expect(newLines(['tick', 'tick'], ['tick', 'tick', 'tick'])).toEqual(['tick']);
    expect(newLines(['a', 'b'], ['a', 'b'])).toEqual([]);
    expect(newLines(['a'], ['q', 'r'])).toEqual(['q', 'r']);
    expect(newLines(['c', 'd'], ['a', 'b', 'c', 'd', 'e'])).toEqual(['e']);
  });
});
