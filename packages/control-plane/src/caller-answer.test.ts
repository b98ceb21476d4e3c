// The controller's side of the contract: every host answer is parsed with its method's schema from
// @heddle/protocol. A real WireServer on 127.0.0.1 verifies each request and signs whatever answer the
// test chose, so the Caller sees exactly what a host that breaks the schema would send.
import type { JsonValue } from '@heddle/envelope';
import { keyPairFromSecret, nodeIdFromPublicKey, toHex } from '@heddle/envelope';
import {
  AllowListPolicy,
  CallFailure,
  NonceGuard,
  okOutcome,
  ProtocolError,
  signResponse,
  verifyRequest,
} from '@heddle/protocol';
import { WireServer } from '@heddle/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Caller } from './caller.js';
import { planeConfig } from './config.js';

const controller = keyPairFromSecret(new Uint8Array(32).fill(0x51));
const host = keyPairFromSecret(new Uint8Array(32).fill(0x52));
const HOST_ID = nodeIdFromPublicKey(host.publicKey);
const INSTANCE = 'hello-0123456789abcdef';
const DECISION = 'd'.repeat(64);

let answer: JsonValue = null;
let server: WireServer;
const caller = new Caller(controller, planeConfig());

beforeAll(async () => {
  const nonces = new NonceGuard();
  const policy = new AllowListPolicy({ publicKeys: [controller.publicKey] });
  server = await WireServer.listen({
    host: '127.0.0.1',
    port: 0,
    handler: async (signed) => {
      const { request } = verifyRequest(signed, { nodeId: HOST_ID, now: Date.now(), policy, nonces });
      return signResponse(request, okOutcome(answer), host);
    },
  });
});
afterAll(() => server.close());

const call = <M extends 'workload.start' | 'workload.status' | 'workload.logs'>(
  method: M,
  body: { instance_id?: string },
) =>
  caller.call({
    url: server.url,
    target: HOST_ID,
    method,
    body,
    expectedKey: toHex(host.publicKey),
    ...(method === 'workload.start' ? { decisionId: DECISION } : {}),
  });

async function failureOf(p: Promise<unknown>): Promise<CallFailure> {
  try {
    await p;
  } catch (err) {
    if (err instanceof CallFailure) return err;
    throw err;
  }
  throw new Error('expected a CallFailure, got an answer');
}

describe('Caller: answers are parsed with the method schema', () => {
  it('returns a valid answer typed, with the fields the schema does not know dropped', async () => {
    answer = { instance_id: INSTANCE, lines: ['a', 'b'], truncated: false, extra: 1 };
    const r = await call('workload.logs', { instance_id: INSTANCE });
    expect(r.result).toEqual({ instance_id: INSTANCE, lines: ['a', 'b'], truncated: false });
  });

  it('refuses a read-only answer that breaks the schema: unreachable, naming result.<field>', async () => {
    answer = { node: HOST_ID, instances: [{ instance_id: 7 }], in_flight: [] };
    const f = await failureOf(call('workload.status', {}));
    expect(f.code).toBe('unreachable');
    expect(f.field).toBe('result.instances.0.instance_id');
    expect(f.cause).toBeInstanceOf(ProtocolError);
    expect((f.cause as ProtocolError).code).toBe('invalid_answer');
    expect(f.message).toContain('workload.status answer result.instances.0.instance_id');
  });

  it('picks the status schema by the body: one instance when the body names it', async () => {
    answer = { node: HOST_ID, instances: [], in_flight: [] };
    const f = await failureOf(call('workload.status', { instance_id: INSTANCE }));
    expect(f.field).toBe('result.instance');
  });

  it('makes a mutating call whose answer breaks the schema indeterminate (the host may have acted)', async () => {
    answer = { instance_id: INSTANCE, status: { state: 'sleeping' } };
    const f = await failureOf(call('workload.start', { instance_id: INSTANCE }));
    expect(f.code).toBe('indeterminate');
    expect(f.field).toBe('result.status.state');
  });

  it('never crashes on junk answers: each is a CallFailure naming a result field', async () => {
    const junks: JsonValue[] = [
      null,
      7,
      'ok',
      [],
      {},
      { instance_id: INSTANCE },
      { instance_id: INSTANCE, lines: 'x' },
    ];
    for (const junk of junks) {
      answer = junk;
      const f = await failureOf(call('workload.logs', { instance_id: INSTANCE }));
      expect(f.field, JSON.stringify(junk)).toMatch(/^result(\.|$)/);
    }
  });
});
