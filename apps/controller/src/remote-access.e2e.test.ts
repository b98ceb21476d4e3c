// Remote, multi-operator access against real daemons: the controller listens on 127.0.0.1 (plain,
// the home's api.token) and on a second address, 127.0.0.2, over TLS with a self-signed certificate
// the CLI pins. Operators with their own Ed25519 keys (and a named token) use it through contexts in
// roles; bad credentials are refused with 401/403 and nothing is done.
import { randomBytes } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { type CliRun, runCaptured as capture } from '@heddle/cli-kit/testing';
import { generateKeyPair, loadKeyFile, saveKeyFile, toHex } from '@heddle/envelope';
import {
  ApiClient,
  ApiInfoSchema,
  certFingerprint,
  fingerprintOfDer,
  formatSignedAuth,
  selfSignedCert,
  signRequest,
} from '@heddle/operator-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli.js';
import {
  type Daemon,
  kill,
  spawnController,
  spawnHostDaemon,
  waitFor,
  wasiPackage,
  writeHostHome,
} from './daemon-fixtures.js';
import { tempDir } from './test-io.js';

const cwd = tempDir();
const home = join(cwd, 'ctl');
const configDir = join(cwd, 'config');
let controller: Daemon;
let host: Daemon;
let remoteUrl = '';
let fingerprint = '';
let pkgDir = '';
const viewerKeys = generateKeyPair();
const operatorKeys = generateKeyPair();

/** `heddle <args>` in process, with only the environment given (no $HEDDLE_HOME of the test runner). */
function heddle(args: readonly string[], env: Record<string, string> = {}): Promise<CliRun> {
  return capture(runCli, args, { cwd, env: { HEDDLE_CONFIG_DIR: configDir, HOME: cwd, ...env } });
}

async function json<T>(args: readonly string[], env: Record<string, string> = {}): Promise<T> {
  const r = await heddle([...args, '--json'], env);
  expect(r.code, `${args.join(' ')}: ${r.err}`).toBe(0);
  // cast: --json prints the command's one JSON object (the test names the fields it reads).
  return JSON.parse(r.out) as T;
}

async function jsonError(args: readonly string[], exit: number, env: Record<string, string> = {}) {
  const r = await heddle([...args, '--json'], env);
  expect(r.code, `${args.join(' ')}: ${r.out} ${r.err}`).toBe(exit);
  // cast: a failed --json command prints {"error":{...}} on stderr.
  return (JSON.parse(r.err) as { error: { code: string; message: string; field?: string } }).error;
}

/** One signed request to the remote listener, sent as given (pinned TLS); its status and error code. */
async function rawSigned(
  method: string,
  target: string,
  body: string,
  o: { signedBody?: string; ts?: number; nonce?: string; header?: string } = {},
): Promise<{ status: number; code: string | undefined; header: string }> {
  const auth = signRequest(operatorKeys, {
    method,
    target,
    ts: o.ts ?? Date.now(),
    nonce: o.nonce ?? randomBytes(16).toString('hex'),
    body: Buffer.from(o.signedBody ?? body, 'utf8'),
  });
  const header = o.header ?? formatSignedAuth(auth);
  const res = await fetchPinned(method, target, body, header);
  return { ...res, header };
}

/** A raw HTTPS request to the remote listener (its certificate checked against the pin after the fact). */
function fetchPinned(
  method: string,
  target: string,
  body: string,
  authorization: string,
): Promise<{ status: number; code: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(`${remoteUrl}${target}`, {
      method,
      rejectUnauthorized: false,
      headers: { authorization, ...(body === '' ? {} : { 'content-type': 'application/json' }) },
    });
    req.once('error', reject);
    req.once('response', (res) => {
      // cast: the response of an https request arrives on a TLS socket.
      const presented = fingerprintOfDer((res.socket as TLSSocket).getPeerCertificate().raw);
      if (presented !== fingerprint) reject(new Error(`not the pinned certificate: ${presented}`));
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        // cast: the API answers JSON; an error as {"error":{code}}.
        const value = JSON.parse(text) as { error?: { code?: string } };
        resolve({ status: res.statusCode ?? 0, code: value.error?.code });
      });
    });
    req.end(body === '' ? undefined : body);
  });
}

