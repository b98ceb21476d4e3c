import { Refusal } from '@heddle/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { requireInstanceId } from './bodies.js';

const RUNS = { numRuns: 300 };
const INSTANCE = 'hello-cog-0123456789abcdef';

function expectInvalid(fn: () => unknown, field: string, method: string): void {
  let r: unknown;
  try {
    fn();
  } catch (err) {
    r = err;
  }
  expect(r).toBeInstanceOf(Refusal);
  if (!(r instanceof Refusal)) return;
  expect(r.code).toBe('invalid_request');
  expect(r.authenticated).toBe(true);
  expect(r.field).toBe(field);
  expect(r.reason.startsWith(`${method} ${field}: `)).toBe(true);
}

describe('requireInstanceId', () => {
  it('returns the instance id when present', () => {
    expect(requireInstanceId({ instance_id: INSTANCE }, 'workload.start')).toBe(INSTANCE);
  });

  it('refuses a body without one with invalid_request naming body.instance_id', () => {
    expectInvalid(() => requireInstanceId({}, 'workload.start'), 'body.instance_id', 'workload.start');
    expectInvalid(
      () => requireInstanceId({ grace_ms: 10 }, 'workload.stop'),
      'body.instance_id',
      'workload.stop',
    );
  });
});
