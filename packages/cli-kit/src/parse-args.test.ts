import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ARG_ERROR_REASONS, ArgError } from './arg-error.js';
import type { CommandDef, FlagDef } from './command-def.js';
import { parseArgv } from './parse-args.js';

const ADD: CommandDef = {
  name: 'node add',
  summary: 'add a node',
  positionals: [{ name: 'ws-url', description: 'where it listens' }],
  flags: [
    { name: 'tier', kind: 'string', value: '<t>', required: true, description: 'its tier' },
    { name: 'key', kind: 'string', value: '<hex>', description: 'its key' },
    { name: 'out', kind: 'string', short: 'o', value: '<dir>', description: 'where' },
    { name: 'label', kind: 'string', multiple: true, description: 'a label' },
    { name: 'listen', kind: 'string', default: '0.0.0.0:7400', description: 'address' },
    { name: 'force', kind: 'boolean', description: 'force it' },
    { name: 'json', kind: 'boolean', description: 'JSON' },
  ],
};

const parse = (args: readonly string[], def: CommandDef = ADD) => parseArgv('heddle', def, args);

function refusal(args: readonly string[], def: CommandDef = ADD): ArgError {
  try {
    parse(args, def);
  } catch (err) {
    if (err instanceof ArgError) return err;
    throw err;
  }
  throw new Error(`accepted ${JSON.stringify(args)}`);
}

describe('parseArgv', () => {
  it('parses long, long=, short, repeated, boolean flags, defaults and positionals', () => {
    const p = parse([
      'ws://h:1',
      '--tier',
      'paired',
      '--key=ab',
      '-o',
      'd',
      '--label',
      'a',
      '--label=b',
      '--force',
    ]);
    expect(p.positionals).toEqual(['ws://h:1']);
    expect(p.strings).toMatchObject({
      tier: 'paired',
      key: 'ab',
      out: 'd',
      label: 'b',
      listen: '0.0.0.0:7400',
    });
    expect(p.lists).toEqual({ label: ['a', 'b'] });
    expect(p.booleans).toEqual({ force: true, json: false });
    expect(parse(['x', '--tier', 't', '-odir']).strings.out).toBe('dir');
    expect(parse(['x', '--tier', 't', '--key', 'a', '--key', 'b']).strings.key).toBe('b');
    expect(parse(['--tier', 't', '--', '--not-a-flag']).positionals).toEqual(['--not-a-flag']);
    expect(parse(['-', '--tier', '-']).positionals).toEqual(['-']);
    expect(parse(['x', '--tier=', '--key=-5']).strings).toMatchObject({ tier: '', key: '-5' });
  });

  it('names the offending flag or argument, its reason and the word as typed', () => {
    const cases: [string[], string, string | undefined, string | undefined][] = [
      [['x', '--tier', 't', '--tierr', 'p'], 'unknown_flag', 'tierr', '--tierr'],
      [['x', '--tier', 't', '-z'], 'unknown_flag', 'z', '-z'],
      [['x', '--tier'], 'missing_value', 'tier', '--tier'],
      [['x', '--tier', '--json'], 'missing_value', 'tier', '--tier'],
      [['x', '--tier', 't', '--force=yes'], 'unexpected_value', 'force', '--force=yes'],
      [['x'], 'missing_flag', 'tier', undefined],
      [['--tier', 't'], 'missing_argument', 'ws-url', undefined],
      [['x', 'y', '--tier', 't'], 'unexpected_argument', undefined, 'y'],
    ];
    for (const [args, reason, field, token] of cases) {
      const e = refusal(args);
      expect({ reason: e.reason, field: e.field, token: e.token }, args.join(' ')).toEqual({
        reason,
        field,
        token,
      });
      expect(e.code).toBe('usage');
      expect(e.exitCode).toBe(2);
      expect(e.message).toContain('\nusage: heddle node add <ws-url> --tier <t> [--key <hex>] [--out <dir>]');
    }
    expect(refusal(['x', '--tier', 't', '--tierr']).message.split('\n')[0]).toBe(
      'unknown flag --tierr; did you mean "--tier"?',
    );
    expect(refusal(['x', '--tier', '--json']).message.split('\n')[0]).toBe(
      '--tier needs a value <t> (a value that starts with a dash: --tier=--json)',
    );
  });

  it('takes optional and variadic positionals', () => {
    const def: CommandDef = {
      name: 'config set',
      summary: 's',
      positionals: [
        { name: 'id', description: 'i' },
        { name: 'k=v', description: 'p', variadic: true },
      ],
      flags: [],
    };
    expect(parse(['a', 'b=1', 'c=2'], def).positionals).toEqual(['a', 'b=1', 'c=2']);
    expect(refusal(['a'], def)).toMatchObject({ reason: 'missing_argument', field: 'k=v' });
    const opt: CommandDef = { ...def, positionals: [{ name: 'dir', description: 'd', optional: true }] };
    expect(parse([], opt).positionals).toEqual([]);
    expect(refusal(['a', 'b'], opt)).toMatchObject({ reason: 'unexpected_argument', token: 'b' });
  });
});

