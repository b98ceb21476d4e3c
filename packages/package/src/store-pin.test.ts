import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PackageError } from './errors.js';
import { parseStorePin, parseStorePins, storeEntryMatchesPin, storePinRef } from './store-pin.js';

describe('store pins', () => {
  const pin = { registry: 'seed-store', id: 'wifi-scan', version: '1.2.0', sha256: 'ab'.repeat(32) };

  it('accepts a valid pin, with a name or an https registry', () => {
    expect(parseStorePin(pin)).toEqual(pin);
    expect(
      parseStorePin({ registry: 'https://store.example/api', id: 'x', version: '0.0.1' }).sha256,
    ).toBeUndefined();
    expect(storePinRef(pin)).toBe('seed-store/wifi-scan@1.2.0');
  });

  it('refuses malformed ids, versions, registries and digests, naming the field', () => {
    const field = (v: unknown, f = '') => {
      try {
        parseStorePin(v, f);
        return 'ok';
      } catch (e) {
        expect(e).toMatchObject({ code: 'pin_invalid' });
        return (e as PackageError).field;
      }
    };
    expect(field({ ...pin, id: '../x' })).toBe('id');
    expect(field({ ...pin, version: 'latest' })).toBe('version');
    expect(field({ ...pin, registry: 'http://plain.example' })).toBe('registry');
    expect(field({ ...pin, registry: 'https://user:pw@x.example' })).toBe('registry');
    expect(field({ ...pin, sha256: 'AB'.repeat(32) })).toBe('sha256');
    expect(field({ ...pin, extra: 1 })).toBe('$');
    expect(field({ ...pin, id: 'Bad' }, 'pins[3]')).toBe('pins[3].id');
    expect(() => parseStorePins([pin, { ...pin, version: '2.0.0' }])).toThrow(/pinned twice/);
    expect(() => parseStorePins({})).toThrow(/expected an array/);
    fc.assert(
      fc.property(fc.anything(), (v) => {
        expect(field(v)).not.toBe('ok');
      }),
    );
  });

  it('matches a store entry only on id, version and (when pinned) digest', () => {
    expect(storeEntryMatchesPin(pin, { id: 'wifi-scan', version: '1.2.0', sha256: pin.sha256 })).toBe(true);
    expect(storeEntryMatchesPin(pin, { id: 'wifi-scan', version: '1.2.1', sha256: pin.sha256 })).toBe(false);
    expect(storeEntryMatchesPin(pin, { id: 'wifi-scan', version: '1.2.0' })).toBe(false);
    const { sha256: _sha256, ...unpinned } = pin;
    expect(storeEntryMatchesPin(unpinned, { id: 'wifi-scan', version: '1.2.0' })).toBe(true);
  });
});
