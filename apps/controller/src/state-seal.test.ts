// The state database checked against the chain at start-up: a state that lost writes the chain saw
// (state.db-wal lost: an older state.db) and a chain that lost events the state was sealed against
// (chain.jsonl deleted) are refused with a clear code, and a flag accepts the loss (chained).
import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type Chain, openChainFile, verifyChainFile } from '@heddle/chain';
import { Logger } from '@heddle/cli-kit';
import { SqliteStateStore } from '@heddle/control-plane/sqlite';
import { describe, expect, it } from 'vitest';
import { CliError } from './cli-error.js';
import { type ControllerConfig, loadControllerConfig } from './controller-config.js';
import { startController } from './daemon.js';
import { checkStateAgainstChain, STATE_LOSS_KIND, STATE_MARK_KIND, StateSeal } from './state-seal.js';
import { runCaptured, tempDir } from './test-io.js';

const quiet = new Logger(() => {});

async function home(): Promise<ControllerConfig> {
  const cwd = tempDir();
  const h = join(cwd, 'h');
  expect((await runCaptured(['init', '--home', h, '--api-port', '0'], cwd)).code).toBe(0);
  const config = loadControllerConfig(join(h, 'controller.json'));
  await (await startController(config, quiet)).stop('test'); // the state and the chain exist, sealed
  return config;
}

/** `n` state writes through the seal, as the running controller makes them, then a clean close. */
async function writes(config: ControllerConfig, n: number): Promise<void> {
  const store = SqliteStateStore.open(config.stateDb);
  const chain = await openChainFile(config.chainFile);
  const seal = new StateSeal(store, chain, quiet);
  const s = seal.wrap(store);
  for (let i = 0; i < n; i++) {
    s.putRevocationAck({
      node_id: i.toString(16).padStart(32, '0'),
      generation: 0,
      acked_at_ms: null,
      last_error: null,
    });
  }
  await seal.flush();
  store.close();
  await chain.close();
}

