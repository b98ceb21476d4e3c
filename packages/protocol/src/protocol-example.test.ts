import { readFileSync } from 'node:fs';
import { fromHex, keyPairFromSecret, nodeIdFromPublicKey, toHex } from '@heddle/envelope';
import { describe, expect, it } from 'vitest';
import { AllowListPolicy } from './controller-policy.js';
import { signRequest } from './create-request.js';
import { NonceGuard } from './nonce-guard.js';
import { signResponse } from './sign-response.js';
import type { SignedCtl } from './signed-ctl.js';
import { verifyRequest } from './verify-request.js';
import { verifyResponse } from './verify-response.js';

// The worked example of docs/protocol.md must verify, and must be what the reference signer produces.
const doc = readFileSync(new URL('../../../docs/protocol.md', import.meta.url), 'utf8');

function block(name: string): SignedCtl {
  const m = new RegExp(`\`\`\`json example:${name}\\n([\\s\\S]*?)\\n\`\`\``).exec(doc);
  if (!m?.[1]) throw new Error(`docs/protocol.md has no example:${name} block`);
  return JSON.parse(m[1]) as SignedCtl;
}

function row(label: string): string {
  const m = new RegExp(`\\| ${label} *\\| \`([0-9a-f]+)\` *\\|`).exec(doc);
  if (!m?.[1]) throw new Error(`docs/protocol.md has no "${label}" row`);
  return m[1];
}

describe('docs/protocol.md worked example', () => {
  const controller = keyPairFromSecret(fromHex(row('controller secret key'), 32));
  const host = keyPairFromSecret(fromHex(row('host secret key'), 32));
  const hostId = nodeIdFromPublicKey(host.publicKey);
  const controllerId = nodeIdFromPublicKey(controller.publicKey);
  const request = block('request');

  it('lists keys and node ids that belong together', () => {
    expect(row('controller public key')).toBe(toHex(controller.publicKey));
    expect(row('host public key')).toBe(toHex(host.publicKey));
    expect(row('controller node id')).toBe(controllerId);
    expect(row('host node id')).toBe(hostId);
  });

  it('the request verifies on the host within its window, and signing reproduces it', () => {
    const options = {
      nodeId: hostId,
      policy: new AllowListPolicy({ nodeIds: [controllerId] }),
      expectedMethod: 'workload.stop',
    };
    const v = verifyRequest(request, { ...options, now: 1767225570000, nonces: new NonceGuard() });
    expect(v.request.body).toEqual({ instance_id: 'sensor-7f3a', grace_ms: 5000 });
    expect(() =>
      verifyRequest(request, { ...options, now: 1767225659999, nonces: new NonceGuard() }),
    ).not.toThrow();
    expect(() =>
      verifyRequest(request, { ...options, now: 1767225569999, nonces: new NonceGuard() }),
    ).toThrow('expired');
    expect(signRequest(v.request, controller)).toEqual(request);
  });

  it('both responses verify against the request and are reproduced by the signer', () => {
    const sent = verifyRequest(request, {
      nodeId: hostId,
      now: 1767225600000,
      policy: new AllowListPolicy({ nodeIds: [controllerId] }),
      nonces: new NonceGuard(),
    }).request;
    for (const name of ['response-ok', 'response-refused']) {
      const signed = block(name);
      const v = verifyResponse(signed, { request: sent, expectedPublicKey: host.publicKey });
      expect(signResponse(sent, v.response.outcome, host)).toEqual(signed);
    }
  });
});
