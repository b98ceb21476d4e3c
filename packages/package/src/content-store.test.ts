import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { blake3Hex, utf8 } from '@heddle/envelope';
import { describe, expect, it } from 'vitest';
import { ContentStore } from './content-store.js';
import { tempDir } from './test-fixtures.js';

const objectPath = (root: string, hash: string) => join(root, 'objects', hash.slice(0, 2), hash);

describe('ContentStore', () => {
  it('stores by BLAKE3, reads back verified, accounts sizes and survives reopening', async () => {
    const root = tempDir();
    const store = ContentStore.open(root);
    const a = store.put(utf8('alpha'));
    expect(a).toBe(blake3Hex(utf8('alpha')));
    expect(store.put(utf8('alpha'))).toBe(a);
    const src = join(tempDir(), 'big.bin');
    writeFileSync(src, Buffer.alloc(3 * 1024 * 1024 + 7, 9));
    const b = await store.putFile(src);
    expect(b.size).toBe(3 * 1024 * 1024 + 7);
    expect(store.totalBytes).toBe(5 + b.size);
    expect(new TextDecoder().decode(store.get(a))).toBe('alpha');
    expect(await store.verifiedPath(b.hash)).toBe(objectPath(root, b.hash));
    const again = ContentStore.open(root);
    expect(again.totalBytes).toBe(5 + b.size);
    expect(again.has(a) && again.has(b.hash)).toBe(true);
  });

  it('refuses content that does not match the expected hash and keeps nothing', async () => {
    const root = tempDir();
    const store = ContentStore.open(root);
    expect(() => store.put(utf8('x'), '0'.repeat(64))).toThrow(
      expect.objectContaining({ code: 'store_corrupt' }),
    );
    const src = join(tempDir(), 'f');
    writeFileSync(src, 'data');
    await expect(store.putFile(src, '0'.repeat(64))).rejects.toMatchObject({ code: 'store_corrupt' });
    expect(store.totalBytes).toBe(0);
    expect(readdirSync(join(root, 'objects')).flatMap((d) => readdirSync(join(root, 'objects', d)))).toEqual(
      [],
    );
  });

  it('detects corruption on read, removes the object and fixes the accounting', async () => {
    const root = tempDir();
    const store = ContentStore.open(root);
    const h = store.put(utf8('payload'));
    const g = store.put(utf8('another'));
    writeFileSync(objectPath(root, h), 'paylOad');
    expect(() => store.get(h)).toThrow(expect.objectContaining({ code: 'store_corrupt' }));
    expect(store.has(h)).toBe(false);
    expect(() => store.get(h)).toThrow(expect.objectContaining({ code: 'store_missing' }));
    writeFileSync(objectPath(root, g), 'tampered');
    await expect(store.verifiedPath(g)).rejects.toMatchObject({ code: 'store_corrupt' });
    expect(store.totalBytes).toBe(0);
    expect(() => store.get('../../etc/passwd')).toThrow(expect.objectContaining({ code: 'store_invalid' }));
  });

  it('evicts unpinned objects least recently used first, never pinned ones; pins persist', () => {
    const root = tempDir();
    const store = ContentStore.open(root);
    const h1 = store.put(new Uint8Array(100).fill(1));
    const h2 = store.put(new Uint8Array(100).fill(2));
    const h3 = store.put(new Uint8Array(100).fill(3));
    store.pin(h1);
    store.get(h2); // h2 is now more recent than h3
    expect(store.evict(150)).toEqual([h3, h2]);
    expect(store.has(h1)).toBe(true);
    expect(store.totalBytes).toBe(100);
    expect(store.evict(0)).toEqual([]);
    const reopened = ContentStore.open(root);
    expect(reopened.isPinned(h1)).toBe(true);
    expect(reopened.pinnedBytes).toBe(100);
    reopened.unpin(h1);
    expect(ContentStore.open(root).evict(0)).toEqual([h1]);
    expect(() => store.pin('f'.repeat(64))).toThrow(expect.objectContaining({ code: 'store_missing' }));
  });

  it('keeps within a capacity on put, and removes temporary files of an interrupted write on open', () => {
    const root = tempDir();
    const store = ContentStore.open(root, { capacityBytes: 250 });
    const first = store.put(new Uint8Array(100).fill(1));
    store.put(new Uint8Array(100).fill(2));
    const third = store.put(new Uint8Array(100).fill(3));
    expect(store.has(first)).toBe(false);
    expect(store.has(third)).toBe(true);
    expect(store.totalBytes).toBe(200);
    const stray = join(root, 'objects', third.slice(0, 2), '.abc.tmp');
    writeFileSync(stray, 'half');
    ContentStore.open(root);
    expect(readdirSync(join(root, 'objects', third.slice(0, 2)))).toEqual([third]);
  });

  it('refuses a malformed pins file', () => {
    const root = tempDir();
    ContentStore.open(root);
    writeFileSync(join(root, 'pins.json'), '{"schema":"heddle.content-pins.v1","pins":["nope"]}');
    expect(() => ContentStore.open(root)).toThrow(expect.objectContaining({ code: 'store_invalid' }));
    expect(readFileSync(join(root, 'pins.json'), 'utf8')).toContain('nope');
  });
});
