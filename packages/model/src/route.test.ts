import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  COG_ARCHES,
  COG_ROUTES,
  isCogArch,
  isCogRoute,
  parseVariantName,
  ROUTE_NETWORK,
  routeFitsArch,
  routeNetwork,
  variantName,
} from './route.js';

const RUNS = { numRuns: 500 };
const arch = fc.constantFrom(...COG_ARCHES);
const route = fc.constantFrom(...COG_ROUTES);

describe('parseVariantName', () => {
  it.each([
    ['x86_64-native', 'x86_64', 'native'],
    ['aarch64-native', 'aarch64', 'native'],
    ['armv7-container', 'armv7', 'container'],
    ['riscv64-container', 'riscv64', 'container'],
    ['wasm32-wasi', 'wasm32', 'wasi'],
  ])('%s is arch %s, route %s', (name, a, r) => {
    expect(parseVariantName(name)).toEqual({ arch: a, route: r });
  });

  it.each([
    '',
    '-',
    'native',
    'x86_64',
    'x86_64-',
    '-native',
    'x86_64-remote.api',
    'x86_64-Native',
    'X86_64-native',
    'x86_64-native ',
    ' x86_64-native',
    'native-x86_64',
    'x86_64-wasi2',
    'weird-arch-wasi',
    'mips-native',
    'x86_64-wasi',
    'wasm32-native',
    'wasm32-container',
    'x86_64--native',
    'x86_64-native-native',
    '__proto__-native',
    'x86_64-__proto__',
    'x86_64-native\u0000',
  ])('%j is not a variant name', (name) => {
    expect(parseVariantName(name)).toBeUndefined();
  });

  it('parses exactly the names of a known arch and route that go together, and round-trips them', () => {
    fc.assert(
      fc.property(arch, route, (a, r) => {
        const parsed = parseVariantName(variantName(a, r));
        if (routeFitsArch(a, r)) expect(parsed).toEqual({ arch: a, route: r });
        else expect(parsed).toBeUndefined();
      }),
      RUNS,
    );
  });

  it('answers undefined or a fitting arch and route that spell the input, for any string (never throws)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string({ unit: 'binary' }),
          fc.stringMatching(/^[a-z0-9_]{0,8}-[a-z.]{0,10}$/),
        ),
        (s) => {
          const parsed = parseVariantName(s);
          if (parsed === undefined) return;
          expect(isCogArch(parsed.arch)).toBe(true);
          expect(isCogRoute(parsed.route)).toBe(true);
          expect(routeFitsArch(parsed.arch, parsed.route)).toBe(true);
          expect(variantName(parsed.arch, parsed.route)).toBe(s);
        },
      ),
      RUNS,
    );
  });

  it('refuses any prefix or suffix added to a valid name', () => {
    fc.assert(
      fc.property(arch, route, fc.string({ minLength: 1 }), fc.boolean(), (a, r, extra, before) => {
        fc.pre(routeFitsArch(a, r));
        const name = before ? `${extra}${variantName(a, r)}` : `${variantName(a, r)}${extra}`;
        expect(parseVariantName(name)).toBeUndefined();
      }),
      RUNS,
    );
  });
});

describe('routes and arches', () => {
  it('the wasi route goes with wasm32 and only with it', () => {
    for (const a of COG_ARCHES) {
      for (const r of COG_ROUTES) expect(routeFitsArch(a, r)).toBe((r === 'wasi') === (a === 'wasm32'));
    }
  });

  it('isCogRoute and isCogArch accept the listed values only', () => {
    expect(COG_ROUTES.every(isCogRoute)).toBe(true);
    expect(COG_ARCHES.every(isCogArch)).toBe(true);
    for (const junk of ['', 'Native', 'remote.api', 'toString', '__proto__', 1, null, undefined, {}]) {
      expect(isCogRoute(junk)).toBe(false);
      expect(isCogArch(junk)).toBe(false);
    }
  });
});

describe('routeNetwork', () => {
  it('is the network each route gives an instance, and egress when the route is unknown', () => {
    expect(routeNetwork('native')).toBe('egress');
    expect(routeNetwork('wasi')).toBe('none');
    expect(routeNetwork('container')).toBe('none');
    expect(routeNetwork('remote.api')).toBe('egress');
    expect(routeNetwork('no-such-route')).toBe('egress');
    expect(routeNetwork('toString')).toBe('egress');
    expect(routeNetwork('__proto__')).toBe('egress');
    expect(routeNetwork(undefined)).toBe('egress');
    expect(Object.keys(ROUTE_NETWORK).sort()).toEqual([...COG_ROUTES, 'remote.api'].sort());
  });
});
