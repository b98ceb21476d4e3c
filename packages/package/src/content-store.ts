import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { blake3Hex, fsyncDir, HEX64_RE, writeFileAtomic } from '@heddle/envelope';
import { copyHashing, loadPins, savePins } from './content-store-files.js';
import { PackageError } from './errors.js';
import { hashFile } from './file-hash.js';

/** One object in the store. */
export interface StoreEntry {
  /** BLAKE3 of the content, hex (also its name). */
  readonly hash: string;
  /** Size in bytes. */
  readonly size: number;
  /** Whether eviction must keep it. */
  readonly pinned: boolean;
  /** Last write or verified read (ms since the epoch), for least-recently-used eviction. */
  readonly lastUsedMs: number;
}

/** Options of {@link ContentStore.open}. */
export interface ContentStoreOptions {
  /** When set, every put evicts unpinned objects (least recently used first) to stay within this many bytes. */
  readonly capacityBytes?: number;
}

/**
 * Files stored by their BLAKE3 hash under `root/objects/<2 hex>/<64 hex>`: written atomically
 * (temporary file, fsync, rename, directory fsync), verified again on every read, with size accounting,
 * pins (persisted crash-safely in `root/pins.json`) and least-recently-used eviction of unpinned objects.
 */
export class ContentStore {
  /** The store's root directory. */
  readonly root: string;
  readonly #objects: string;
  readonly #entries = new Map<string, { size: number; lastUsedMs: number }>();
  readonly #pins = new Set<string>();
  readonly #capacity: number | undefined;
  #total = 0;
  #clock = 0;

  private constructor(root: string, options: ContentStoreOptions) {
    this.root = root;
    this.#objects = join(root, 'objects');
    this.#capacity = options.capacityBytes;
  }