// A flag name as definitions have them.
const flagName = fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/);
const value = fc.string({ maxLength: 12 }).filter((v) => !v.startsWith('-'));
const defArb = fc
  .uniqueArray(
    fc.record({ name: flagName, kind: fc.constantFrom('string', 'boolean'), multiple: fc.boolean() }),
    {
      selector: (f) => f.name,
      maxLength: 6,
    },
  )
  .map(
    (flags): CommandDef => ({
      name: 'cmd',
      summary: 'a command',
      positionals: [{ name: 'rest', description: 'r', optional: true, variadic: true }],
      flags: flags.map(
        (f): FlagDef => ({
          name: f.name,
          kind: f.kind === 'string' ? 'string' : 'boolean',
          ...(f.kind === 'string' && f.multiple ? { multiple: true } : {}),
          description: f.name,
        }),
      ),
    }),
  );

describe('parseArgv properties', () => {
  it('gives back every value written, in either form, in any order among positionals', () => {
    fc.assert(
      fc.property(
        defArb.chain((def) =>
          fc.tuple(
            fc.constant(def),
            fc.array(fc.tuple(fc.constantFrom(...(def.flags ?? []), undefined), value, fc.boolean()), {
              maxLength: 8,
            }),
          ),
        ),
        ([def, items]) => {
          const args: string[] = [];
          const positionals: string[] = [];
          const strings: Record<string, string> = {};
          const lists: Record<string, string[]> = {};
          const booleans = new Set<string>();
          for (const [f, v, inline] of items) {
            if (f === undefined) {
              if (v === '') continue;
              args.push(v);
              positionals.push(v);
            } else if (f.kind === 'boolean') {
              args.push(`--${f.name}`);
              booleans.add(f.name);
            } else {
              args.push(...(inline ? [`--${f.name}=${v}`] : [`--${f.name}`, v]));
              strings[f.name] = v;
              if (f.multiple === true) lists[f.name] = [...(lists[f.name] ?? []), v];
            }
          }
          const p = parseArgv('prog', def, args);
          expect(p.positionals).toEqual(positionals);
          for (const f of def.flags ?? []) {
            if (f.kind === 'boolean') expect(p.booleans[f.name]).toBe(booleans.has(f.name));
            else expect(p.strings[f.name]).toBe(strings[f.name]);
            if (f.multiple === true) expect(p.lists[f.name]).toEqual(lists[f.name] ?? []);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('junk: any words either parse or are refused with an ArgError that names what it is about', () => {
    const word = fc.oneof(
      fc.string({ maxLength: 10 }),
      flagName.map((n) => `--${n}`),
      fc.constantFrom('--', '-', '-o', '--tier', '--force=1', '--=x', '---', '--json', '-tier'),
    );
    fc.assert(
      fc.property(fc.array(word, { maxLength: 10 }), (args) => {
        try {
          const p = parse(args);
          expect(p.positionals.length).toBe(1);
        } catch (err) {
          expect(err).toBeInstanceOf(ArgError);
          if (!(err instanceof ArgError)) return;
          expect(ARG_ERROR_REASONS).toContain(err.reason);
          if (err.token !== undefined) expect(args).toContain(err.token);
          if (err.reason !== 'unexpected_argument') expect(err.field).toBeDefined();
          if (
            err.reason === 'missing_value' ||
            err.reason === 'unexpected_value' ||
            err.reason === 'missing_flag'
          )
            expect(ADD.flags?.map((f) => f.name)).toContain(err.field);
        }
      }),
      { numRuns: 500 },
    );
  });
});
