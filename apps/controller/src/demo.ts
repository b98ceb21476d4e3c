/**
 * The Heddle demo (`npm run demo`): one controller and one host, in one process, showing what the
 * foundation guarantees. Keys and node ids, a governed decision on the audit chain, a signed request
 * accepted and answered, the refusals of replayed, expired, forged, misaddressed and unauthorised
 * requests, a signed checkpoint with an inclusion proof, and a one-byte edit found.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openChainFile, verifyChainFile, verifyCheckpoint, verifyInclusion } from '@heddle/chain';
import {
  AllowListPolicy,
  createRequest,
  generateKeyPair,
  NonceGuard,
  nodeIdFromPublicKey,
  okOutcome,
  Refusal,
  type SignedCtl,
  saveKeyFile,
  signRequest,
  signResponse,
  toHex,
  verifyRequest,
  verifyResponse,
} from '@heddle/envelope';
import { DEFAULT_POLICY, Gate } from '@heddle/gate';

const bold = (s: string): string => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
const step = (n: number, title: string): void => console.log(`\n${bold(`${n}. ${title}`)}`);
const say = (line: string): void => console.log(`   ${line}`);

const dir = mkdtempSync(join(tmpdir(), 'heddle-demo-'));
try {
  await main();
} finally {
  rmSync(dir, { recursive: true, force: true });
}

async function main(): Promise<void> {
  console.log(bold('Heddle demo: signed requests, governance and the audit chain'));

  step(1, 'Keys and node ids');
  const controller = generateKeyPair();
  const host = generateKeyPair();
  const stranger = generateKeyPair();
  const controllerId = nodeIdFromPublicKey(controller.publicKey);
  const hostId = nodeIdFromPublicKey(host.publicKey);
  saveKeyFile(join(dir, 'controller.key'), controller);
  saveKeyFile(join(dir, 'host.key'), host);
  say(`controller ${controllerId}  (key file written with mode 0600)`);
  say(`host       ${hostId}`);
  say('a node id is the first 128 bits of SHA-256 of its Ed25519 public key');

  step(2, 'A governed decision, chained');
  const chainPath = join(dir, 'audit.chain');
  const chain = await openChainFile(chainPath);
  const gate = new Gate({ policy: DEFAULT_POLICY, recorder: chain });
  const context = {
    kind: 'cog',
    package_trust: 'operator_attested',
    node_tier: 'paired',
    network: 'lan',
    secrets: false,
    emulated: false,
    resource_cost: 0.1,
    package_id: 'demo/hello@1.0.0',
    signer_keys: [toHex(controller.publicKey)],
    artifact_hashes: [],
  };
  const decision = await gate.check(controllerId, 'workload.start', context);
  say(`workload.start on a paired node: ${decision.verdict} by rule "${decision.rule}"`);
  const denied = await gate.check(controllerId, 'workload.start', { ...context, secrets: true });
  say(`the same with secrets on a paired node: ${denied.verdict} (${denied.reason})`);
  const decisionId = decision.event_hash;
  say(`decision id (the chain hash of the decision): ${decisionId}`);

  step(3, 'A signed request, verified by the host and answered');
  const nonces = new NonceGuard();
  const policy = new AllowListPolicy({ nodeIds: [controllerId] });
  let now = Date.now();
  const request = createRequest({
    method: 'workload.start',
    requester: controllerId,
    target: hostId,
    body: { instance: 'demo-hello-1' },
    decisionId,
    now,
  });
  const signed = signRequest(request, controller);
  say(
    `request ${request.method}, nonce ${request.nonce}, expires in ${(request.expires_at_ms - now) / 1000} s`,
  );
  const pending: Promise<unknown>[] = [];
  const hostCheck = (s: unknown, at = now): string => {
    try {
      const v = verifyRequest(s, { nodeId: hostId, now: at, policy, nonces });
      return `accepted from ${v.request.requester}`;
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      pending.push(chain.append('workload.host', 'workload.refuse', { code: err.code, reason: err.reason }));
      return `refused: ${err.code} (${err.reason})`;
    }
  };
  say(`host: ${hostCheck(signed)}`);
  const response = signResponse(request, okOutcome({ state: 'running' }), host);
  const answer = verifyResponse(response, { request, expectedPublicKey: host.publicKey, now });
  say(
    `controller: response from ${answer.response.responder} verified, outcome ${answer.response.outcome.status}`,
  );
  await chain.append('workload.host', 'workload.start', {
    decision_id: decisionId,
    instance: 'demo-hello-1',
  });

  step(4, 'What the host refuses');
  say(`the same request again          -> ${hostCheck(signed)}`);
  now += 1000;
  const fresh = (
    overrides: Partial<Parameters<typeof createRequest>[0]> = {},
    keys = controller,
  ): SignedCtl =>
    signRequest(
      createRequest({
        method: 'workload.start',
        requester: nodeIdFromPublicKey(keys.publicKey),
        target: hostId,
        body: {},
        decisionId,
        now,
        ...overrides,
      }),
      keys,
    );
  say(`a request checked 6 min later   -> ${hostCheck(fresh(), now + 360_000)}`);
  const forged = fresh();
  say(
    `one byte of the payload changed -> ${hostCheck({ ...forged, payload: forged.payload.replace('"body":{}', '"body":{"x":1}') })}`,
  );
  say(`a request for another node      -> ${hostCheck(fresh({ target: controllerId }))}`);
  say(`signed by an unknown key        -> ${hostCheck(fresh({}, stranger))}`);
  say(`a signature of zeros            -> ${hostCheck({ ...fresh(), signature: '00'.repeat(64) })}`);

  step(5, 'The audit chain: checkpoint, inclusion proof, tamper evidence');
  await Promise.all(pending); // every refusal is on the chain before the checkpoint
  const checkpoint = chain.checkpoint(host);
  const cp = verifyCheckpoint(checkpoint, host.publicKey);
  say(
    `${chain.size} events; checkpoint signed by the host: size ${cp.size}, root ${cp.root.slice(0, 16)}...`,
  );
  const decisionEvent = chain.getByHash(decisionId);
  if (!decisionEvent) throw new Error('the decision is not on the chain');
  const proof = chain.inclusionProof(decisionEvent.seq, cp.size);
  const included = verifyInclusion(proof.leaf, proof.seq, proof.size, proof.path, cp.root);
  say(
    `the decision (seq ${proof.seq}) is in the checkpointed tree: ${included} (${proof.path.length} hashes of proof)`,
  );
  await chain.close();
  const good = await verifyChainFile(chainPath, { checkpoint: cp });
  say(`verify ${chainPath.replace(dir, '<tmp>')}: ${good.ok ? 'ok' : 'FAILED'}, ${good.size} events`);
  const copy = join(dir, 'tampered.chain');
  copyFileSync(chainPath, copy);
  writeFileSync(copy, readFileSync(copy, 'utf8').replace('"demo-hello-1"', '"demo-hello-2"'));
  const bad = await verifyChainFile(copy, { checkpoint: cp });
  say(
    `after editing one byte: ${bad.ok ? 'ok (!)' : `FAILED at seq ${bad.failure?.seq}: ${bad.failure?.reason}`}`,
  );

  console.log(`\n${bold('Done.')} Try the CLI: node apps/controller/dist/bin.js help`);
}
