import { chmodSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { InstanceHandle, RunEvidence } from '../contract.js';
import { resolveRunUser, runningAsRoot } from '../native/native-user.js';
import type { RunMode, WorkloadConfig } from '../workload.js';
import { assembleWat, tempDir, wasiWorkload } from './fixtures/fixtures.js';
import { WasiRuntime, type WasiRuntimeOptions } from './wasi-runtime.js';

const running: Array<{ rt: WasiRuntime; h: InstanceHandle }> = [];
afterEach(async () => {
  for (const { rt, h } of running.splice(0)) await rt.stop(h, 0).catch(() => {});
});

const FD_WRITE = `(import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))`;

/**
 * The guest of issue 16 item 1: it grows its memory one page at a time until `memory.grow` fails at
 * the cap, writing one byte with fd_write after each grow, then writes a last line. Under node:wasi the
 * writes after a grow go through a stale view of the freed memory and crash Node 20 (SIGSEGV).
 */
const GROW_THEN_WRITE = `(module
  ${FD_WRITE}
  (memory (export "memory") 1)
  (data (i32.const 100) "x")
  (data (i32.const 200) "\\nafter grow\\n")
  (func $write (param $ptr i32) (param $len i32)
    (i32.store (i32.const 0) (local.get $ptr))
    (i32.store (i32.const 4) (local.get $len))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16))))
  (func (export "_start")
    (block $done
      (loop $grow
        (call $write (i32.const 100) (i32.const 1))
        (br_if $done (i32.eq (memory.grow (i32.const 1)) (i32.const -1)))
        (br $grow)))
    (call $write (i32.const 200) (i32.const 12))))`;

/**
 * Floods stdout: `$blocks` fd_write calls of one 64 KiB block of 64-byte lines, counting the calls
 * whose errno is not 0 or that wrote short; prints that count on stderr as 3 digits, at most 999
 * ("failed 000").
 */
function floodGuest(blocks: number): string {
  return `(module
  ${FD_WRITE}
  (memory (export "memory") 3)
  (data (i32.const 64) "failed 000\\n")
  (func (export "_start")
    (local $i i32) (local $failed i32)
    ;; one 64 KiB block at 65536: lines of 63 'a' and a newline
    (memory.fill (i32.const 65536) (i32.const 97) (i32.const 65536))
    (local.set $i (i32.const 0))
    (block $filled (loop $nl
      (br_if $filled (i32.ge_u (local.get $i) (i32.const 1024)))
      (i32.store8 (i32.add (i32.const 65599) (i32.mul (local.get $i) (i32.const 64))) (i32.const 10))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $nl)))
    (local.set $i (i32.const 0))
    (block $done (loop $write
      (br_if $done (i32.ge_u (local.get $i) (i32.const ${blocks})))
      (i32.store (i32.const 0) (i32.const 65536))
      (i32.store (i32.const 4) (i32.const 65536))
      (if (i32.ne (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16)) (i32.const 0))
        (then (local.set $failed (i32.add (local.get $failed) (i32.const 1)))))
      ;; a short write is a loss too
      (if (i32.ne (i32.load (i32.const 16)) (i32.const 65536))
        (then (local.set $failed (i32.add (local.get $failed) (i32.const 1)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $write)))
    (if (i32.gt_u (local.get $failed) (i32.const 999)) (then (local.set $failed (i32.const 999))))
    (i32.store8 (i32.const 71) (i32.add (i32.const 48) (i32.div_u (local.get $failed) (i32.const 100))))
    (i32.store8 (i32.const 72) (i32.add (i32.const 48) (i32.rem_u (i32.div_u (local.get $failed) (i32.const 10)) (i32.const 10))))
    (i32.store8 (i32.const 73) (i32.add (i32.const 48) (i32.rem_u (local.get $failed) (i32.const 10))))
    (i32.store (i32.const 0) (i32.const 64))
    (i32.store (i32.const 4) (i32.const 11))
    (drop (call $fd_write (i32.const 2) (i32.const 0) (i32.const 1) (i32.const 16)))))`;
}

/** Spins forever. */
const SPIN = '(module (memory (export "memory") 1) (func (export "_start") (loop $spin (br $spin))))';

/** Sleeps an hour in poll_oneoff (a relative monotonic clock subscription): no CPU, only wall clock. */
const SLEEP = `(module
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (i32.store8 (i32.const 8) (i32.const 0))
    (i32.store (i32.const 16) (i32.const 1))
    (i64.store (i32.const 24) (i64.const 3600000000000))
    (drop (call $poll (i32.const 0) (i32.const 100) (i32.const 1) (i32.const 200)))))`;

/** Writes one file into its data directory (to see who owns it), then spins. */
const WRITE_THEN_SPIN = `(module
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  ${FD_WRITE}
  (memory (export "memory") 1)
  (data (i32.const 100) "mine.txt")
  (data (i32.const 120) "ok\\n")
  (func (export "_start")
    (drop (call $path_open (i32.const 3) (i32.const 0) (i32.const 100) (i32.const 8) (i32.const 9)
      (i64.const 0x42) (i64.const 0) (i32.const 0) (i32.const 32)))
    (i32.store (i32.const 0) (i32.const 120))
    (i32.store (i32.const 4) (i32.const 3))
    (drop (call $fd_write (i32.load (i32.const 32)) (i32.const 0) (i32.const 1) (i32.const 16)))
    (loop $spin (br $spin))))`;

function config(runMode: RunMode = { type: 'once' }): WorkloadConfig {
  return { values: {}, runMode, host: { nodeId: 'node-1', dataDir: join(tempDir(), 'data') } };
}

async function waitFor(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function runGuest(
  wat: string,
  options: WasiRuntimeOptions = {},
  runMode: RunMode = { type: 'once' },
  ramMb = 16,
): Promise<{ evidence: RunEvidence; state: string; rt: WasiRuntime; h: InstanceHandle }> {
  const rt = new WasiRuntime(options);
  const w = await wasiWorkload(await assembleWat('guest.wat', wat), {
    resources: { cpu_pct: 10, ram_mb: ramMb },
  });
  const h = await rt.load(w, config(runMode));
  running.push({ rt, h });
  await rt.start(h);
  await waitFor(async () => ['exited', 'failed'].includes((await rt.status(h)).state), 20_000);
  const state = (await rt.status(h)).state;
  return { evidence: await rt.stop(h, 100), state, rt, h };
}

describe('WASI guests cannot crash their runner, lose output, run without end, or run as root', () => {
  it('a guest that grows its memory page by page to the cap and then writes does not crash the runner', async () => {
    // 64 MiB cap = 1024 pages: 1024 grows, each followed by fd_write. Three runs: under node:wasi on
    // Node 20 nearly every one ended in SIGSEGV (or SIGTRAP) instead of exit 0.
    for (let i = 0; i < 3; i++) {
      const { evidence, state } = await runGuest(GROW_THEN_WRITE, {}, { type: 'once' }, 64);
      expect(evidence.signal, evidence.notes.join('; ')).toBeNull();
      expect(evidence.exitCode).toBe(0);
      expect(state).toBe('exited');
      expect(evidence.stdout.endsWith(`${'x'.repeat(100)}\nafter grow\n`)).toBe(true);
      expect(evidence.stdout.length + evidence.stdoutTruncatedBytes).toBe(1024 + 12);
    }
  });

  it('loses no output: a 100 MB flood arrives whole (every fd_write succeeds, every byte is counted)', async () => {
    const blocks = 1600; // 1600 x 64 KiB = 104 857 600 bytes
    const { evidence, rt, h } = await runGuest(floodGuest(blocks), { outputBytes: 64 * 1024 });
    expect(evidence.exitCode).toBe(0);
    expect(evidence.stderr).toBe('failed 000\n');
    expect(evidence.stdoutTruncatedBytes + Buffer.byteLength(evidence.stdout)).toBe(blocks * 65536);
    expect(evidence.stdout).toBe(`${'a'.repeat(63)}\n`.repeat(1024));
    const lines = await rt.logs(h, 1000);
    expect(lines).toHaveLength(1000);
    expect(lines).toContain('stderr: failed 000');
    expect(lines.filter((l) => l === 'a'.repeat(63))).toHaveLength(999);
  });

  it('stops an infinite loop at its CPU limit (SIGXCPU), with the reason in the evidence', async () => {
    const t0 = Date.now();
    const { evidence, state } = await runGuest(SPIN, { cpuSeconds: 1 });
    expect(Date.now() - t0).toBeLessThan(8000);
    expect(state).toBe('failed');
    expect(evidence.signal).toBe('SIGXCPU');
    expect(evidence.notes).toContain(
      'cpu time limit exceeded: the run used 1 s of CPU and was ended (SIGXCPU)',
    );
    // A listener has its own budget (none by default); set, it stops a spinning listener too.
    const listener = await runGuest(SPIN, { listenerCpuSeconds: 1 }, { type: 'listener' });
    expect(listener.state).toBe('failed');
    expect(listener.evidence.signal).toBe('SIGXCPU');
    expect(() => new WasiRuntime({ cpuSeconds: -1 })).toThrow(/cpuSeconds/);
  });

  it('stops a run at its wall-clock limit even when it uses no CPU', async () => {
    const t0 = Date.now();
    const { evidence, state } = await runGuest(SLEEP, { maxRunMs: 500 });
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(state).toBe('failed');
    expect(evidence.signal).toBe('SIGTERM');
    expect(evidence.notes).toContain('time limit exceeded: the run was stopped after 500 ms (wall clock)');
  });

  it('runs guests unprivileged: as nobody (or runAsUser) on a root host, as the host user otherwise', async () => {
    const rt = new WasiRuntime();
    const w = await wasiWorkload(await assembleWat('guest.wat', WRITE_THEN_SPIN));
    const cfg = config({ type: 'listener' });
    const h = await rt.load(w, cfg);
    running.push({ rt, h });
    await rt.start(h);
    const file = join(cfg.host.dataDir, 'mine.txt');
    await waitFor(async () => {
      try {
        return readFileSync(file, 'utf8') === 'ok\n';
      } catch {
        return false;
      }
    });
    const pid = (await rt.status(h)).pid ?? -1;
    const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
    const expected = runningAsRoot() ? resolveRunUser('nobody').uid : process.getuid?.();
    expect(uid).toBe(expected);
    expect(uid).not.toBe(0);
    expect(statSync(file).uid).toBe(expected);
    expect(statSync(cfg.host.dataDir).uid).toBe(expected);
    if (runningAsRoot()) {
      expect(() => new WasiRuntime({ runAsUser: 'root' })).toThrow(/root/);
      // The data dir is handed over as a descriptor: a run user that cannot search its ancestors
      // (a 0700 root-owned directory above it) still runs in it, and sees nothing else.
      const hidden = tempDir();
      chmodSync(hidden, 0o700);
      const cfg2 = {
        ...cfg,
        values: { greeting: 'hidden' },
        host: { ...cfg.host, dataDir: join(hidden, 'data') },
      };
      const h2 = await rt.load(w, cfg2);
      running.push({ rt, h: h2 });
      await rt.start(h2);
      await waitFor(async () => {
        try {
          return readFileSync(join(cfg2.host.dataDir, 'mine.txt'), 'utf8') === 'ok\n';
        } catch {
          return false;
        }
      });
      expect(statSync(join(cfg2.host.dataDir, 'mine.txt')).uid).toBe(expected);
    } else {
      expect(() => new WasiRuntime({ runAsUser: 'nobody' })).toThrow(/root host/);
    }
  });
});