async function refusal(config: ControllerConfig): Promise<CliError> {
  const err = await startController(config, quiet).then(
    async (r) => {
      await r.stop('test');
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CliError);
  if (!(err instanceof CliError)) throw new Error('not a CliError');
  return err;
}

describe('state against the chain at start-up', () => {
  it('a state.db whose WAL was lost (an older copy) is refused: state_behind_chain; --accept-state-loss runs on', async () => {
    const config = await home();
    copyFileSync(config.stateDb, `${config.stateDb}.before`);
    await writes(config, 3);
    // Lose the writes: the database as it was before them, no WAL.
    copyFileSync(`${config.stateDb}.before`, config.stateDb);
    rmSync(`${config.stateDb}-wal`, { force: true });
    const err = await refusal(config);
    expect(err).toMatchObject({ code: 'state_behind_chain', field: 'state_db', exitCode: 3 });
    expect(err.message).toContain('--accept-state-loss');
    const running = await startController(config, quiet, { acceptStateLoss: true });
    await running.stop('test');
    const chain = await openChainFile(config.chainFile, { readOnly: true });
    expect(chain.byKindOf(STATE_LOSS_KIND).map((e) => e.payload)).toEqual([
      expect.objectContaining({ lost: 'state', state_seq: 0, chain_state_seq: 3 }),
    ]);
    await (await startController(config, quiet)).stop('test'); // clean from now on
    expect((await verifyChainFile(config.chainFile)).ok).toBe(true);
  });

  it('a deleted chain.jsonl is refused: chain_behind_state; --accept-chain-loss starts a chain that says so', async () => {
    const config = await home();
    await writes(config, 2);
    rmSync(config.chainFile);
    const err = await refusal(config);
    expect(err).toMatchObject({ code: 'chain_behind_state', field: 'chain_file', exitCode: 3 });
    expect(existsSync(config.chainFile)).toBe(true); // the open created an empty one; still refused
    expect((await refusal(config)).code).toBe('chain_behind_state');
    await (await startController(config, quiet, { acceptChainLoss: true })).stop('test');
    const chain = await openChainFile(config.chainFile, { readOnly: true });
    expect(chain.byKindOf(STATE_LOSS_KIND).map((e) => e.payload)).toEqual([
      expect.objectContaining({ lost: 'chain' }),
    ]);
    expect(chain.byKindOf(STATE_MARK_KIND).length).toBeGreaterThan(0);
    await (await startController(config, quiet)).stop('test');
  });

  it('a crash between a state write and its mark is not a loss: the state may be ahead of the chain', async () => {
    const config = await home();
    const store = SqliteStateStore.open(config.stateDb);
    const chain = await openChainFile(config.chainFile);
    const s = new StateSeal(store, chain, quiet).wrap(store);
    s.putRevocationAck({ node_id: 'f'.repeat(32), generation: 0, acked_at_ms: null, last_error: null });
    store.close(); // no mark chained: what a kill -9 right after the write leaves
    await chain.close();
    await (await startController(config, quiet)).stop('test');
  });
});

describe('the state seal under rollbacks', () => {
  it('a write rolled back with its transaction does not count: the mark never runs ahead of the state', async () => {
    const config = await home();
    const store = SqliteStateStore.open(config.stateDb);
    const chain = await openChainFile(config.chainFile);
    const seal = new StateSeal(store, chain, quiet);
    const s = seal.wrap(store);
    const before = store.getMeta('state_seq');
    expect(() =>
      s.transaction(() => {
        s.putRevocationAck({ node_id: 'e'.repeat(32), generation: 0, acked_at_ms: null, last_error: null });
        throw new Error('abort');
      }),
    ).toThrow('abort');
    expect(store.getMeta('state_seq')).toBe(before);
    await seal.flush();
    store.close();
    await chain.close();
    await (await startController(config, quiet)).stop('test'); // not state_behind_chain
  });
});

describe('several controllers sealing one state (a shared PostgreSQL state)', () => {
  const A = 'a'.repeat(32);
  const B = 'b'.repeat(32);
  const ack = (n: number) => ({
    node_id: n.toString(16).padStart(32, '0'),
    generation: 0,
    acked_at_ms: null,
    last_error: null,
  });
  /** `n` writes through a seal of `chain` for `controller` (undefined: as before the per-controller keys). */
  async function sealed(store: SqliteStateStore, chain: Chain, controller: string | undefined, n: number) {
    const seal = new StateSeal(store, chain, quiet, controller);
    const s = seal.wrap(store);
    for (let i = 0; i < n; i++) s.putRevocationAck(ack(i));
    await seal.flush();
  }

  it('each checks the state against its own chain: a second controller starts, a lost chain is still refused', async () => {
    const dir = tempDir();
    const store = SqliteStateStore.open(join(dir, 'state.db'));
    const chainA = await openChainFile(join(dir, 'a.jsonl'));
    const chainB = await openChainFile(join(dir, 'b.jsonl'));
    try {
      await checkStateAgainstChain(store, chainA, { controller: A });
      await sealed(store, chainA, A, 2);
      // B, with a chain of its own, on the state A sealed (it was refused chain_behind_state).
      expect((await checkStateAgainstChain(store, chainB, { controller: B })).accepted).toBeUndefined();
      await sealed(store, chainB, B, 3);
      // A again: its own chain still checks out; the shared write counter is ahead of its marks.
      expect((await checkStateAgainstChain(store, chainA, { controller: A })).accepted).toBeUndefined();
      // A's chain lost: still refused, for A only.
      const lostA = await openChainFile(join(dir, 'a-lost.jsonl'));
      await expect(checkStateAgainstChain(store, lostA, { controller: A })).rejects.toMatchObject({
        code: 'chain_behind_state',
      });
      await lostA.close();
      expect((await checkStateAgainstChain(store, chainB, { controller: B })).accepted).toBeUndefined();
    } finally {
      store.close();
      await chainA.close();
      await chainB.close();
    }
  });

  it('a state sealed before the keys were per controller is checked against its controller, which takes it over', async () => {
    const dir = tempDir();
    const store = SqliteStateStore.open(join(dir, 'state.db'));
    const chainA = await openChainFile(join(dir, 'a.jsonl'));
    const chainB = await openChainFile(join(dir, 'b.jsonl'));
    try {
      await sealed(store, chainA, undefined, 2); // the one key of an older state
      const lostA = await openChainFile(join(dir, 'a-lost.jsonl'));
      await expect(checkStateAgainstChain(store, lostA, { controller: A })).rejects.toMatchObject({
        code: 'chain_behind_state',
      });
      await lostA.close();
      expect((await checkStateAgainstChain(store, chainA, { controller: A })).accepted).toBeUndefined();
      expect(store.getMeta(`chain_seen.${A}`)).toMatch(/"size":/);
      // Moved to A's key: B, starting next, is checked against nothing of A's.
      expect((await checkStateAgainstChain(store, chainB, { controller: B })).accepted).toBeUndefined();
    } finally {
      store.close();
      await chainA.close();
      await chainB.close();
    }
  });
});
