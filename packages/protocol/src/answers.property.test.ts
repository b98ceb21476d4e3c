// Property tests of the answer schemas: every answer a host can build parses back to itself, and any
// junk put in one field is refused with ProtocolError invalid_answer naming that field.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseAnswer } from './method-schemas.js';
import type { CtlMethod } from './methods.js';
import { ADAPTER_STATES } from './place-schemas.js';
import { ProtocolError } from './protocol-error.js';

const RUNS = { numRuns: 200 };
const hex = (n: number): fc.Arbitrary<string> => fc.stringMatching(new RegExp(`^[0-9a-f]{${n}}$`));
const instanceId = fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,20}-[0-9a-f]{16}$/);
const count = fc.nat();
const mode = fc.oneof(
  fc.constant({ type: 'once' as const }),
  fc.constant({ type: 'listener' as const }),
  fc.record({ type: fc.constant('interval' as const), secs: fc.integer({ min: 1, max: 86_400 }) }),
);
const status = fc.record(
  {
    state: fc.constantFrom(...ADAPTER_STATES),
    pid: count,
    started_at_ms: count,
    last_exit_code: fc.option(fc.integer(), { nil: null }),
    last_signal: fc.option(fc.string(), { nil: null }),
    runs: count,
    detail: fc.string(),
  },
  { requiredKeys: ['state'] },
);
const view = fc.record({
  instance_id: instanceId,
  workload: fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,20}$/),
  version: fc.stringMatching(/^[0-9A-Za-z.+-]{1,16}$/),
  route: fc.constantFrom('native', 'wasi', 'container'),
  runtime: fc.constantFrom('native', 'wasi', 'container'),
  variant: fc.stringMatching(/^[a-z0-9_]{1,16}-[a-z]{1,16}$/),
  package_id: hex(64),
  manifest_hash: hex(64),
  mode,
  decision_id: fc.oneof(hex(64), fc.constant('')),
  last_decision_id: hex(64),
  requester: hex(32),
  placed_at_ms: count,
  desired_running: fc.boolean(),
  life: fc.constantFrom('loaded', 'running', 'unhealthy', 'restarting', 'stopped', 'finished', 'failed'),
  lease_stopped: fc.boolean(),
  restarts: count,
  adopted: fc.boolean(),
  state: fc.constantFrom(...ADAPTER_STATES),
  status,
});
const evidence = fc.record({
  instance_id: fc.string(),
  args: fc.array(fc.string()),
  exit_code: fc.option(fc.integer(), { nil: null }),
  signal: fc.option(fc.string(), { nil: null }),
  started_at_ms: fc.option(count, { nil: null }),
  ended_at_ms: fc.option(count, { nil: null }),
  killed: fc.boolean(),
  stdout: fc.string(),
  stdout_truncated_bytes: count,
  stderr: fc.string(),
  stderr_truncated_bytes: count,
  notes: fc.array(fc.string()),
});

/** Each method with a generator of its valid answers, and the body it was called with. */
const cases: readonly [CtlMethod, fc.Arbitrary<Record<string, unknown>>, Record<string, unknown>][] = [
  [
    'workload.place',
    fc.tuple(view, hex(32), fc.boolean(), fc.boolean()).map(([v, node, started, again]) => ({
      ...v,
      node,
      started,
      already_placed: again,
    })),
    {},
  ],
  ['workload.start', fc.record({ instance_id: instanceId, status }), {}],
  ['workload.stop', fc.record({ instance_id: instanceId, evidence, status }), {}],
  ['workload.unload', fc.record({ instance_id: instanceId, unloaded: fc.constant(true) }), {}],
  ['workload.status', fc.record({ instance: view }), { instance_id: 'x-0123456789abcdef' }],
  [
    'workload.status',
    fc.record(
      {
        node: hex(32),
        instances: fc.array(view, { maxLength: 3 }),
        in_flight: fc.array(
          fc.record({ decision_id: hex(64), method: fc.constant('workload.place'), since_ms: count }),
          { maxLength: 2 },
        ),
        departed: fc.array(
          fc.record({
            instance_id: instanceId,
            reason: fc.constantFrom('unloaded', 'revoked', 'lost'),
            at_ms: count,
            decision_id: fc.option(hex(64), { nil: null }),
          }),
          { maxLength: 2 },
        ),
      },
      { requiredKeys: ['node', 'instances', 'in_flight'] },
    ),
    {},
  ],
  [
    'workload.logs',
    fc.record({ instance_id: instanceId, lines: fc.array(fc.string()), truncated: fc.boolean() }),
    {},
  ],
  [
    'workload.revoke',
    fc.record({
      generation: count,
      applied: fc.boolean(),
      torn_down: fc.array(instanceId, { maxLength: 3 }),
    }),
    {},
  ],
];