const instanceCount = async (): Promise<number> => (await ApiClient.fromHome(home).instances()).length;

beforeAll(async () => {
  const init = await heddle(['init', '--home', home, '--api-port', '0', '--remote', '127.0.0.2:0', '--json']);
  expect(init.code, init.err).toBe(0);
  // cast: `init --json` prints one object with the controller's key and the remote listener's fingerprint.
  const made = JSON.parse(init.out) as { public_key: string; remote?: { fingerprint: string } };
  fingerprint = made.remote?.fingerprint ?? '';
  expect(fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
  const hostHome = writeHostHome(join(cwd, 'host'), {
    hostKeys: generateKeyPair(),
    controllerKey: made.public_key,
    operatorKey: made.public_key,
  });
  host = spawnHostDaemon(['run', '--config', hostHome.config], cwd);
  controller = spawnController(['controller', 'run', '--home', home], cwd);
  const [h, c] = await Promise.all([waitFor(host, 'listening'), waitFor(controller, 'listening')]);
  remoteUrl = String(c.remote_url);
  expect(remoteUrl).toMatch(/^https:\/\/127\.0\.0\.2:\d+$/);
  expect(c.remote_fingerprint).toBe(fingerprint);
  const admin = ApiClient.fromHome(home);
  await admin.addNode(String(h.url), { tier: 'paired' });
  pkgDir = (await wasiPackage(loadKeyFile(join(home, 'controller.key')))).dir;
  saveKeyFile(join(cwd, 'viewer.key'), viewerKeys);
  saveKeyFile(join(cwd, 'operator.key'), operatorKeys);
  // The admin (the home's api.token, on the controller's machine) adds the operators.
  await json([
    'operator',
    'add',
    'vera',
    '--role',
    'viewer',
    '--key',
    toHex(viewerKeys.publicKey),
    '--home',
    home,
  ]);
  await json([
    'operator',
    'add',
    'otto',
    '--role',
    'operator',
    '--key',
    join(cwd, 'operator.key'),
    '--home',
    home,
  ]);
  const tok = await json<{ token: string }>([
    'operator',
    'add',
    'ci',
    '--role',
    'viewer',
    '--token',
    '--home',
    home,
  ]);
  writeFileSync(join(cwd, 'ci.token'), `${tok.token}\n`, { mode: 0o600 });
  for (const [name, cred] of [
    ['viewer', ['--key', 'viewer.key']],
    ['op', ['--key', 'operator.key']],
    ['ci', ['--token-file', 'ci.token']],
  ] as const) {
    await json(['context', 'add', name, '--url', remoteUrl, '--fingerprint', fingerprint, ...cred]);
  }
}, 60_000);

afterAll(async () => {
  await Promise.all([kill(controller), kill(host)]);
});

describe('remote operators over TLS on a second address', () => {
  it('keeps the operators file 0600 with keys and only a token hash; api.json names the remote listener', () => {
    const ops = readFileSync(join(home, 'operators.json'), 'utf8');
    expect(statSync(join(home, 'operators.json')).mode & 0o777).toBe(0o600);
    expect(ops).toContain(toHex(viewerKeys.publicKey));
    expect(ops).not.toContain(readFileSync(join(cwd, 'ci.token'), 'utf8').trim());
    const info = ApiInfoSchema.parse(JSON.parse(readFileSync(join(home, 'api.json'), 'utf8')));
    expect(info.remote).toEqual({ url: remoteUrl, fingerprint });
    expect(statSync(join(configDir, 'contexts.json')).mode & 0o777).toBe(0o600);
  });

  it('a viewer key lists but cannot place (403 forbidden), and nothing is placed', async () => {
    const env = { HEDDLE_CONTEXT: 'viewer' };
    expect(await json<{ name: string; role: string }>(['whoami'], env)).toMatchObject({
      name: 'vera',
      role: 'viewer',
      via: 'key',
    });
    expect((await json<{ nodes: unknown[] }>(['node', 'ls'], env)).nodes).toHaveLength(1);
    const before = await instanceCount();
    const e = await jsonError(['place', pkgDir], 3, env);
    expect(e.code).toBe('forbidden');
    expect(e.message).toContain('needs the operator role; operator vera is viewer');
    expect(await instanceCount()).toBe(before);
    // A viewer token lists too, and cannot settle.
    expect((await json<{ name: string }>(['whoami'], { HEDDLE_CONTEXT: 'ci' })).name).toBe('ci');
    expect((await jsonError(['operator', 'ls'], 3, { HEDDLE_CONTEXT: 'op' })).code).toBe('forbidden');
  });

  it('an operator key places through the current context, and the chain names the operator and key', async () => {
    await json(['context', 'use', 'op']);
    const placed = await json<{ status: string; decision_id: string; instance: { instance_id: string } }>([
      'place',
      pkgDir,
    ]);
    expect(placed.status).toBe('placed');
    const tail = await heddle(['chain', 'tail', join(home, 'chain.jsonl'), '--n', '200', '--json']);
    expect(tail.code, tail.err).toBe(0);
    const decision = tail.out
      .split('\n')
      .flatMap((l) =>
        l.trim() === '' ? [] : [JSON.parse(l) as { hash?: string; payload?: Record<string, unknown> }],
      )
      .flatMap((x) =>
        'events' in x
          ? (x as unknown as { events: { hash: string; payload: Record<string, unknown> }[] }).events
          : [x],
      )
      .find((ev) => ev.hash === placed.decision_id);
    expect(decision?.payload).toMatchObject({
      phase: 'decision',
      actor: { name: 'otto', role: 'operator', via: 'key', key: toHex(operatorKeys.publicKey) },
    });
    await json(['context', 'use', '-']);
    expect((await json<{ name: string }>(['whoami'], { HEDDLE_HOME: home })).name).toBe('api.token');
  });

  it('jobs from a second machine: a viewer cannot run one (403, nothing stored); an operator key runs it and the chain names her', async () => {
    const file = join(cwd, 'remote-job.json');
    writeFileSync(
      file,
      JSON.stringify({ name: 'remote', package: pkgDir, mode: { type: 'interval', secs: 45 }, count: 1 }),
    );
    const refused = await jsonError(['job', 'run', file], 3, { HEDDLE_CONTEXT: 'viewer' });
    expect(refused.code).toBe('forbidden');
    expect((await jsonError(['job', 'plan', file], 3, { HEDDLE_CONTEXT: 'viewer' })).code).toBe('forbidden');
    expect((await jsonError(['job', 'status', 'remote'], 3, { HEDDLE_CONTEXT: 'viewer' })).code).toBe(
      'unknown_job',
    );
    const run = await json<{ changed: boolean; job: { version: number } }>(['job', 'run', file], {
      HEDDLE_CONTEXT: 'op',
    });
    expect(run).toMatchObject({ changed: true, job: { version: 1 } });
    const history = await json<{ versions: { actor: string }[] }>(['job', 'history', 'remote'], {
      HEDDLE_CONTEXT: 'viewer',
    });
    expect(history.versions.map((v) => v.actor)).toEqual(['otto']);
    const tail = await heddle(['chain', 'tail', join(home, 'chain.jsonl'), '--n', '50', '--json']);
    expect(tail.code, tail.err).toBe(0);
    // cast: `chain tail --json` prints {size, head, events}
    const events = (JSON.parse(tail.out) as { events: { kind: string; payload: Record<string, unknown> }[] })
      .events;
    expect(events.find((e) => e.kind === 'workload.job')?.payload).toMatchObject({
      phase: 'run',
      job: 'remote',
      version: 1,
      actor: { name: 'otto', role: 'operator', via: 'key' },
    });
    await json(['job', 'stop', 'remote'], { HEDDLE_CONTEXT: 'op' });
  });

  it('$HEDDLE_ADDR with a key file and a fingerprint reaches the remote listener without a context', async () => {
    const me = await json<{ name: string }>(['whoami'], {
      HEDDLE_ADDR: remoteUrl,
      HEDDLE_KEY_FILE: join(cwd, 'operator.key'),
      HEDDLE_FINGERPRINT: fingerprint,
    });
    expect(me.name).toBe('otto');
  });

  it('the CLI refuses a server whose certificate is not the pinned one, and sends it nothing', async () => {
    const other = certFingerprint(selfSignedCert({ commonName: 'impostor' }).cert);
    await json([
      'context',
      'add',
      'wrong',
      '--url',
      remoteUrl,
      '--fingerprint',
      other,
      '--key',
      'operator.key',
    ]);
    // The daemon logs each request it handles: no place reaches it (log lines come in a little late).
    const places = (): number =>
      controller.lines.filter((l) => l.msg === 'request' && l.path === '/v1/place').length;
    await new Promise((r) => setTimeout(r, 200));
    const before = places();
    const e = await jsonError(['place', pkgDir], 1, { HEDDLE_CONTEXT: 'wrong' });
    expect(e.code).toBe('fingerprint_mismatch');
    expect(e.message).toContain(`its TLS certificate is ${fingerprint}, not the pinned ${other}`);
    await new Promise((r) => setTimeout(r, 200));
    expect(places()).toBe(before);
    expect(before).toBeGreaterThan(0);
  });

  it('a replayed signed request is refused (401 replayed_request) and acts once', async () => {
    const first = await rawSigned('POST', '/v1/settle', '{}');
    expect(first.status).toBe(200);
    const again = await fetchPinned('POST', '/v1/settle', '{}', first.header);
    expect([again.status, again.code]).toEqual([401, 'replayed_request']);
  });

  it('a tampered body fails the signature (401 bad_signature) and nothing is placed', async () => {
    const before = await instanceCount();
    const signed = JSON.stringify({ package_dir: pkgDir, dry_run: true });
    const sent = JSON.stringify({ package_dir: pkgDir });
    const r = await rawSigned('POST', '/v1/place', sent, { signedBody: signed });
    expect([r.status, r.code]).toEqual([401, 'bad_signature']);
    expect(await instanceCount()).toBe(before);
  });

  it('stale timestamps, unknown keys and tokens, and a garbled header are 401 with their codes', async () => {
    expect((await rawSigned('GET', '/v1/nodes', '', { ts: Date.now() - 120_000 })).code).toBe(
      'stale_request',
    );
    const stranger = signRequest(generateKeyPair(), {
      method: 'GET',
      target: '/v1/nodes',
      ts: Date.now(),
      nonce: 'ab'.repeat(16),
      body: new Uint8Array(),
    });
    expect(await fetchPinned('GET', '/v1/nodes', '', formatSignedAuth(stranger))).toMatchObject({
      status: 401,
      code: 'unknown_key',
    });
    expect(await fetchPinned('GET', '/v1/nodes', '', `Bearer hdt_${'00'.repeat(32)}`)).toMatchObject({
      status: 401,
      code: 'unknown_token',
    });
    expect(await fetchPinned('GET', '/v1/nodes', '', 'Heddle-Ed25519 key=zz')).toMatchObject({
      status: 401,
      code: 'bad_auth_header',
    });
    expect(await fetchPinned('GET', '/v1/nodes', '', '')).toMatchObject({
      status: 401,
      code: 'unauthorized',
    });
  });

  it('an operator removed is refused at once', async () => {
    await json(['operator', 'rm', 'vera', '--home', home]);
    expect((await jsonError(['node', 'ls'], 3, { HEDDLE_CONTEXT: 'viewer' })).code).toBe('unknown_key');
  });
});
