// The validating client against a fake daemon on 127.0.0.1 that answers whatever a test tells it:
// an answer that breaks its route's answer schema is refused with `bad_answer` naming the field.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from './api-error.js';
import { ApiClient } from './client.js';
import { NDJSON } from './constants.js';

const NODE = 'ab'.repeat(16);
const HASH = 'cd'.repeat(32);
let answer: { status: number; type?: string; body: string } = { status: 200, body: '{}' };
let server: Server;
let client: ApiClient;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(answer.status, { 'content-type': answer.type ?? 'application/json' });
      res.end(answer.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  // cast: a server listening on a TCP port has an AddressInfo address.
  const { port } = server.address() as AddressInfo;
  client = new ApiClient({ url: `http://127.0.0.1:${port}`, token: 'x' });
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

async function refusal(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  if (!(err instanceof ApiError)) throw new Error('not an ApiError');
  return err;
}

const answerWith = (status: number, value: unknown): void => {
  answer = { status, body: JSON.stringify(value) };
};

describe('ApiClient validates every answer', () => {
  it('takes an answer that fits the route schema', async () => {
    answerWith(200, { controller: NODE, nodes: 1, instances: 0, unsettled: 0 });
    expect(await client.health()).toEqual({ controller: NODE, nodes: 1, instances: 0, unsettled: 0 });
  });

  it('refuses an answer that breaks the schema with bad_answer naming the field', async () => {
    answerWith(200, { controller: NODE, nodes: -1, instances: 0, unsettled: 0 });
    const e = await refusal(client.health());
    expect([e.code, e.field, e.status]).toEqual(['bad_answer', 'nodes', 200]);
    expect(e.message).toContain('GET /v1/health');
  });

  it('refuses a field the contract does not name, and a missing one', async () => {
    answerWith(200, { controller: NODE, nodes: 0, instances: 0, unsettled: 0, extra: true });
    expect(await refusal(client.health())).toMatchObject({ code: 'bad_answer', field: 'extra' });
    answerWith(200, { nodes: [{ node_id: NODE }] });
    const e = await refusal(client.nodes());
    expect(e.code).toBe('bad_answer');
    expect(e.field).toMatch(/^nodes\[0\]\./);
  });

  it('refuses an answer that is not JSON', async () => {
    answer = { status: 200, body: '<html>' };
    expect((await refusal(client.settle())).code).toBe('bad_answer');
  });

  it('raises the error the daemon answered, with its code, field and reasons', async () => {
    answerWith(422, {
      error: { code: 'unplaceable', message: 'no node fits', reasons: { [NODE]: 'tier' } },
    });
    const e = await refusal(client.place({ manifest_hash: HASH }));
    expect([e.code, e.status, e.reasons]).toEqual(['unplaceable', 422, { [NODE]: 'tier' }]);
    answerWith(400, { error: { code: 'invalid_input', message: 'bad', field: 'grace_ms' } });
    expect(await refusal(client.stop('i-1', 5))).toMatchObject({ code: 'invalid_input', field: 'grace_ms' });
  });

  it('refuses a failure whose error body breaks the contract', async () => {
    answerWith(500, { error: { code: 'Not-Snake', message: 'x' } });
    expect(await refusal(client.unsettled())).toMatchObject({ code: 'bad_answer', status: 500 });
    answerWith(404, { oops: 1 });
    expect(await refusal(client.node(NODE))).toMatchObject({ code: 'bad_answer', status: 404 });
  });

  it('a place stream line that breaks the contract makes the outcome unknown', async () => {
    answer = {
      status: 200,
      type: NDJSON,
      body: `${JSON.stringify({ event: 'progress', node_id: NODE, bytes: 1, total: 2 })}\n${JSON.stringify({ event: 'result', result: { status: 'placed' } })}\n`,
    };
    const progress: number[] = [];
    const e = await refusal(
      client.place({ manifest_hash: HASH }, { onProgress: (p) => progress.push(p.bytes) }),
    );
    expect(e.code).toBe('outcome_unknown');
    expect(e.message).toContain('result.');
    expect(progress).toEqual([1]);
  });

  it('a place stream error event is raised with its code', async () => {
    answer = {
      status: 200,
      type: NDJSON,
      body: `${JSON.stringify({ event: 'error', error: { code: 'governance', message: 'denied' } })}\n`,
    };
    const e = await refusal(client.place({ manifest_hash: HASH }, { onProgress: () => {} }));
    expect([e.code, e.status]).toEqual(['governance', 200]);
  });

  it('a client of a port nobody listens on says controller_not_running', async () => {
    const dead = new ApiClient({ url: 'http://127.0.0.1:1', token: 'x', home: '/h' });
    const e = await refusal(dead.health());
    expect(e.code).toBe('controller_not_running');
    expect(e.message).toContain('heddle controller run --home /h');
  });
});
