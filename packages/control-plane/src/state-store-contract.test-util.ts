// The StateStore contract: one test suite every store passes (SQLite and PostgreSQL run it against
// the real engine, nothing mocked). A store is given as a fixture: where a fresh empty store lives,
// how to open it, how to run raw SQL against it (to damage a row), and how a child process opens it.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { StateError } from './errors.js';
import { parseJobSpec } from './job-file.js';
import { SCHEMA_VERSION } from './migrations.js';
import type {
  AlertRecord,
  HeldRevocationList,
  IdempotencyRecord,
  JobInstanceRecord,
  JobRecord,
  JobVersionRecord,
  NodeMetaRecord,
  OrderRecord,
  PlaceClaimRecord,
  PlacementRecord,
  RescheduleRecord,
  StateStore,
  TargetRecord,
  UnsettledRecord,
} from './state-store.js';

/** A store under contract: the interface plus the application meta values both stores keep. */
export type ContractStore = StateStore & {
  getMeta(key: string): string | undefined;
  putMeta(key: string, value: string): void;
  listMeta(): [string, string][];
  listIdempotencyKeys(): IdempotencyRecord[];
  listAllJobVersions(): JobVersionRecord[];
};

/** How the contract reaches one kind of store. */
export interface StoreFixture {
  /** A fresh, empty location (a file path, a database URL). */
  fresh(): string | Promise<string>;
  /** Opens the store at `location` (creating its schema when empty). */
  open(location: string): ContractStore;
  /** Runs raw SQL statements at `location` while no store has it open. */
  raw(location: string, sql: string): void | Promise<void>;
  /** For a child process: the module (absolute path) exporting `exportName`, and the expression that opens `location` with it. */
  readonly child: {
    readonly module: string;
    readonly exportName: string;
    openExpr(location: string): string;
  };
}

const repoDir = fileURLToPath(new URL('../../..', import.meta.url));
const pkgDir = fileURLToPath(new URL('..', import.meta.url));

/** A target record for tests. */
export const target = (id: string, over: Partial<TargetRecord> = {}): TargetRecord => ({
  node_id: id,
  url: `ws://127.0.0.1:7000/${id}`,
  public_key: 'a'.repeat(64),
  key_source: 'tofu',
  tier: 'paired',
  assigned_tier: 'paired',
  pending_key: null,
  routes: ['native', 'wasi'],
  facts: { payload: '{"node_id":"x"}', public_key: 'a'.repeat(64), signature: 'b'.repeat(128) },
  learned_at_ms: 1000,
  last_seen_ms: 2000,
  unreachable_since_ms: null,
  last_error: null,
  ...over,
});

/** An order record for tests. */
export const order = (id: string, over: Partial<OrderRecord> = {}): OrderRecord => ({
  order_id: id,
  workload: 'hello',
  version: '1.0.0',
  manifest_hash: 'c'.repeat(64),
  package_id: 'pkg-1',
  mode: { type: 'interval', secs: 30 },
  values: { greeting: 'hi', count: 3, loud: true, none: null },
  start: true,
  node: null,
  prefer: ['n1'],
  avoid: [],
  allow_emulated: false,
  migratable: true,
  created_at_ms: 5000,
  ...over,
});

/** A placement record for tests. */
export const placement = (id: string, over: Partial<PlacementRecord> = {}): PlacementRecord => ({
  instance_id: id,
  node_id: 'n1',
  order_id: 'o-1',
  decision_id: 'd'.repeat(64),
  workload: 'hello',
  version: '1.0.0',
  variant: 'linux-x86_64',
  runtime: 'native',
  manifest_hash: 'c'.repeat(64),
  package_id: 'pkg-1',
  signer_keys: ['e'.repeat(64)],
  artifact_hashes: ['f'.repeat(64), '0'.repeat(64)],
  state: 'running',
  desired_running: true,
  placed_at_ms: 100,
  updated_at_ms: 100,
  replaces: null,
  reschedules: 0,
  ...over,
});

/** An unsettled record for tests. */
export const unsettled = (id: string, over: Partial<UnsettledRecord> = {}): UnsettledRecord => ({
  decision_id: id,
  order_id: 'o-1',
  node_id: 'n1',
  expected_instance_id: null,
  variant: 'linux-x86_64',
  since_ms: 700,
  attempts: 0,
  last_error: 'timeout',
  ...over,
});

/** Every table of the state at the current schema version (sorted), the same in both stores. */
export const STATE_TABLES: readonly string[] = [
  'alerts',
  'idempotency_keys',
  'job_instances',
  'job_versions',
  'jobs',
  'meta',
  'node_meta',
  'orders',
  'place_claims',
  'placements',
  'reschedules',
  'revocation_acks',
  'revocation_list',
  'targets',
  'unsettled',
];

