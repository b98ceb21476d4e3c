import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PlaneError } from './errors.js';
import { JobSpecSchema, jobIssues, jobSpecHash, parseJobSpec, parseJobText } from './job-file.js';

const HASH = 'c'.repeat(64);

function refusal(input: unknown): PlaneError {
  try {
    parseJobSpec(input);
  } catch (e) {
    if (e instanceof PlaneError) return e;
    throw e;
  }
  throw new Error(`accepted ${JSON.stringify(input)}`);
}

describe('job file', () => {
  it('fills in the defaults of a minimal service job', () => {
    expect(parseJobSpec({ name: 'web', package: './pkg' })).toEqual({
      name: 'web',
      type: 'service',
      package: './pkg',
      mode: { type: 'listener' },
      values: {},
      count: 1,
      constraints: {},
      allow_emulated: false,
      update: {
        strategy: 'rolling',
        max_parallel: 1,
        health_check: { type: 'running', deadline_secs: 300 },
        min_healthy_time_secs: 10,
        auto_revert: false,
      },
    });
  });

  it('takes every field', () => {
    const spec = parseJobSpec({
      name: 'cam.agg-1',
      type: 'service',
      manifest_hash: HASH,
      mode: { type: 'interval', secs: 30 },
      values: { port: 8080, greeting: 'hi', debug: false, extra: null },
      count: 3,
      constraints: {
        labels: { room: 'kitchen' },
        arch: ['aarch64', 'x86_64'],
        runtime: ['native'],
        tier: 'paired',
      },
      spread: 'room',
      allow_emulated: true,
      update: {
        strategy: 'rolling',
        max_parallel: 2,
        health_check: { type: 'running', deadline_secs: 60 },
        min_healthy_time_secs: 5,
        auto_revert: true,
      },
    });
    expect(spec.count).toBe(3);
    expect(spec.constraints.tier).toBe('paired');
    expect(spec.update.max_parallel).toBe(2);
  });

  it('refuses junk naming the field, with the stable code job_invalid', () => {
    const cases: [unknown, string][] = [
      [null, '$'],
      [[], '$'],
      ['web', '$'],
      [{ package: './p' }, 'name'],
      [{ name: 'Web!', package: './p' }, 'name'],
      [{ name: 'web' }, 'package'],
      [{ name: 'web', package: './p', manifest_hash: HASH }, 'package'],
      [{ name: 'web', manifest_hash: 'xyz' }, 'manifest_hash'],
      [{ name: 'web', package: './p', count: 0 }, 'count'],
      [{ name: 'web', package: './p', count: 1.5 }, 'count'],
      [{ name: 'web', package: './p', count: 1001 }, 'count'],
      [{ name: 'web', package: './p', type: 'batch' }, 'type'],
      [{ name: 'web', package: './p', type: 'system', count: 2 }, 'count'],
      [{ name: 'web', package: './p', mode: { type: 'once' } }, 'mode'],
      [{ name: 'web', package: './p', mode: { type: 'interval', secs: 0 } }, 'mode.secs'],
      [{ name: 'web', package: './p', values: { Bad: 1 } }, 'values.Bad'],
      [{ name: 'web', package: './p', constraints: { labels: { Room: 'x' } } }, 'constraints.labels.Room'],
      [{ name: 'web', package: './p', constraints: { labels: { room: 'a b' } } }, 'constraints.labels.room'],
      [{ name: 'web', package: './p', constraints: { arch: ['sparc'] } }, 'constraints.arch.0'],
      [{ name: 'web', package: './p', constraints: { runtime: ['docker'] } }, 'constraints.runtime.0'],
      [{ name: 'web', package: './p', constraints: { tier: 'gold' } }, 'constraints.tier'],
      [{ name: 'web', package: './p', constraints: { cpu: 2 } }, 'constraints.cpu'],
      [{ name: 'web', package: './p', spread: 'Room' }, 'spread'],
      [{ name: 'web', package: './p', update: { strategy: 'canary' } }, 'update.strategy'],
      [{ name: 'web', package: './p', update: { max_parallel: 0 } }, 'update.max_parallel'],
      [{ name: 'web', package: './p', update: { auto_revert: 'yes' } }, 'update.auto_revert'],
      [
        { name: 'web', package: './p', update: { min_healthy_time_secs: -1 } },
        'update.min_healthy_time_secs',
      ],
      [
        { name: 'web', package: './p', update: { health_check: { type: 'http' } } },
        'update.health_check.type',
      ],
      [
        { name: 'web', package: './p', update: { health_check: { deadline_secs: 0 } } },
        'update.health_check.deadline_secs',
      ],
      [{ name: 'web', package: './p', replicas: 3 }, 'replicas'],
    ];
    for (const [input, field] of cases) {
      const e = refusal(input);
      expect({ input, code: e.code, field: e.field }).toEqual({ input, code: 'job_invalid', field });
      expect(e.message).toContain(field);
    }
  });

  it('refuses a file that is not JSON (field $)', () => {
    expect(() => parseJobText('{"name": "web",')).toThrow(
      expect.objectContaining({ code: 'job_invalid', field: '$' }),
    );
    expect(parseJobText('{"name":"web","package":"p"}').name).toBe('web');
  });

  it('never throws anything but job_invalid on arbitrary JSON, and names a field of the input', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const issues = jobIssues(v);
        if (issues.length === 0) {
          expect(parseJobSpec(v).name).toMatch(/^[a-z0-9]/);
          return;
        }
        const e = refusal(v);
        expect(e.code).toBe('job_invalid');
        expect(e.field).toBe(issues[0]?.field);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses one bad field in an otherwise good file, naming exactly that field', () => {
    const good = { name: 'web', package: './p', count: 2, spread: 'room', update: { max_parallel: 1 } };
    const bad = fc.constantFrom<[string, unknown]>(
      ['count', -1],
      ['count', 'three'],
      ['spread', ''],
      ['name', ''],
      ['allow_emulated', 1],
      ['values', []],
    );
    fc.assert(
      fc.property(bad, ([field, value]) => {
        const e = refusal({ ...good, [field]: value });
        expect(e.field?.split('.')[0]).toBe(field);
      }),
    );
  });

  it('parses its own output to itself (a stored version reads back the same), and hashes stably', () => {
    const arb = fc.record({
      name: fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,10}$/),
      manifest_hash: fc.constant(HASH),
      count: fc.integer({ min: 1, max: 1000 }),
      spread: fc.option(fc.stringMatching(/^[a-z][a-z0-9]{0,5}$/), { nil: undefined }),
      update: fc.record({ max_parallel: fc.integer({ min: 1, max: 5 }), auto_revert: fc.boolean() }),
    });
    fc.assert(
      fc.property(arb, (raw) => {
        const input = JSON.parse(JSON.stringify(raw)) as unknown;
        const once = parseJobSpec(input);
        const twice = JobSpecSchema.parse(JSON.parse(JSON.stringify(once)));
        expect(twice).toEqual(once);
        expect(jobSpecHash(twice, HASH)).toBe(jobSpecHash(once, HASH));
        expect(jobSpecHash(once, 'd'.repeat(64))).not.toBe(jobSpecHash(once, HASH));
      }),
      { numRuns: 200 },
    );
  });
});
