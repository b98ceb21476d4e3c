import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  CLIENT_FRAME_TYPES,
  ClientFrameSchema,
  type ParsedFrame,
  parseFrame,
  SERVER_FRAME_TYPES,
  ServerFrameSchema,
} from './frames.js';
import { signed } from './test-fixtures.js';

/** What parseFrame answered before its fast path: JSON.parse, the `t` check, then the schema alone. */
function reference<F>(text: string, schema: z.ZodType<F>): ParsedFrame<F> | 'not-schema' {
  const value = JSON.parse(text) as { t?: unknown };
  const r = schema.safeParse(value);
  if (r.success) return { ok: true, frame: r.data };
  const issue = r.error.issues[0];
  const field = issue?.path.join('.') || '$';
  return {
    ok: false,
    code: 'malformed_frame',
    reason: `${String(value.t)} frame field ${field}: ${issue?.message}`,
  };
}

const odd: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    null,
    -1,
    0,
    1.5,
    0xffff_ffff,
    0x1_0000_0000,
    '',
    'workload.status',
    'with space',
    'x'.repeat(129),
    'ab'.repeat(32),
    'AB'.repeat(32),
    'ab'.repeat(64),
    'ab'.repeat(63),
    [],
    {},
  ),
  fc.jsonValue({ maxDepth: 1 }),
);
type Edit = readonly [path: 'frame' | 'signed', key: string, value: unknown, drop: boolean];

function mutate(base: Record<string, unknown>, edits: readonly Edit[]): string {
  const frame: Record<string, unknown> = { ...base, signed: { ...(base.signed as object) } };
  for (const [where, key, value, drop] of edits) {
    const target = where === 'frame' ? frame : (frame.signed as Record<string, unknown>);
    if (typeof target !== 'object' || target === null) continue;
    if (drop) delete target[key];
    // A copy: the generator's constants (`[]`, `{}`) are shared between runs, and a later edit of
    // `signed` writes into whatever object sits there, which would change (even cycle) the constant.
    else target[key] = structuredClone(value);
  }
  return JSON.stringify(frame);
}

const edit = (keys: string[]): fc.Arbitrary<Edit[]> =>
  fc.array(
    fc.tuple(
      fc.constantFrom<'frame' | 'signed'>('frame', 'signed'),
      fc.constantFrom(...keys, 'payload', 'public_key', 'signature', 'extra'),
      odd,
      fc.boolean(),
    ),
    { maxLength: 3 },
  );

describe('parseFrame on the call path', () => {
  const s = signed();

  it('call frames: the same answer as the schema alone', () => {
    const base = { t: 'call', id: 7, method: 'workload.status', signed: s };
    expect(parseFrame(JSON.stringify(base), ClientFrameSchema, CLIENT_FRAME_TYPES)).toStrictEqual({
      ok: true,
      frame: base,
    });
    fc.assert(
      fc.property(edit(['t', 'id', 'method', 'signed']), (edits) => {
        const text = mutate(base, edits);
        const t = (JSON.parse(text) as { t?: unknown }).t;
        fc.pre(typeof t === 'string' && CLIENT_FRAME_TYPES.has(t));
        expect(parseFrame(text, ClientFrameSchema, CLIENT_FRAME_TYPES)).toStrictEqual(
          reference(text, ClientFrameSchema),
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('result frames: the same answer as the schema alone', () => {
    const base = { t: 'result', id: 0xffff_ffff, signed: s };
    expect(parseFrame(JSON.stringify(base), ServerFrameSchema, SERVER_FRAME_TYPES)).toStrictEqual({
      ok: true,
      frame: base,
    });
    fc.assert(
      fc.property(edit(['t', 'id', 'signed']), (edits) => {
        const text = mutate(base, edits);
        const t = (JSON.parse(text) as { t?: unknown }).t;
        fc.pre(typeof t === 'string' && SERVER_FRAME_TYPES.has(t));
        expect(parseFrame(text, ServerFrameSchema, SERVER_FRAME_TYPES)).toStrictEqual(
          reference(text, ServerFrameSchema),
        );
      }),
      { numRuns: 2000 },
    );
  });
});
