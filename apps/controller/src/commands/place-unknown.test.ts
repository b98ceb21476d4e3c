import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorOutputSchema } from '../json-outputs.js';
import { runCaptured, tempDir } from '../test-io.js';

// Issue 15 item 11: a connection reset after the place was sent is an unknown outcome, reported as
// such with the key that finds out, never as "controller not running"; every place carries a key.

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

/** A controller stand-in that reads each place and resets the connection without answering. */
async function resetting(bodies: unknown[]): Promise<string> {
  const server = createServer((req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      req.socket.destroy(); // mid-place: the request arrived, no answer goes back
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address() as { port: number };
  return `http://127.0.0.1:${address.port}`;
}

function home(url: string): { cwd: string; home: string } {
  const cwd = tempDir();
  const h = join(cwd, 'home');
  mkdirSync(h);
  writeFileSync(join(h, 'api.json'), JSON.stringify({ url, pid: process.pid, node_id: 'ab'.repeat(16) }));
  writeFileSync(join(h, 'api.token'), 'token\n');
  mkdirSync(join(cwd, 'pkg'));
  return { cwd, home: h };
}

describe('heddle place: unknown outcomes and idempotency keys', () => {
  it('a reset connection after the place was sent is outcome_unknown, naming the key to retry with', async () => {
    const bodies: { idempotency_key?: string }[] = [];
    const { cwd, home: h } = home(await resetting(bodies));
    const r = await runCaptured(['place', 'pkg', '--home', h, '--json'], cwd);
    expect(r.code).toBe(1);
    const e = ErrorOutputSchema.parse(JSON.parse(r.err)).error;
    expect(e.code).toBe('outcome_unknown');
    const key = bodies[0]?.idempotency_key as string;
    expect(key).toMatch(/^cli-[0-9a-f]{24}$/);
    expect(e.message).toContain(`--idempotency-key ${key}`);
    // Another invocation makes another key; --idempotency-key sets it.
    await runCaptured(['place', 'pkg', '--home', h, '--json'], cwd);
    expect(bodies[1]?.idempotency_key).not.toBe(key);
    await runCaptured(['place', 'pkg', '--home', h, '--idempotency-key', 'deploy-7', '--json'], cwd);
    expect(bodies[2]?.idempotency_key).toBe('deploy-7');
  });

  it('refuses a malformed --idempotency-key (exit 3) before asking the controller', async () => {
    const bodies: unknown[] = [];
    const { cwd, home: h } = home(await resetting(bodies));
    const r = await runCaptured(['place', 'pkg', '--home', h, '--idempotency-key', 'a b', '--json'], cwd);
    expect(r.code).toBe(3);
    expect(ErrorOutputSchema.parse(JSON.parse(r.err)).error.field).toBe('idempotency_key');
    expect(bodies).toEqual([]);
  });
});
