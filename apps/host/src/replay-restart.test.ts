// A signed mutating request captured and sent again after the host daemon restarted (SIGKILL, and a
// clean SIGTERM) is refused as a replay: the nonce journal remembers what was accepted. A host whose
// journal was lost refuses every change issued before its start plus the clock skew.
import { appendFileSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { keyPairFromSecret, toHex } from '@heddle/envelope';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Daemon, kill, startFor, writeTestHome } from './daemon-fixtures.js';
import { TestController } from './test-controller.js';
import { tempDir } from './test-io.js';

const controller = keyPairFromSecret(new Uint8Array(32).fill(0x91));
const publisher = keyPairFromSecret(new Uint8Array(32).fill(0x92));
const cwd = tempDir();
const journal = join(cwd, 'heddle-host', 'data', 'nonces.journal');
const ctl = new TestController(controller);
const daemons: Daemon[] = [];

async function start(): Promise<Daemon> {
  const d = await startFor(ctl, cwd);
  daemons.push(d);
  return d;
}

async function stop(d: Daemon, signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
  if (signal === 'SIGKILL') return kill(d);
  d.proc.kill('SIGTERM');
  await d.exited;
}

beforeAll(async () => {
  await writeTestHome(cwd, {
    controller: toHex(controller.publicKey),
    publisher: toHex(publisher.publicKey),
  });
}, 60_000);
afterAll(async () => {
  for (const d of daemons) await kill(d);
  rmSync(cwd, { recursive: true, force: true });
});

describe('replay across a host restart', () => {
  it('a captured workload.stop is acted on once; after a SIGKILL or SIGTERM restart it is refused as a replay', async () => {
    const d1 = await start();
    // A first start has no journal yet, and that is no loss: nothing is fenced, and nothing is said.
    expect(d1.lines.find((l) => String(l.msg).startsWith('the nonce journal was lost'))).toBeUndefined();
    // Acted on: an authenticated refusal (no such instance) means it passed every check.
    const captured = ctl.request('workload.stop', { instance_id: 'hello-cog-0123456789abcdef' });
    expect((await ctl.refused(captured)).code).toBe('unknown_instance');
    const line = readFileSync(journal, 'utf8');
    expect(line).toContain(JSON.parse(captured.payload).nonce);
    // A read is not journaled (it changes nothing; replaying it acts on nothing).
    await ctl.ok(ctl.request('workload.status'));
    expect(readFileSync(journal, 'utf8')).toBe(line);

    await stop(d1, 'SIGKILL');
    const d2 = await start();
    const again = await ctl.refused(captured);
    expect(again.code).toBe('replay');
    // A fresh request is accepted as usual.
    const fresh = ctl.request('workload.stop', { instance_id: 'hello-cog-0123456789abcdef' });
    expect((await ctl.refused(fresh)).code).toBe('unknown_instance');

    await stop(d2, 'SIGTERM');
    await start();
    expect((await ctl.refused(captured)).code).toBe('replay');
    expect((await ctl.refused(fresh)).code).toBe('replay');
  }, 90_000);

  it('a host that lost its journal refuses changes issued before its start plus the skew, and says so', async () => {
    await stop(daemons[daemons.length - 1] as Daemon, 'SIGKILL');
    const captured = ctl.request('workload.stop', { instance_id: 'hello-cog-0123456789abcdef' });
    rmSync(journal);
    // A torn tail too (a crash mid-append): the open quarantines it and says so in the log.
    appendFileSync(join(cwd, 'heddle-host', 'data', 'chain.jsonl'), '{"hash":"torn');
    const d = await start();
    expect(d.lines.find((l) => String(l.msg).startsWith('the chain had a torn tail'))).toMatchObject({
      level: 'warn',
      bytes: 13,
      saved_to: expect.stringContaining('chain.jsonl.torn-'),
    });
    const warned = d.lines.find((l) => String(l.msg).startsWith('the nonce journal was lost'));
    expect(warned).toMatchObject({ level: 'warn', state: 'missing' });
    const r = await ctl.refused(captured);
    expect(r.code).toBe('expired');
    expect(r.reason).toContain('lost its nonce journal');
    // Reads still work at once.
    await ctl.ok(ctl.request('workload.status'));
    expect(existsSync(journal)).toBe(true);
  }, 90_000);
});
