import { join } from 'node:path';
import { type Chain, openChainFile } from '@heddle/chain';
import type { KeyPair } from '@heddle/envelope';
import { Gate } from '@heddle/gate';
import { NO_REVOCATIONS } from '@heddle/package';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { PlaneConfig } from './config.js';
import { ControlPlane } from './control-plane.js';
import { PostgresStateStore, type PostgresStoreOptions } from './pg-store.js';
import { controllerKeys, OPEN_POLICY, tempDir, testAnchors } from './test-plane.js';
import { postgresSkipReason, startPostgres, type TestPostgres } from './test-postgres.js';

// Several control planes sharing one PostgreSQL state, as the tests of issue 22 set them up: one real
// server per test file, a fresh database per test, and each plane with its own directory and chain
// (as each controller has its own home), closed after each test.

/** Something a test opened, closed after it (last opened first). */
export interface Closeable {
  close(): Promise<void> | void;
}

/** A control plane of its own (directory, chain file) on a shared PostgreSQL database. */
export interface SharedPlane {
  readonly plane: ControlPlane;
  readonly store: PostgresStateStore;
  readonly chain: Chain;
  /** The plane's chain file. */
  readonly chainFile: string;
}

/** How {@link SharedPostgres.planeOn} opens a plane. */
export interface SharedPlaneOptions {
  /** The controller's keys (its node id): default `controllerKeys`. */
  readonly keys?: KeyPair;
  /** Options of its store. */
  readonly store?: PostgresStoreOptions;
  /** Tunables: default short reconcile (3 s), call (5 s) and place (20 s) timeouts. */
  readonly config?: Partial<PlaneConfig>;
  /** The plane's clock. */
  readonly now?: () => number;
}

/** One test file's PostgreSQL server, its fresh databases and the planes and hosts its tests open. */
export interface SharedPostgres {
  /** Why the tests skip (no server binaries outside CI), or undefined when they run. */
  readonly skip: string | undefined;
  /** The running server (throws when the file skips). */
  server(): TestPostgres;
  /** The URL of a fresh, empty database on the server. */
  database(): Promise<string>;
  /** Closes `x` after the running test (after what was tracked later). */
  track<T extends Closeable>(x: T): T;
  /** A control plane of its own on the database `url`, closed after the running test. */
  planeOn(url: string, options?: SharedPlaneOptions): Promise<SharedPlane>;
}

const DEFAULT_CONFIG: Partial<PlaneConfig> = {
  reconcileTimeoutMs: 3_000,
  callTimeoutMs: 5_000,
  placeTimeoutMs: 20_000,
};

/**
 * Registers the file's hooks (the server started before all its tests and stopped after; what each
 * test opened closed after it) and returns the file's {@link SharedPostgres}. Databases are named
 * `<prefix>_<n>`.
 */
export function useSharedPostgres(prefix: string): SharedPostgres {
  const skip = postgresSkipReason();
  let pg: TestPostgres | undefined;
  let dbs = 0;
  const open: Closeable[] = [];
  beforeAll(async () => {
    if (skip === undefined) pg = await startPostgres();
  }, 120_000);
  afterAll(async () => {
    await pg?.stop();
  });
  afterEach(async () => {
    for (const x of open.splice(0).reverse()) {
      try {
        await x.close();
      } catch {
        // already closed by the test (a fault), or its server gone: nothing more to free
      }
    }
  });
  const server = (): TestPostgres => {
    if (pg === undefined) throw new Error('no test server');
    return pg;
  };
  const track = <T extends Closeable>(x: T): T => {
    open.push(x);
    return x;
  };
  return {
    skip,
    server,
    database: () => server().createDatabase(`${prefix}_${dbs++}`),
    track,
    async planeOn(url, options = {}) {
      const dir = tempDir();
      const chainFile = join(dir, 'chain.jsonl');
      const store = PostgresStateStore.open(url, options.store ?? {});
      const chain = await openChainFile(chainFile);
      const plane = new ControlPlane({
        keys: options.keys ?? controllerKeys,
        store,
        chain,
        gate: new Gate({ policy: OPEN_POLICY, recorder: chain }),
        anchors: testAnchors(),
        revocations: NO_REVOCATIONS,
        stateDir: dir,
        config: options.config ?? DEFAULT_CONFIG,
        ...(options.now === undefined ? {} : { now: options.now }),
      });
      // Each part closed on its own: a test may have closed the store already (a fault).
      track({ close: () => chain.close() });
      track({ close: () => store.close() });
      track({ close: () => plane.close() });
      return { plane, store, chain, chainFile };
    },
  };
}
