import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPair, type KeyPair, nodeIdFromPublicKey, toHex } from '@heddle/envelope';
import { CallFailure, createRequest, signRequest } from '@heddle/protocol';
import { WireClient } from '@heddle/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Daemon, spawnHost, waitFor } from './daemon-fixtures.js';
import { runCaptured, tempDir } from './test-io.js';

const cwd = tempDir();
const controller: KeyPair = generateKeyPair();
const controllerId = nodeIdFromPublicKey(controller.publicKey);
let hostId = '';
let daemon: Daemon;
let badConfig: Daemon;

beforeAll(async () => {
  const init = await runCaptured(
    ['init', '--listen', '127.0.0.1:0', '--controller', toHex(controller.publicKey), '--json'],
    cwd,
  );
  expect(init.code, init.err).toBe(0);
  hostId = (JSON.parse(init.out) as { node_id: string }).node_id;
  // A second config with a bad port, started next to the good one (both pay tsx's start-up at once).
  const config = JSON.parse(readFileSync(join(cwd, 'heddle-host', 'heddle-host.json'), 'utf8'));
  writeFileSync(
    join(cwd, 'heddle-host', 'bad.json'),
    JSON.stringify({ ...config, listen: { host: 'x', port: -1 } }),
  );
  daemon = spawnHost(['run'], cwd);
  badConfig = spawnHost(['run', '--config', 'heddle-host/bad.json'], cwd);
});

afterAll(async () => {
  for (const d of [daemon, badConfig]) {
    if (d && d.proc.exitCode === null) {
      d.proc.kill('SIGKILL');
      await d.exited;
    }
  }
  rmSync(cwd, { recursive: true, force: true });
});

describe('heddle-host run (a real daemon in a child process)', () => {
  it('refuses a bad config before listening: exit 3, the field named', async () => {
    expect(await badConfig.exited).toBe(3);
    expect(badConfig.stderr).toContain('listen.port');
    expect(badConfig.lines.at(-1)).toMatchObject({
      level: 'error',
      msg: 'refusing to start',
      error_field: 'listen.port',
    });
  });

  it('answers a signed describe from an authorised controller with facts of its own node id', async () => {
    const listening = await waitFor(daemon, 'listening');
    expect(listening.node_id).toBe(hostId);
    const secret = (
      JSON.parse(readFileSync(join(cwd, 'heddle-host', 'node.key'), 'utf8')) as { secret_key: string }
    ).secret_key;
    expect(JSON.stringify(daemon.lines)).not.toContain(secret);
    const url = listening.url as string;
    const request = createRequest({
      method: 'workload.describe',
      requester: controllerId,
      target: hostId,
      now: Date.now(),
    });
    const answer = await new WireClient().call(url, signRequest(request, controller));
    expect(answer.response.responder).toBe(hostId);
    const result = answer.result as {
      facts: { payload: string; public_key: string };
      advertisement: { node_id: string; routes: string[]; address: string };
    };
    const facts = JSON.parse(result.facts.payload) as { node_id: string; capabilities: { id: string }[] };
    expect(facts.node_id).toBe(hostId);
    expect(result.facts.public_key).toBe(listening.public_key);
    expect(result.advertisement).toMatchObject({ node_id: hostId, routes: ['native', 'wasi'], address: url });

    const id = await runCaptured(['id', '--json'], cwd);
    expect(JSON.parse(id.out).node_id).toBe(facts.node_id);
  });

  it('refuses a controller that is not authorised, and keeps running', async () => {
    const url = (await waitFor(daemon, 'listening')).url as string;
    const stranger = generateKeyPair();
    const request = createRequest({
      method: 'workload.describe',
      requester: nodeIdFromPublicKey(stranger.publicKey),
      target: '*',
      now: Date.now(),
    });
    const failure = await new WireClient().call(url, signRequest(request, stranger)).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(CallFailure);
    expect((failure as CallFailure).refusal?.code).toBe('unauthorized');
    expect(daemon.proc.exitCode).toBeNull();
  });

  it('re-reads the revocation list on SIGHUP', async () => {
    await waitFor(daemon, 'listening');
    daemon.proc.kill('SIGHUP');
    await waitFor(daemon, 'SIGHUP: re-reading the revocation list', 5_000);
    expect(daemon.proc.exitCode).toBeNull();
  });

  it('stops gracefully on SIGTERM: exit 0 within a few seconds, a final log line', async () => {
    await waitFor(daemon, 'listening');
    const t0 = Date.now();
    daemon.proc.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(daemon.lines.map((l) => l.msg)).toContain('shutting down');
    expect(daemon.lines.at(-1)).toMatchObject({ level: 'info', msg: 'stopped', exit_code: 0 });
  });
});