/** A job version record for tests. */
export function jobVersion(job: string, n: number): JobVersionRecord {
  return {
    job,
    version: n,
    spec: parseJobSpec({ name: job, manifest_hash: 'a'.repeat(64), count: n }),
    spec_hash: String(n % 10).repeat(64),
    manifest_hash: 'a'.repeat(64),
    workload: 'hello-cog',
    workload_version: `1.0.${n}`,
    cause: n === 3 ? 'revert' : 'run',
    reverted_from: n === 3 ? 1 : null,
    actor: n === 1 ? 'alice' : null,
    created_at_ms: 1000 + n,
  };
}

/** A job record for tests. */
export const JOB: JobRecord = {
  name: 'web',
  version: 2,
  status: 'running',
  rollout: 'rolling',
  stable_version: 1,
  blocked: null,
  detail: null,
  created_at_ms: 1,
  updated_at_ms: 2,
};

/** A job instance record for tests. */
export const jobInstance = (id: string, job: string, at: number): JobInstanceRecord => ({
  instance_id: id,
  job,
  version: 1,
  node_id: 'n'.repeat(32),
  order_id: 'o-1',
  placed_at_ms: at,
  healthy_at_ms: null,
});

/** Runs `fn`, expecting a `StateError`, and returns it. */
export function stateError(fn: () => unknown): StateError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(StateError);
    // cast: checked just above
    return error as StateError;
  }
  throw new Error('expected a StateError');
}

/**
 * Runs a TypeScript child that uses a real store: one `node --import tsx` process (so a signal hits
 * the writer itself, not a wrapper), with @heddle/* mapped to the package sources.
 */