  /**
   * Opens (creating if needed) a store: removes temporary files a crash left behind, accounts the
   * objects, loads the pins. Throws `store_invalid` for a malformed pins file.
   */
  static open(root: string, options: ContentStoreOptions = {}): ContentStore {
    const store = new ContentStore(root, options);
    mkdirSync(store.#objects, { recursive: true });
    for (const shard of readdirSync(store.#objects)) {
      const dir = join(store.#objects, shard);
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (!HEX64_RE.test(name) || name.slice(0, 2) !== shard) {
          rmSync(path, { force: true }); // a temporary file of an interrupted write
          continue;
        }
        const st = statSync(path);
        store.#entries.set(name, { size: st.size, lastUsedMs: st.mtimeMs });
        store.#total += st.size;
        store.#clock = Math.max(store.#clock, st.mtimeMs);
      }
    }
    for (const p of loadPins(root)) store.#pins.add(p);
    return store;
  }

  /** Bytes held by all objects. */
  get totalBytes(): number {
    return this.#total;
  }

  /** Bytes held by pinned objects. */
  get pinnedBytes(): number {
    let n = 0;
    for (const h of this.#pins) n += this.#entries.get(h)?.size ?? 0;
    return n;
  }

  /** True when an object with this hash is stored. */
  has(hash: string): boolean {
    return this.#entries.has(hash);
  }

  /** Every object, least recently used first. */
  list(): StoreEntry[] {
    return [...this.#entries]
      .map(([hash, e]) => ({ hash, size: e.size, pinned: this.#pins.has(hash), lastUsedMs: e.lastUsedMs }))
      .sort((a, b) => a.lastUsedMs - b.lastUsedMs || (a.hash < b.hash ? -1 : 1));
  }

  /** Stores bytes and returns their hash. When `expectedHash` is given and differs: `store_corrupt`. */
  put(bytes: Uint8Array, expectedHash?: string): string {
    const hash = blake3Hex(bytes);
    if (expectedHash !== undefined && expectedHash !== hash) {
      throw new PackageError('store_corrupt', `content hashes to ${hash}, expected ${expectedHash}`, {
        field: 'hash',
      });
    }
    if (!this.#entries.has(hash)) {
      mkdirSync(join(this.#objects, hash.slice(0, 2)), { recursive: true });
      writeFileAtomic(this.#path(hash), bytes, { mode: 0o644 });
      this.#added(hash, bytes.length);
    } else this.#touch(hash);
    return hash;
  }

  /**
   * Copies a file into the store in one streaming pass (hashing while copying, then fsync and rename)
   * and returns its hash and size. When `expectedHash` is given and differs: `store_corrupt`, nothing kept.
   */
  async putFile(path: string, expectedHash?: string): Promise<{ hash: string; size: number }> {
    const tmp = join(this.#objects, `.${randomBytes(6).toString('hex')}.tmp`);
    try {
      const { hash, size } = await copyHashing(path, tmp);
      if (expectedHash !== undefined && expectedHash !== hash) {
        throw new PackageError('store_corrupt', `${path} hashes to ${hash}, expected ${expectedHash}`, {
          field: 'hash',
        });
      }
      if (this.#entries.has(hash)) {
        rmSync(tmp, { force: true });
        this.#touch(hash);
      } else {
        const shard = join(this.#objects, hash.slice(0, 2));
        mkdirSync(shard, { recursive: true });
        renameSync(tmp, this.#path(hash));
        fsyncDir(shard);
        this.#added(hash, size);
      }
      return { hash, size };
    } catch (err) {
      rmSync(tmp, { force: true });
      throw err;
    }
  }

  /**
   * Reads an object and checks its hash. Missing: `store_missing`. Corrupt (the bytes no longer hash
   * to the name): the object is removed and `store_corrupt` thrown.
   */
  get(hash: string): Uint8Array {
    this.#checkHash(hash);
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(readFileSync(this.#path(hash)));
    } catch (err) {
      this.#forget(hash);
      throw new PackageError('store_missing', `object ${hash} is not in the store`, {
        field: 'hash',
        cause: err,
      });
    }
    if (blake3Hex(bytes) !== hash) {
      this.delete(hash);
      throw new PackageError('store_corrupt', `object ${hash} was corrupt and has been removed`, {
        field: 'hash',
      });
    }
    this.#touch(hash);
    return bytes;
  }

  /**
   * Re-hashes an object on disk (streaming) and returns its path for a runtime to use. Same refusals
   * as {@link ContentStore.get}.
   */
  async verifiedPath(hash: string): Promise<string> {
    this.#checkHash(hash);
    const path = this.#path(hash);
    let digest: { blake3: string };
    try {
      digest = await hashFile(path);
    } catch (err) {
      this.#forget(hash);
      throw new PackageError('store_missing', `object ${hash} is not in the store`, {
        field: 'hash',
        cause: err,
      });
    }
    if (digest.blake3 !== hash) {
      this.delete(hash);
      throw new PackageError('store_corrupt', `object ${hash} was corrupt and has been removed`, {
        field: 'hash',
      });
    }
    this.#touch(hash);
    return path;
  }

  /** Pins an object so eviction keeps it (persisted). Unknown object: `store_missing`. */
  pin(hash: string): void {
    this.#checkHash(hash);
    if (!this.#entries.has(hash))
      throw new PackageError('store_missing', `object ${hash} is not in the store`, { field: 'hash' });
    if (this.#pins.has(hash)) return;
    this.#pins.add(hash);
    this.#savePins();
  }

  /** Unpins an object (persisted). */
  unpin(hash: string): void {
    if (this.#pins.delete(hash)) this.#savePins();
  }

  /** True when the object is pinned. */
  isPinned(hash: string): boolean {
    return this.#pins.has(hash);
  }

  /** Removes an object (and its pin). */
  delete(hash: string): void {
    this.#checkHash(hash);
    rmSync(this.#path(hash), { force: true });
    this.#forget(hash);
    if (this.#pins.delete(hash)) this.#savePins();
  }

  /**
   * Evicts unpinned objects, least recently used first, until at most `targetBytes` are held (or only
   * pinned objects and `keep` remain). Returns the evicted hashes.
   */
  evict(targetBytes: number, keep?: string): string[] {
    const evicted: string[] = [];
    for (const e of this.list()) {
      if (this.#total <= targetBytes) break;
      if (e.pinned || e.hash === keep) continue;
      this.delete(e.hash);
      evicted.push(e.hash);
    }
    return evicted;
  }

  #path(hash: string): string {
    return join(this.#objects, hash.slice(0, 2), hash);
  }

  #checkHash(hash: string): void {
    if (!HEX64_RE.test(hash))
      throw new PackageError('store_invalid', 'hash: expected 64 lower-case hex characters', {
        field: 'hash',
      });
  }

  #added(hash: string, size: number): void {
    this.#entries.set(hash, { size, lastUsedMs: this.#tick() });
    this.#total += size;
    if (this.#capacity !== undefined && this.#total > this.#capacity) this.evict(this.#capacity, hash);
  }

  #touch(hash: string): void {
    const e = this.#entries.get(hash);
    if (!e) return;
    const now = this.#tick();
    e.lastUsedMs = now;
    try {
      utimesSync(this.#path(hash), now / 1000, now / 1000);
    } catch {
      // the recency survives a restart only approximately; that is fine for a cache
    }
  }

  // A strictly increasing clock, so that two uses in the same millisecond still order.
  #tick(): number {
    this.#clock = Math.max(Date.now(), this.#clock + 1);
    return this.#clock;
  }

  #forget(hash: string): void {
    const e = this.#entries.get(hash);
    if (!e) return;
    this.#total -= e.size;
    this.#entries.delete(hash);
  }

  #savePins(): void {
    savePins(this.root, this.#pins);
  }
}
