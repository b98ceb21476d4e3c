import { spawn } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireChainLock, currentHolder, processStartTime } from './file-lock.js';
import { FileChainStore, openChainFile, verifyChainFile } from './index.js';

/** What this process writes into a lock it takes. */
function ownLock(): string {
  const h = currentHolder();
  return `${h.pid}\n${h.start === undefined ? '' : `start ${h.start}\n`}${h.boot === undefined ? '' : `boot ${h.boot}\n`}`;
}

const dir = mkdtempSync(join(tmpdir(), 'heddle-chain-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let counter = 0;
const fresh = (): string => join(dir, `chain-${counter++}.jsonl`);

async function write(path: string, n: number): Promise<void> {
  const chain = await openChainFile(path);
  for (let i = 0; i < n; i++) await chain.append('workload.host', 'workload.place', { i });
  await chain.close();
}

/** A real other process that stays alive until killed. */
function sleeper(): Promise<{ pid: number; kill: () => Promise<void> }> {
  const proc = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  return new Promise((resolve, reject) => {
    proc.on('error', reject);
    proc.on('spawn', () =>
      resolve({
        pid: proc.pid as number,
        kill: () =>
          new Promise<void>((done) => {
            proc.on('exit', () => done());
            proc.kill('SIGKILL');
          }),
      }),
    );
  });
}

describe('torn tail evidence', () => {
  it('saves the bytes after the last newline to <file>.torn-<offset> (0600) before truncating', async () => {
    const path = fresh();
    await write(path, 3);
    const good = readFileSync(path).length;
    appendFileSync(path, '{"hash":"0123');
    const chain = await openChainFile(path);
    const saved = `${path}.torn-${good}`;
    expect(chain.openReport.tornTail).toMatchObject({ offset: good, repaired: true, savedTo: saved });
    expect(readFileSync(saved, 'utf8')).toBe('{"hash":"0123');
    expect(statSync(saved).mode & 0o777).toBe(0o600);
    expect(readFileSync(path).length).toBe(good);
    await chain.close();
  });

  it('saves a complete but unparseable last record instead of deleting it silently', async () => {
    const path = fresh();
    await write(path, 2);
    const good = readFileSync(path).length;
    const garbage = Buffer.concat([Buffer.from('{"not json'), Buffer.alloc(40), Buffer.from('\n')]);
    appendFileSync(path, garbage);
    const chain = await openChainFile(path);
    expect(chain.size).toBe(2);
    const t = chain.openReport.tornTail;
    expect(t?.reason).toMatch(/^last record unparseable/);
    expect(t?.savedTo).toBe(`${path}.torn-${good}`);
    expect(readFileSync(t?.savedTo as string).equals(garbage)).toBe(true);
    await chain.close();
    expect((await verifyChainFile(path)).ok).toBe(true);
  });

  it('never overwrites earlier evidence at the same offset; read-only opens save nothing', async () => {
    const path = fresh();
    await write(path, 1);
    const good = readFileSync(path).length;
    appendFileSync(path, 'first');
    const ro = await openChainFile(path, { readOnly: true });
    expect(ro.openReport.tornTail?.savedTo).toBeUndefined();
    expect(existsSync(`${path}.torn-${good}`)).toBe(false);
    await (await openChainFile(path)).close();
    appendFileSync(path, 'second');
    const again = await openChainFile(path);
    expect(again.openReport.tornTail?.savedTo).toBe(`${path}.torn-${good}.1`);
    await again.close();
    expect(readFileSync(`${path}.torn-${good}`, 'utf8')).toBe('first');
    expect(readFileSync(`${path}.torn-${good}.1`, 'utf8')).toBe('second');
  });

  it('saves an incomplete header too', async () => {
    const path = fresh();
    await write(path, 0);
    truncateSync(path, 10);
    const chain = await openChainFile(path);
    expect(chain.openReport.tornTail).toMatchObject({ offset: 0, length: 10, savedTo: `${path}.torn-0` });
    await chain.close();
  });
});

describe('single writer', () => {
  it('a second writer in the same process is refused with chain_locked; read-only opens are not', async () => {
    const path = fresh();
    await write(path, 2);
    const a = await openChainFile(path);
    expect(readFileSync(`${path}.lock`, 'utf8')).toBe(ownLock());
    await expect(openChainFile(path)).rejects.toMatchObject({ code: 'chain_locked' });
    await expect(new FileChainStore(path).load()).rejects.toMatchObject({ code: 'chain_locked' });
    const ro = await openChainFile(path, { readOnly: true });
    expect(ro.size).toBe(2);
    await a.append('workload', 'k', {});
    await a.close();
    expect(existsSync(`${path}.lock`)).toBe(false);
    const b = await openChainFile(path);
    expect(b.size).toBe(3);
    await b.close();
  });

  it('a lock held by another live process refuses; once that process is dead the lock is taken over', async () => {
    const path = fresh();
    await write(path, 1);
    const other = await sleeper();
    writeFileSync(`${path}.lock`, `${other.pid}\nstart ${processStartTime(other.pid)}\n`);
    await expect(openChainFile(path)).rejects.toMatchObject({
      code: 'chain_locked',
      message: expect.stringContaining(`process ${other.pid}`),
    });
    await other.kill();
    const chain = await openChainFile(path);
    expect(readFileSync(`${path}.lock`, 'utf8')).toBe(ownLock());
    await chain.close();
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it('two processes taking over the same stale lock at once: only one gets it', async () => {
    const path = fresh();
    const lockPath = `${path}.lock`;
    const zero = '00000000-0000-0000-0000-000000000000';
    const staleBoot = currentHolder().boot === zero ? zero.replace(/0$/, '1') : zero; // another boot: stale
    writeFileSync(lockPath, `${process.pid}\nstart 1\nboot ${staleBoot}\n`);
    const other = await sleeper();
    try {
      const b = { pid: other.pid, start: processStartTime(other.pid), boot: currentHolder().boot };
      let bGot: string | undefined;
      // A judged the lock stale; before it takes it over, B (another process) judges it stale too and
      // takes it. Old code: A then removed B's fresh lock and created its own, so both held it.
      expect(() =>
        acquireChainLock(path, {
          onStale: () => {
            if (bGot === undefined) bGot = acquireChainLock(path, { self: b });
          },
        }),
      ).toThrow(new RegExp(`process ${other.pid}`));
      expect(bGot).toBe(lockPath);
      expect(readFileSync(lockPath, 'utf8')).toBe(
        `${b.pid}\n${b.start === undefined ? '' : `start ${b.start}\n`}${b.boot === undefined ? '' : `boot ${b.boot}\n`}`,
      );
      expect(existsSync(`${lockPath}.takeover`)).toBe(false);
    } finally {
      await other.kill();
    }
  });

  it('an empty lock file is honoured briefly (a writer between create and write), then stale', async () => {
    const path = fresh();
    await write(path, 1);
    writeFileSync(`${path}.lock`, '');
    await expect(openChainFile(path)).rejects.toMatchObject({ code: 'chain_locked' });
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${path}.lock`, old, old);
    await (await openChainFile(path)).close();
  });

  it('releases the lock when the open fails (corrupt file)', async () => {
    const path = fresh();
    await write(path, 3);
    const all = readFileSync(path, 'utf8').split('\n');
    all[1] = (all[1] as string).replace('"i":0', '"i":7');
    writeFileSync(path, all.join('\n'));
    await expect(openChainFile(path)).rejects.toMatchObject({ code: 'chain_corrupt' });
    expect(readdirSync(dir).filter((f) => f.startsWith(`${basename(path)}.lock`))).toEqual([]);
  });

  it('a lock naming a live pid that is not its writer (PID reuse, PID 1 after a container restart) is stale', async () => {
    const path = fresh();
    await write(path, 1);
    const self = currentHolder();
    expect(self.start).toMatch(/^\d+$/); // Linux: the start time is known
    // The crashed writer was this very pid (PID 1 in a container), started at another time.
    writeFileSync(`${path}.lock`, `${process.pid}\nstart ${Number(self.start) + 1}\nboot ${self.boot}\n`);
    await (await openChainFile(path)).close();
    // An older version's pid-only lock naming this process was not written by this process either.
    writeFileSync(`${path}.lock`, `${process.pid}\n`);
    await (await openChainFile(path)).close();
    // Another live process's pid with a start time that is not its own: its writer is gone.
    const other = await sleeper();
    try {
      writeFileSync(`${path}.lock`, `${other.pid}\nstart 1\n`);
      await (await openChainFile(path)).close();
      // A lock from another boot names no running process at all.
      writeFileSync(
        `${path}.lock`,
        `${other.pid}\nstart ${processStartTime(other.pid)}\nboot 00000000-0000-0000-0000-000000000000\n`,
      );
      await (await openChainFile(path)).close();
    } finally {
      await other.kill();
    }
  });

  it('a real writer killed with SIGKILL leaves a lock the next open takes over; while alive it excludes', async () => {
    const path = fresh();
    await write(path, 1);
    const index = join(fileURLToPath(new URL('.', import.meta.url)), 'index.ts');
    const script = `import { openChainFile } from ${JSON.stringify(index)};
const c = await openChainFile(${JSON.stringify(path)});
await c.append('workload', 'held', {});
process.stdout.write('held\\n');
setInterval(() => {}, 1000);`;
    const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      proc.stdout.on('data', (d: Buffer) => d.toString().includes('held') && resolve());
      proc.on('exit', (code) => reject(new Error(`holder exited ${code}`)));
    });
    expect(readFileSync(`${path}.lock`, 'utf8')).toMatch(new RegExp(`^${proc.pid}\\nstart \\d+\\n`));
    await expect(openChainFile(path)).rejects.toMatchObject({ code: 'chain_locked' });
    await new Promise<void>((resolve) => {
      proc.on('exit', () => resolve());
      proc.kill('SIGKILL');
    });
    const chain = await openChainFile(path);
    expect(chain.size).toBe(2);
    await chain.close();
  }, 20_000);
});