export function spawnStoreChild(fixture: StoreFixture, script: string): ChildProcess {
  const dir = mkdtempSync(join(tmpdir(), 'heddle-store-child-'));
  const tsconfig = join(dir, 'tsconfig.json');
  writeFileSync(
    tsconfig,
    JSON.stringify({
      compilerOptions: { baseUrl: repoDir, paths: { '@heddle/*': ['packages/*/src/index.ts'] } },
    }),
  );
  const file = join(dir, 'child.mts');
  const { module, exportName } = fixture.child;
  writeFileSync(file, `import { ${exportName} } from ${JSON.stringify(module)};\n${script}`);
  const loader = pathToFileURL(join(repoDir, 'node_modules/tsx/dist/loader.mjs')).href;
  return spawn(process.execPath, ['--import', loader, file], {
    cwd: pkgDir,
    env: { ...process.env, TSX_TSCONFIG_PATH: tsconfig },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** The lines a child prints, its stderr, and its first line. */
export function lines(child: ChildProcess): { out: string[]; err: () => string; first: Promise<string> } {
  const out: string[] = [];
  let buf = '';
  let err = '';
  let resolveFirst: (line: string) => void = () => {};
  const first = new Promise<string>((r) => {
    resolveFirst = r;
  });
  child.stdout?.on('data', (d: Buffer) => {
    buf += d.toString();
    const parts = buf.split('\n');
    buf = parts.pop() ?? '';
    for (const p of parts) {
      out.push(p);
      resolveFirst(p);
    }
  });
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  child.on('exit', () => resolveFirst(`exited: ${err}`));
  return { out, err: () => err, first };
}

/** Resolves when `child` has exited. */
export const exited = (child: ChildProcess): Promise<void> =>
  new Promise((r) => {
    if (child.exitCode !== null || child.signalCode !== null) r();
    else child.on('exit', () => r());
  });

/**
 * The StateStore contract, run against the store `fixture` reaches (`name` names it in the test
 * titles). Every store must pass it unchanged.
 */
export function describeStateStoreContract(name: string, fixture: () => StoreFixture): void {
  const open = async (): Promise<ContractStore> => {
    const f = fixture();
    return f.open(await f.fresh());
  };

  describe(`${name}: records`, () => {
    it('finds the targets at a URL (targetIdsAt, when the store has it)', async () => {
      const s = await open();
      if (s.targetIdsAt === undefined) return;
      s.putTarget(target('n1', { url: 'ws://127.0.0.1:7001' }));
      s.putTarget(target('n2', { url: 'ws://127.0.0.1:7002' }));
      s.putTarget(target('n3', { url: 'ws://127.0.0.1:7001' }));
      expect(s.targetIdsAt('ws://127.0.0.1:7001')).toEqual(['n1', 'n3']);
      expect(s.targetIdsAt('ws://127.0.0.1:7002')).toEqual(['n2']);
      expect(s.targetIdsAt('ws://127.0.0.1:7003')).toEqual([]);
      s.removeTarget('n1');
      expect(s.targetIdsAt('ws://127.0.0.1:7001')).toEqual(['n3']);
      s.close();
    });

    it('round-trips targets: put, get, list, update in place, remove', async () => {
      const s = await open();
      expect(s.schemaVersion).toBe(SCHEMA_VERSION);
      expect(s.getTarget('n1')).toBeUndefined();
      s.putTarget(target('n2'));
      s.putTarget(target('n1', { facts: null, tier: null, pending_key: 'b'.repeat(64), last_seen_ms: null }));
      expect(s.getTarget('n2')).toEqual(target('n2'));
      expect(s.getTarget('n1')).toEqual(
        target('n1', { facts: null, tier: null, pending_key: 'b'.repeat(64), last_seen_ms: null }),
      );
      expect(s.listTargets().map((t) => t.node_id)).toEqual(['n1', 'n2']);
      s.putTarget(target('n2', { key_source: 'pinned', unreachable_since_ms: 9, last_error: 'refused' }));
      expect(s.listTargets()).toHaveLength(2);
      expect(s.getTarget('n2')).toEqual(
        target('n2', { key_source: 'pinned', unreachable_since_ms: 9, last_error: 'refused' }),
      );
      // The software a host reported (schema v4), its lease (v5), its kind and Seed info (v2, v6) are kept.
      const software = { name: 'heddle-host', version: '0.1.0' };
      s.putTarget(
        target('n2', {
          software,
          lease_ms: 30_000,
          kind: 'seed',
          seed: { spki: 'ab', token_file: '/t', allow_plain_http: true },
        }),
      );
      expect(s.getTarget('n2')).toMatchObject({
        software,
        lease_ms: 30_000,
        kind: 'seed',
        seed: { spki: 'ab', token_file: '/t', allow_plain_http: true },
      });
      expect(s.removeTarget('n2')).toBe(true);
      expect(s.removeTarget('n2')).toBe(false);
      expect(s.listTargets().map((t) => t.node_id)).toEqual(['n1']);
      s.close();
    });

    it('orders keys bytewise (as SQLite does), whatever the locale', async () => {
      const s = await open();
      for (const id of ['b', 'B', 'a', 'A', '_x', 'a-1', 'a_1']) s.putTarget(target(id));
      expect(s.listTargets().map((t) => t.node_id)).toEqual(['A', 'B', '_x', 'a', 'a-1', 'a_1', 'b']);
      s.close();
    });

    it('round-trips orders with every run mode and config value type', async () => {
      const s = await open();
      s.putOrder(order('o-2', { created_at_ms: 9 }));
      s.putOrder(order('o-1', { mode: { type: 'once' }, values: {}, node: 'n1', avoid: ['n2', 'n3'] }));
      expect(s.getOrder('o-2')).toEqual(order('o-2', { created_at_ms: 9 }));
      expect(s.listOrders().map((o) => o.order_id)).toEqual(['o-2', 'o-1']); // by created_at_ms
      s.putOrder(
        order('o-2', { mode: { type: 'listener' }, start: false, allow_emulated: true, created_at_ms: 9 }),
      );
      expect(s.getOrder('o-2')).toEqual(
        order('o-2', { mode: { type: 'listener' }, start: false, allow_emulated: true, created_at_ms: 9 }),
      );
      const pinned = order('o-3', {
        store_pin: { id: 'x', version: '1', sha256: 'f'.repeat(64), console_commands: ['status'] },
        constraints: [{ label: 'room', value: 'kitchen' }],
        spread: 'rack',
        migratable: false,
        values: { big: 2 ** 53 - 1, neg: -1.5 },
      });
      s.putOrder(pinned);
      expect(s.getOrder('o-3')).toEqual(pinned);
      expect(s.listOrders()).toHaveLength(3);
      expect(s.removeOrder('o-1')).toBe(true);
      expect(s.removeOrder('o-1')).toBe(false);
      expect(s.getOrder('o-1')).toBeUndefined();
      s.close();
    });

    it('round-trips placements and unsettled records', async () => {
      const s = await open();
      s.putPlacement(placement('i-1'));
      expect(s.getPlacement('i-1')).toEqual(placement('i-1'));
      s.putPlacement(placement('i-1', { state: 'stopped', desired_running: false, updated_at_ms: 200 }));
      expect(s.listPlacements()).toEqual([
        placement('i-1', { state: 'stopped', desired_running: false, updated_at_ms: 200 }),
      ]);
      expect(s.removePlacement('i-1')).toBe(true);
      expect(s.removePlacement('i-1')).toBe(false);
      expect(s.getPlacement('i-1')).toBeUndefined();

      s.putUnsettled(unsettled('d-2', { since_ms: 800 }));
      s.putUnsettled(unsettled('d-1', { expected_instance_id: 'i-9' }));
      expect(s.getUnsettled('d-1')).toEqual(unsettled('d-1', { expected_instance_id: 'i-9' }));
      expect(s.listUnsettled().map((u) => u.decision_id)).toEqual(['d-1', 'd-2']);
      s.putUnsettled(unsettled('d-1', { attempts: 4, last_error: 'unreachable' }));
      expect(s.getUnsettled('d-1')).toEqual(unsettled('d-1', { attempts: 4, last_error: 'unreachable' }));
      expect(s.removeUnsettled('d-1')).toBe(true);
      expect(s.removeUnsettled('d-1')).toBe(false);
      expect(s.listUnsettled()).toHaveLength(1);
      s.close();
    });

    it('lists placements by node, ordered by placed_at_ms (then instance id)', async () => {
      const s = await open();
      s.putPlacement(placement('i-c', { node_id: 'n1', placed_at_ms: 30 }));
      s.putPlacement(placement('i-a', { node_id: 'n2', placed_at_ms: 20 }));
      s.putPlacement(placement('i-b', { node_id: 'n1', placed_at_ms: 10 }));
      s.putPlacement(placement('i-d', { node_id: 'n1', placed_at_ms: 30 }));
      s.putPlacement(placement('i-0', { node_id: 'n1', placed_at_ms: 30, replaces: 'i-x', reschedules: 2 }));
      expect(s.listPlacements().map((p) => p.instance_id)).toEqual(['i-b', 'i-a', 'i-0', 'i-c', 'i-d']);
      expect(s.listPlacements('n1').map((p) => p.instance_id)).toEqual(['i-b', 'i-0', 'i-c', 'i-d']);
      expect(s.listPlacements('n2').map((p) => p.instance_id)).toEqual(['i-a']);
      expect(s.listPlacements('n3')).toEqual([]);
      expect(s.getPlacement('i-0')).toMatchObject({ replaces: 'i-x', reschedules: 2 });
      s.close();
    });

    it('round-trips reschedules, alerts, node settings, revocation acks and the revocation list', async () => {
      const s = await open();
      const r: RescheduleRecord = {
        instance_id: 'i-2',
        order_id: 'o-1',
        node_id: 'n1',
        avoid: ['n1'],
        reschedules: 1,
        attempts: 0,
        next_at_ms: 5,
        since_ms: 5,
        decision_id: null,
        last_error: null,
      };
      s.putReschedule(r);
      s.putReschedule({ ...r, instance_id: 'i-1', since_ms: 9, decision_id: 'd-1', last_error: 'x' });
      expect(s.getReschedule('i-2')).toEqual(r);
      expect(s.listReschedules().map((x) => x.instance_id)).toEqual(['i-2', 'i-1']);
      expect(s.removeReschedule('i-2')).toBe(true);
      expect(s.removeReschedule('i-2')).toBe(false);

      const alert: AlertRecord = {
        alert_id: 'al-1',
        instance_id: 'i-2',
        node_id: 'n1',
        order_id: 'o-1',
        reason: 'pinned',
        detail: 'x',
        raised_at_ms: 1,
        acked_at_ms: null,
      };
      s.putAlert(alert);
      s.putAlert({ ...alert, acked_at_ms: 7 });
      expect(s.getAlert('al-1')).toEqual({ ...alert, acked_at_ms: 7 });
      expect(s.listAlerts()).toHaveLength(1);

      const meta: NodeMetaRecord = {
        node_id: 'n1',
        cordoned: true,
        labels: { room: 'kitchen' },
        updated_at_ms: 3,
      };
      s.putNodeMeta(meta);
      s.putNodeMeta({ ...meta, node_id: 'n0', cordoned: false, labels: {} });
      expect(s.getNodeMeta('n1')).toEqual(meta);
      expect(s.listNodeMeta().map((m) => [m.node_id, m.cordoned])).toEqual([
        ['n0', false],
        ['n1', true],
      ]);
      expect(s.removeNodeMeta('n1')).toBe(true);
      expect(s.removeNodeMeta('n1')).toBe(false);

      s.putRevocationAck({ node_id: 'n1', generation: 2, acked_at_ms: 3, last_error: null });
      expect(s.listRevocationAcks()).toEqual([
        { node_id: 'n1', generation: 2, acked_at_ms: 3, last_error: null },
      ]);
      expect(s.getRevocationAck('n1')?.generation).toBe(2);
      expect(s.removeRevocationAck('n1')).toBe(true);
      expect(s.getRevocationAck('n1')).toBeUndefined();

      expect(s.getRevocationList()).toBeUndefined();
      const list: HeldRevocationList = {
        name: 'ignored',
        generation: 4,
        list: { schema: 'heddle.revocation-list.v1', generation: 4, entries: [] },
        stored_at_ms: 1,
      };
      s.putRevocationList(list);
      expect(s.getRevocationList()).toEqual({ ...list, name: 'current' });
      s.close();
    });

    it('keeps idempotency keys, and prunes those created before a time', async () => {
      const s = await open();
      const k = (key: string, at: number): IdempotencyRecord => ({
        key,
        fingerprint: 'f'.repeat(64),
        order_id: `o-${key}`,
        result: null,
        created_at_ms: at,
        claimed_by: `ctl/${key}`,
        claimed_at_ms: at,
      });
      s.putIdempotencyKey(k('a', 10));
      s.putIdempotencyKey(k('b', 20));
      s.putIdempotencyKey({ ...k('c', 30), result: '{"status":"placed"}' });
      expect(s.getIdempotencyKey('c')?.result).toBe('{"status":"placed"}');
      expect(s.pruneIdempotencyKeys(20)).toBe(1);
      expect(s.getIdempotencyKey('a')).toBeUndefined();
      expect(s.removeIdempotencyKey('b')).toBe(true);
      expect(s.removeIdempotencyKey('b')).toBe(false);
      expect(s.pruneIdempotencyKeys(1000)).toBe(1);
      s.close();
    });

    it('keeps application meta values apart from its own keys', async () => {
      const s = await open();
      expect(s.getMeta('state_seq')).toBeUndefined();
      s.putMeta('state_seq', '4');
      s.putMeta('state_seq', '5');
      expect(s.getMeta('state_seq')).toBe('5');
      s.putMeta('chain_seen', '{}');
      expect(s.listMeta()).toEqual([
        ['chain_seen', '{}'],
        ['state_seq', '5'],
      ]);
      expect(s.getMeta('schema_version')).toBeUndefined(); // the store's own key is not an app key
      expect(() => s.putMeta('Bad Key', 'x')).toThrow(TypeError);
      s.close();
    });

    it('refuses to write an invalid record, and stores nothing of it', async () => {
      const s = await open();
      const e = stateError(() => s.putPlacement(placement('i-1', { placed_at_ms: Number.NaN })));
      expect(e.code).toBe('corrupt');
      expect(e.field).toBe('placements.placed_at_ms');
      expect(stateError(() => s.putOrder(order('o-1', { mode: { type: 'bogus' } as never }))).code).toBe(
        'corrupt',
      );
      expect(s.listPlacements()).toEqual([]);
      expect(s.listOrders()).toEqual([]);
      s.close();
    });

    it('calls target watchers on every target and node settings write or removal', async () => {
      const s = await open();
      const seen: string[] = [];
      s.watchTargets?.((id) => seen.push(id));
      s.putTarget(target('n1'));
      s.removeTarget('n1');
      s.putNodeMeta({ node_id: 'n2', cordoned: true, labels: {}, updated_at_ms: 1 });
      s.removeNodeMeta('n2');
      s.putOrder(order('o-1'));
      expect(seen).toEqual(['n1', 'n1', 'n2', 'n2']);
      s.close();
    });
  });

  describe(`${name}: capacity shared by several controllers (schema v10)`, () => {
    const claim = (id: string, over: Partial<PlaceClaimRecord> = {}): PlaceClaimRecord => ({
      claim_id: id,
      node_id: 'n1',
      order_id: 'o-1',
      instance_id: `i-${id}`,
      ram_mb: 64,
      cpu_pct: 10,
      claimed_by: 'ctl-a',
      claimed_at_ms: 1000,
      ...over,
    });

    it('round-trips place claims, and the resources of placements and unsettled records', async () => {
      const s = await open();
      s.putPlaceClaim(claim('pc-2', { claimed_at_ms: 2000 }));
      s.putPlaceClaim(claim('pc-1'));
      expect(s.getPlaceClaim('pc-1')).toEqual(claim('pc-1'));
      expect(s.listPlaceClaims().map((c) => c.claim_id)).toEqual(['pc-1', 'pc-2']);
      s.putPlaceClaim(claim('pc-1', { node_id: 'n2', claimed_at_ms: 3000 }));
      expect(s.getPlaceClaim('pc-1')).toEqual(claim('pc-1', { node_id: 'n2', claimed_at_ms: 3000 }));
      expect(s.removePlaceClaim('pc-1')).toBe(true);
      expect(s.removePlaceClaim('pc-1')).toBe(false);
      expect(s.getPlaceClaim('pc-1')).toBeUndefined();
      s.putPlacement(placement('i-1', { ram_mb: 128, cpu_pct: 25 }));
      expect(s.getPlacement('i-1')).toEqual(placement('i-1', { ram_mb: 128, cpu_pct: 25 }));
      s.putUnsettled(unsettled('d-1', { ram_mb: 32, cpu_pct: 5 }));
      expect(s.getUnsettled('d-1')).toEqual(unsettled('d-1', { ram_mb: 32, cpu_pct: 5 }));
      // Records written without them read back without them.
      s.putPlacement(placement('i-2'));
      expect(s.getPlacement('i-2')?.ram_mb).toBeUndefined();
      s.close();
    });

    it('sums one node: live placements, unsettled decisions and claims since the cut-off', async () => {
      const s = await open();
      expect(s.nodeLoad('n1', 0)).toEqual({
        ram_mb: 0,
        cpu_pct: 0,
        placements: 0,
        unsettled: 0,
        claims: 0,
        stale_claims: 0,
      });
      s.putPlacement(placement('i-1', { ram_mb: 100, cpu_pct: 20 }));
      s.putPlacement(placement('i-2', { ram_mb: 50, cpu_pct: 5, state: 'stopped' }));
      // Gone placements hold nothing; one without resources counts, with none.
      for (const state of ['unloaded', 'lost', 'revoked', 'rescheduled'] as const)
        s.putPlacement(placement(`i-${state}`, { ram_mb: 1000, cpu_pct: 100, state }));
      s.putPlacement(placement('i-old'));
      s.putPlacement(placement('i-other', { node_id: 'n2', ram_mb: 1000, cpu_pct: 100 }));
      s.putUnsettled(unsettled('d-1', { ram_mb: 30, cpu_pct: 3 }));
      s.putUnsettled(unsettled('d-2'));
      s.putUnsettled(unsettled('d-3', { node_id: 'n2', ram_mb: 1000, cpu_pct: 100 }));
      s.putPlaceClaim(claim('pc-new', { claimed_at_ms: 5000, ram_mb: 7, cpu_pct: 1 }));
      s.putPlaceClaim(claim('pc-edge', { claimed_at_ms: 4000, ram_mb: 11, cpu_pct: 2 }));
      s.putPlaceClaim(claim('pc-stale', { claimed_at_ms: 3999, ram_mb: 1000, cpu_pct: 100 }));
      s.putPlaceClaim(claim('pc-n2', { node_id: 'n2', claimed_at_ms: 5000, ram_mb: 1000 }));
      expect(s.nodeLoad('n1', 4000)).toEqual({
        ram_mb: 100 + 50 + 30 + 7 + 11,
        cpu_pct: 20 + 5 + 3 + 1 + 2,
        placements: 3,
        unsettled: 2,
        claims: 2,
        stale_claims: 1,
      });
      expect(s.nodeLoad('n3', 0)).toEqual({
        ram_mb: 0,
        cpu_pct: 0,
        placements: 0,
        unsettled: 0,
        claims: 0,
        stale_claims: 0,
      });
      // Pruning removes the node's claims before the cut-off only.
      expect(s.prunePlaceClaims('n1', 4000)).toBe(1);
      expect(
        s
          .listPlaceClaims()
          .map((c) => c.claim_id)
          .sort(),
      ).toEqual(['pc-edge', 'pc-n2', 'pc-new']);
      expect(s.nodeLoad('n1', 0).claims).toBe(2);
      s.close();
    });

    it('reads and writes a claim inside a transaction that rolls back with it', async () => {
      const s = await open();
      expect(() =>
        s.transaction(() => {
          expect(s.nodeLoad('n1', 0).claims).toBe(0);
          s.putPlaceClaim(claim('pc-1'));
          expect(s.nodeLoad('n1', 0).claims).toBe(1);
          throw new Error('boom');
        }),
      ).toThrow('boom');
      expect(s.listPlaceClaims()).toEqual([]);
      s.close();
    });
  });

  describe(`${name}: jobs (schema v8)`, () => {
    it('keeps jobs, their versions and instances across a reopen', async () => {
      const f = fixture();
      const where = await f.fresh();
      const s = f.open(where);
      s.putJob(JOB);
      for (const n of [2, 1, 3]) s.putJobVersion(jobVersion('web', n));
      s.putJobVersion(jobVersion('other', 1));
      s.putJobInstance(jobInstance('i-b', 'web', 20));
      s.putJobInstance(jobInstance('i-a', 'web', 10));
      s.putJobInstance(jobInstance('i-c', 'other', 5));
      s.close();
      const r = f.open(where);
      expect(r.getJob('web')).toEqual(JOB);
      expect(r.listJobs().map((j) => j.name)).toEqual(['web']);
      expect(r.listJobVersions('web').map((v) => v.version)).toEqual([1, 2, 3]);
      expect(r.getJobVersion('web', 3)).toEqual(jobVersion('web', 3));
      expect(r.getJobVersion('web', 4)).toBeUndefined();
      expect(r.listAllJobVersions().map((v) => `${v.job}@${v.version}`)).toEqual([
        'other@1',
        'web@1',
        'web@2',
        'web@3',
      ]);
      expect(r.listJobInstances('web').map((i) => i.instance_id)).toEqual(['i-a', 'i-b']);
      expect(r.listJobInstances().map((i) => i.instance_id)).toEqual(['i-c', 'i-a', 'i-b']);
      r.putJobInstance({ ...jobInstance('i-a', 'web', 10), healthy_at_ms: 99 });
      expect(r.getJobInstance('i-a')?.healthy_at_ms).toBe(99);
      expect(r.removeJobInstance('i-a')).toBe(true);
      expect(r.removeJobInstance('i-a')).toBe(false);
      expect(r.removeJob('web')).toBe(true);
      expect(r.getJob('web')).toBeUndefined();
      r.close();
    });

    it('never rewrites a job version (StateError conflict), and the stored one stays', async () => {
      const s = await open();
      s.putJobVersion(jobVersion('web', 1));
      const e = stateError(() => s.putJobVersion({ ...jobVersion('web', 1), actor: 'mallory' }));
      expect(e).toMatchObject({ code: 'conflict', field: 'job_versions.version' });
      expect(s.getJobVersion('web', 1)?.actor).toBe('alice');
      s.close();
    });

    it('refuses an invalid job row, naming the field', async () => {
      const s = await open();
      expect(stateError(() => s.putJob({ ...JOB, status: 'paused' as JobRecord['status'] }))).toMatchObject({
        code: 'corrupt',
        field: 'jobs.status',
      });
      s.close();
    });
  });

  describe(`${name}: transactions and lifecycle`, () => {
    it('rolls back every write of a transaction that throws, and commits one that returns', async () => {
      const s = await open();
      s.putTarget(target('n0'));
      expect(() =>
        s.transaction(() => {
          s.putTarget(target('n1'));
          s.putOrder(order('o-1'));
          s.putPlacement(placement('i-1'));
          s.removeTarget('n0');
          s.transaction(() => s.putUnsettled(unsettled('d-1'))); // joins the outer one
          throw new Error('boom');
        }),
      ).toThrow('boom');
      expect(s.listTargets().map((t) => t.node_id)).toEqual(['n0']);
      expect(s.listOrders()).toEqual([]);
      expect(s.listPlacements()).toEqual([]);
      expect(s.listUnsettled()).toEqual([]);

      const out = s.transaction(() => {
        s.putOrder(order('o-1'));
        s.putPlacement(placement('i-1'));
        return 42;
      });
      expect(out).toBe(42);
      expect(s.getOrder('o-1')).toBeDefined();
      expect(s.getPlacement('i-1')).toBeDefined();

      // An inner transaction that throws and is caught undoes only its own writes.
      s.transaction(() => {
        s.putTarget(target('n5'));
        try {
          s.transaction(() => {
            s.putTarget(target('n6'));
            throw new Error('inner');
          });
        } catch {
          // the outer goes on
        }
      });
      expect(s.listTargets().map((t) => t.node_id)).toEqual(['n0', 'n5']);

      // A promise-returning function is refused (and rolled back): the store is synchronous.
      expect(() => s.transaction(() => Promise.resolve(s.putTarget(target('n7'))))).toThrow(/promise/);
      expect(s.getTarget('n7')).toBeUndefined();
      // An invalid record inside a transaction fails it as a whole.
      expect(() =>
        s.transaction(() => {
          s.putTarget(target('n8'));
          s.putPlacement(placement('i-9', { placed_at_ms: -1 }));
        }),
      ).toThrow(StateError);
      expect(s.getTarget('n8')).toBeUndefined();
      s.close();
    });

    it('keeps every write across close and reopen', async () => {
      const f = fixture();
      const where = await f.fresh();
      const a = f.open(where);
      a.putTarget(target('n1'));
      a.putOrder(order('o-1'));
      a.transaction(() => {
        a.putPlacement(placement('i-1'));
        a.putUnsettled(unsettled('d-1'));
      });
      a.close();
      const b = f.open(where);
      expect(b.schemaVersion).toBe(SCHEMA_VERSION);
      expect(b.getTarget('n1')).toEqual(target('n1'));
      expect(b.getOrder('o-1')).toEqual(order('o-1'));
      expect(b.getPlacement('i-1')).toEqual(placement('i-1'));
      expect(b.getUnsettled('d-1')).toEqual(unsettled('d-1'));
      b.close();
    });

    it('throws closed on every call after close; closing twice is a no-op', async () => {
      const s = await open();
      s.close();
      s.close();
      const calls: (() => unknown)[] = [
        () => s.transaction(() => 1),
        () => s.getTarget('n1'),
        () => s.listTargets(),
        () => s.putTarget(target('n1')),
        () => s.removeTarget('n1'),
        () => s.getOrder('o'),
        () => s.listOrders(),
        () => s.putOrder(order('o')),
        () => s.removeOrder('o'),
        () => s.getPlacement('i'),
        () => s.listPlacements(),
        () => s.listPlacements('n1'),
        () => s.putPlacement(placement('i')),
        () => s.removePlacement('i'),
        () => s.getUnsettled('d'),
        () => s.listUnsettled(),
        () => s.putUnsettled(unsettled('d')),
        () => s.removeUnsettled('d'),
        () => s.getMeta('x'),
      ];
      for (const call of calls) expect(stateError(call).code).toBe('closed');
    });

    it('reports a corrupt row as StateError corrupt naming the table, key and column', async () => {
      const f = fixture();
      const where = await f.fresh();
      const s = f.open(where);
      s.putPlacement(placement('i-1'));
      s.putPlacement(placement('i-2'));
      s.putTarget(target('n1'));
      s.close();
      await f.raw(
        where,
        `UPDATE placements SET signer_keys = '["e", ' WHERE instance_id = 'i-2';
         UPDATE targets SET tier = 'god' WHERE node_id = 'n1'`,
      );
      const t = f.open(where);
      expect(t.getPlacement('i-1')).toEqual(placement('i-1'));
      const bad = stateError(() => t.getPlacement('i-2'));
      expect(bad.code).toBe('corrupt');
      expect(bad.message).toMatch(/placements.*i-2.*signer_keys/);
      expect(bad.field).toBe('placements.signer_keys');
      expect(stateError(() => t.listPlacements()).code).toBe('corrupt');
      const tier = stateError(() => t.listTargets());
      expect(tier.code).toBe('corrupt');
      expect(tier.message).toMatch(/targets.*n1/);
      expect(tier.field).toBe('targets.tier');
      // The store stays usable: the bad row can be overwritten or removed.
      t.putPlacement(placement('i-2'));
      expect(t.listPlacements()).toHaveLength(2);
      t.close();
    });
  });

  describe(`${name}: schema versions`, () => {
    it('refuses a state at a newer schema version, and leaves it untouched', async () => {
      const f = fixture();
      const where = await f.fresh();
      const s = f.open(where);
      s.putTarget(target('n1'));
      s.close();
      await f.raw(where, `UPDATE meta SET value = '${SCHEMA_VERSION + 1}' WHERE key = 'schema_version'`);
      const e = stateError(() => f.open(where));
      expect(e.code).toBe('schema');
      expect(e.message).toMatch(/newer than this code knows/);
      await f.raw(where, `UPDATE meta SET value = '${SCHEMA_VERSION}' WHERE key = 'schema_version'`);
      const again = f.open(where);
      expect(again.getTarget('n1')).toEqual(target('n1'));
      again.close();
    });

    it('refuses a database with tables but no meta (not a Heddle state), and a broken version', async () => {
      const f = fixture();
      const foreign = await f.fresh();
      await f.raw(foreign, 'CREATE TABLE something_else (x INTEGER)');
      const e = stateError(() => f.open(foreign));
      expect(e.code).toBe('schema');
      expect(e.field).toBe('meta');
      const broken = await f.fresh();
      f.open(broken).close();
      await f.raw(broken, "UPDATE meta SET value = 'seven' WHERE key = 'schema_version'");
      const c = stateError(() => f.open(broken));
      expect(c.code).toBe('corrupt');
      expect(c.field).toBe('meta.schema_version');
    });
  });

  describe(`${name}: across processes`, () => {
    it('after kill -9 mid-loop, reopening finds exactly the acknowledged prefix (give or take the one in flight)', async () => {
      const f = fixture();
      const where = await f.fresh();
      for (let round = 0; round < 2; round++) {
        const child = spawnStoreChild(
          f,
          `
        const s = ${f.child.openExpr(where)};
        let i = s.listPlacements().length;
        console.log('start ' + i);
        for (;;) {
          const id = 'p-' + String(i).padStart(6, '0');
          s.transaction(() => {
            s.putPlacement({
              instance_id: id, node_id: 'n' + (i % 3), order_id: 'o-' + i, decision_id: 'd-' + i,
              workload: 'w', version: '1.0.0', variant: 'v', runtime: 'native', manifest_hash: 'm-' + i,
              package_id: 'pkg', signer_keys: ['k-' + i], artifact_hashes: ['a-' + i, 'b-' + i],
              state: 'running', desired_running: true, placed_at_ms: i, updated_at_ms: i,
            });
            s.putOrder({
              order_id: 'o-' + i, workload: 'w', version: '1.0.0', manifest_hash: 'm-' + i, package_id: 'pkg',
              mode: { type: 'once' }, values: { i }, start: true, node: null, prefer: [], avoid: [],
              allow_emulated: false, migratable: true, created_at_ms: i,
            });
          });
          process.stdout.write('ack ' + i + '\\n');
          i++;
        }`,
        );
        const out = lines(child);
        try {
          const start = await out.first;
          expect(start, out.err()).toMatch(/^start \d+$/);
          await new Promise((r) => setTimeout(r, 150 + Math.floor(Math.random() * 300)));
        } finally {
          child.kill('SIGKILL');
          await exited(child);
        }
        const from = Number(out.out[0]?.split(' ')[1]);
        expect(child.signalCode).toBe('SIGKILL');
        const acked = out.out.filter((l) => l.startsWith('ack ')).map((l) => Number(l.slice(4)));
        expect(acked.length).toBeGreaterThan(0);
        expect(acked).toEqual(acked.map((_, k) => from + k));
        const ackedCount = from + acked.length;

        const s = f.open(where);
        const rows = s.listPlacements(); // every row is validated on the way out
        expect(rows.length === ackedCount || rows.length === ackedCount + 1).toBe(true);
        rows.forEach((p, i) => {
          expect(p.instance_id).toBe(`p-${String(i).padStart(6, '0')}`);
          expect(p.artifact_hashes).toEqual([`a-${i}`, `b-${i}`]);
          expect(s.getOrder(`o-${i}`)?.values).toEqual({ i }); // both writes of a transaction, or neither
        });
        expect(s.listOrders()).toHaveLength(rows.length);
        s.close();
      }
    }, 60_000);
  });
}
