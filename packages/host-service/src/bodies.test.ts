import { COG_ROUTES } from '@heddle/package';
import { Refusal } from '@heddle/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { requireInstanceId, routeOfVariant } from './bodies.js';

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

describe('routeOfVariant', () => {
  it.each([
    ['x86_64-native', 'native'],
    ['aarch64-native', 'native'],
    ['wasm32-wasi', 'wasi'],
    ['x86_64-container', 'container'],
    ['riscv64-container', 'container'],
    ['weird-arch-wasi', 'wasi'],
  ])('%s is the %s route', (variant, route) => {
    expect(routeOfVariant(variant)).toBe(route);
  });

  it.each([
    '',
    'x86_64-',
    'x86_64-remote.api',
    'x86_64-Native',
    'x86_64-native ',
    'native-x86_64',
    'x86_64-wasi2',
  ])('%j names no route', (variant) => {
    expect(routeOfVariant(variant)).toBeUndefined();
  });

  it('answers a cog route or undefined for any string, and the suffix after the last dash', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        const r = routeOfVariant(s);
        if (r !== undefined) {
          expect(COG_ROUTES).toContain(r);
          expect(s.endsWith(r)).toBe(true);
        }
      }),
      RUNS,
    );
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.constantFrom(...COG_ROUTES), (arch, route) => {
        expect(routeOfVariant(`${arch}-${route}`)).toBe(route);
      }),
      RUNS,
    );
  });
});

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
