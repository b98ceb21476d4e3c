import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseHostSoftware } from './node-book.js';

describe('parseHostSoftware (advertisement.software of a describe)', () => {
  it('keeps a name and version of the documented forms', () => {
    expect(parseHostSoftware({ name: 'heddle-host', version: '0.1.0' })).toEqual({
      name: 'heddle-host',
      version: '0.1.0',
    });
    expect(parseHostSoftware({ name: 'acme.host', version: '2.0.0-rc.1+b7', extra: 1 })).toEqual({
      name: 'acme.host',
      version: '2.0.0-rc.1+b7',
    });
  });

  it('drops anything else to null (absent, wrong types, forms, lengths)', () => {
    for (const v of [
      undefined,
      null,
      'heddle-host 0.1.0',
      [],
      {},
      { name: 'heddle-host' },
      { name: 'Heddle Host', version: '1' },
      { name: 'h', version: '1 2' },
      { name: 'h', version: `1${'0'.repeat(64)}` },
      { name: 'h', version: 1 },
      { name: 'h', version: '\u001b[31m1' },
    ]) {
      expect(parseHostSoftware(v), JSON.stringify(v)).toBeNull();
    }
  });

  it('never throws, and what it keeps is printable and bounded', () => {
    fc.assert(
      fc.property(fc.anything(), (v) => {
        const r = parseHostSoftware(v);
        if (r !== null) expect(`${r.name}/${r.version}`).toMatch(/^[\x21-\x7e]{3,129}$/);
      }),
    );
    fc.assert(
      fc.property(fc.string(), fc.string(), (name, version) => {
        const r = parseHostSoftware({ name, version });
        if (r !== null) expect(r).toEqual({ name, version });
      }),
    );
  });
});
