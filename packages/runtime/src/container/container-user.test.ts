import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ContainerRuntime } from './container-runtime.js';
import { parseContainerUser } from './container-user.js';

/** What Go's strconv.Atoi (as runc's GetExecUser uses it) makes of one side of `--user`. */
function atoi(part: string): number | undefined {
  return /^[+-]?\d+$/.test(part) ? Number(part) : undefined;
}

describe('parseContainerUser (the user as the engine reads it)', () => {
  it('refuses every spelling of root the engine reads as uid 0', () => {
    for (const spec of [
      '0',
      '0:0',
      '00:0',
      '+0',
      '+0:1000',
      '-0:1000',
      '0000',
      '0000:65534',
      'root',
      'root:root',
      '0:anything',
      ':1000',
      '1000:',
      '1000',
      '1000:0',
      '1000:000',
      'toor:1000',
      '1000:wheel',
      ' 1000:1000',
      '1000:1000:1',
      '-5:1000',
      '2147483648:1000',
      '99999999999999999999:1',
    ]) {
      expect(() => parseContainerUser(spec), spec).toThrow(
        expect.objectContaining({ code: 'invalid_config', field: 'user' }),
      );
    }
  });

  it('accepts numeric non-root users and gives the canonical spec', () => {
    expect(parseContainerUser('65534:65534')).toEqual({ uid: 65534, gid: 65534, spec: '65534:65534' });
    expect(parseContainerUser('+01000:0100')).toEqual({ uid: 1000, gid: 100, spec: '1000:100' });
    expect(parseContainerUser('2147483647:1').uid).toBe(2147483647);
  });

  it('never accepts a spec whose uid or gid the engine reads as 0 (property)', () => {
    const idPart = fc.oneof(
      fc.tuple(fc.constantFrom('', '+', '-'), fc.stringMatching(/^0{1,6}$/)).map(([s, z]) => s + z),
      fc
        .tuple(fc.constantFrom('', '+', '-'), fc.integer({ min: 0, max: 70000 }), fc.nat(3))
        .map(([s, n, z]) => s + '0'.repeat(z) + String(n)),
      fc.string(),
    );
    fc.assert(
      fc.property(idPart, idPart, (u, g) => {
        const spec = `${u}:${g}`;
        let parsed: ReturnType<typeof parseContainerUser> | undefined;
        try {
          parsed = parseContainerUser(spec);
        } catch {
          return;
        }
        expect(atoi(u)).toBeGreaterThan(0);
        expect(atoi(g)).toBeGreaterThan(0);
        expect(parsed.uid).toBe(atoi(u));
        expect(parsed.gid).toBe(atoi(g));
      }),
      { numRuns: 2000 },
    );
  });

  it('the adapter refuses a root user in any spelling and creates with the canonical one', () => {
    for (const user of ['00:0', '+0', '0000', 'root', '0:65534']) {
      expect(() => new ContainerRuntime({ user, engine: '/nonexistent' }), user).toThrow(/user/);
    }
    expect(() => new ContainerRuntime({ user: '+1000:1000', engine: '/nonexistent' })).not.toThrow();
  });
});