function invalidField(method: CtlMethod, value: unknown, body: unknown): string {
  try {
    parseAnswer(method, value, body);
  } catch (err) {
    expect(err).toBeInstanceOf(ProtocolError);
    if (!(err instanceof ProtocolError)) throw err;
    expect(err.code).toBe('invalid_answer');
    return err.field ?? '';
  }
  throw new Error(`${method}: ${JSON.stringify(value)} was accepted`);
}

/** A value no schema field accepts in place of any JSON value it expects. */
const junk = fc.oneof(fc.constant(undefined), fc.constant(Symbol('x')), fc.bigInt(), fc.constant(Number.NaN));

describe.each(cases)('the %s answer', (method, valid, body) => {
  it('round-trips every valid answer', () => {
    fc.assert(
      fc.property(valid, (answer) => {
        expect(parseAnswer(method, answer, body)).toEqual(answer);
      }),
      RUNS,
    );
  });

  it('refuses junk in any one top-level field, naming that field', () => {
    fc.assert(
      fc.property(valid, junk, fc.nat(), (answer, bad, pick) => {
        const keys = Object.keys(answer).filter((k) => !(k === 'departed' && bad === undefined));
        const key = keys[pick % keys.length] as string;
        const field = invalidField(method, { ...answer, [key]: bad }, body);
        expect(field === `result.${key}` || field.startsWith(`result.${key}.`)).toBe(true);
      }),
      RUNS,
    );
  });

  it('refuses anything that is not an answer object with invalid_answer, never another error', () => {
    fc.assert(
      fc.property(fc.anything({ withBigInt: true, withNullPrototype: true }), (value) => {
        try {
          parseAnswer(method, value, body);
        } catch (err) {
          expect(err).toBeInstanceOf(ProtocolError);
          expect((err as ProtocolError).field).toMatch(/^result(\.|$)/);
        }
      }),
      RUNS,
    );
  });
});

describe('the describe answer', () => {
  const facts = { payload: '{}', public_key: 'a'.repeat(64), signature: 'b'.repeat(128) };
  const ad = {
    service: 'workload-host',
    version: 1,
    node_id: 'c'.repeat(32),
    methods: ['workload.describe'],
    routes: ['native'],
    address: null,
    software: { name: 'heddle-host', version: '0.1.0' },
    limits: { max_calls_per_session: 8 },
    lease: { lease_ms: 20_000, stops_within_ms: 6_000 },
  };

  it('parses a host advertisement, and reads a missing or malformed software as none', () => {
    // A host from before `features` and `clock_ms` advertises none.
    expect(parseAnswer('workload.describe', { facts, advertisement: ad })).toEqual({
      facts,
      advertisement: { ...ad, features: [], clock_ms: null },
    });
    const { software: _, ...old } = ad;
    expect(parseAnswer('workload.describe', { facts, advertisement: old }).advertisement.software).toBeNull();
    const odd = { ...ad, software: { name: 'Bad Name', version: '1' } };
    expect(parseAnswer('workload.describe', { facts, advertisement: odd }).advertisement.software).toBeNull();
  });

  it('reads clock_ms leniently: a non-negative safe integer kept, anything else as none', () => {
    const read = (clock_ms: unknown) =>
      parseAnswer('workload.describe', { facts, advertisement: { ...ad, clock_ms } }).advertisement.clock_ms;
    expect(read(1_767_225_600_000)).toBe(1_767_225_600_000);
    expect(read(0)).toBe(0);
    for (const bad of [-1, 1.5, '1767225600000', 2 ** 53, null, {}]) expect(read(bad)).toBeNull();
  });

  it('reads features leniently: listed names kept (unknown ones too), anything malformed as none', () => {
    const read = (features: unknown) =>
      parseAnswer('workload.describe', { facts, advertisement: { ...ad, features } }).advertisement.features;
    expect(read(['request_id'])).toEqual(['request_id']);
    expect(read(['request_id', 'later.feature'])).toEqual(['request_id', 'later.feature']);
    expect(read('request_id')).toEqual([]);
    expect(read(['Not A Name'])).toEqual([]);
    expect(read(Array.from({ length: 65 }, (_, i) => `f${i}`))).toEqual([]);
  });

  it.each([
    ['facts', { facts: { ...facts, signature: 'x' }, advertisement: ad }, 'result.facts.signature'],
    [
      'lease',
      { facts, advertisement: { ...ad, lease: { lease_ms: -1, stops_within_ms: 0 } } },
      'result.advertisement.lease.lease_ms',
    ],
    ['routes', { facts, advertisement: { ...ad, routes: ['Native!'] } }, 'result.advertisement.routes.0'],
    ['node_id', { facts, advertisement: { ...ad, node_id: 'x' } }, 'result.advertisement.node_id'],
    ['advertisement', { facts }, 'result.advertisement'],
  ])('refuses a bad %s, naming the field', (_what, value, field) => {
    expect(invalidField('workload.describe', value, {})).toBe(field);
  });
});
