/**
 * The Heddle demo (`npm run demo`): one controller and a few hosts, in one process, showing what
 * exists so far. Keys and node ids; the example cog built, signed and verified (and a tampered copy
 * refused); a placement across signed node facts with its explanation; a governed decision on the
 * audit chain; a signed request accepted and answered; the refusals of replayed, expired, forged,
 * misaddressed and unauthorised requests; a signed checkpoint with an inclusion proof, and a one-byte
 * edit found.
 */
import {
  appendFileSync,
  copyFileSync,
  cpSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openChainFile, verifyChainFile, verifyCheckpoint, verifyInclusion } from '@heddle/chain';
import { generateKeyPair, nodeIdFromPublicKey, saveKeyFile, toHex } from '@heddle/envelope';
import { DEFAULT_POLICY, Gate } from '@heddle/gate';
import type { NodeTier } from '@heddle/model';
import {
  buildCogPackage,
  type CogBody,
  NO_REVOCATIONS,
  PackageError,
  TrustAnchors,
  verifyPackage,
} from '@heddle/package';
import {
  type Capability,
  cogPlacementRequest,
  explain,
  LivenessTracker,
  NodeFactsCache,
  PlacementState,
  placeAndReserve,
  signNodeFacts,
  viewFromCache,
} from '@heddle/placement';
import {
  AllowListPolicy,
  createRequest,
  NonceGuard,
  okOutcome,
  Refusal,
  type SignedCtl,
  signRequest,
  signResponse,
  verifyRequest,
  verifyResponse,
} from '@heddle/protocol';
import { NativeRuntime, RuntimeError, WasiRuntime, WorkloadHost, workloadFromPackage } from '@heddle/runtime';

const bold = (s: string): string => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
const step = (n: number, title: string): void => console.log(`\n${bold(`${n}. ${title}`)}`);
const say = (line: string): void => console.log(`   ${line}`);

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'heddle-demo-'));
try {
  await main();
} finally {
  rmSync(dir, { recursive: true, force: true });
}

async function main(): Promise<void> {
  console.log(
    bold('Heddle demo: signed packages, placement, governance, signed requests and the audit chain'),
  );

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

  step(2, 'A signed workload package');
  const pkgDir = join(dir, 'hello-pkg');
  const built = await buildCogPackage(join(repoRoot, 'examples', 'hello-cog'), pkgDir, {
    keys: [controller],
  });
  const anchors = new TrustAnchors([
    { id: 'operator', role: 'operator', publicKey: toHex(controller.publicKey) },
  ]);
  const verified = await verifyPackage<CogBody>(pkgDir, { anchors, revocations: NO_REVOCATIONS });
  const body = verified.body;
  say(
    `built examples/hello-cog: ${body.id}@${body.version}, ${verified.files.length} files, variants ${Object.keys(body.variants).join(', ')}`,
  );
  say(
    `package id ${built.package.packageId.slice(0, 16)}..., signed by "${verified.signerIds.join(', ')}", verified on the host`,
  );
  const tampered = join(dir, 'hello-tampered');
  cpSync(pkgDir, tampered, { recursive: true });
  appendFileSync(join(tampered, body.variants['x86_64-native']?.file ?? 'bin/hello.sh'), '\necho pwned\n');
  try {
    await verifyPackage(tampered, { anchors, revocations: NO_REVOCATIONS });
    say('a tampered copy verified (!)');
  } catch (err) {
    if (!(err instanceof PackageError)) throw err;
    say(`a copy with one file changed is refused: ${err.code} (${err.message})`);
  }

  step(3, 'Placement: signed node facts, liveness, tiers, governance, explain');
  const chainPath = join(dir, 'audit.chain');
  const chain = await openChainFile(chainPath);
  const gate = new Gate({ policy: DEFAULT_POLICY, recorder: chain });
  const now0 = Date.now();
  const cache = new NodeFactsCache();
  const live = new LivenessTracker();
  const node = (caps: Capability[], tier: NodeTier, alive: boolean) => {
    const keys = generateKeyPair();
    const nodeId = nodeIdFromPublicKey(keys.publicKey);
    const facts = { node_id: nodeId, issued_at_ms: now0, ttl_ms: 60_000, seq: 1, capabilities: caps };
    cache.insert(signNodeFacts(facts, keys.secretKey), { now_ms: now0, tier });
    if (alive) live.contact(nodeId, now0);
    return nodeId;
  };
  const cap = (id: string, attrs: Capability['attrs'] = {}): Capability => ({
    id,
    attrs,
    provenance: 'probed',
    state: 'available',
    exclusive: false,
  });
  const linuxCaps = (arch: string, mb: number): Capability[] => [
    cap(`cpu.arch.${arch}`, { cores: 4 }),
    cap('os.linux'),
    cap('runtime.native'),
    cap('runtime.wasi'),
    cap('mem.system', { size_mb: mb }),
  ];
  const names = new Map<string, string>([
    [node(linuxCaps('x86_64', 8192), 'paired', true), 'laptop  x86_64 paired'],
    [node(linuxCaps('aarch64', 4096), 'pinned', true), 'pi5     aarch64 pinned'],
    [node(linuxCaps('aarch64', 2048), 'discovered', true), 'new-pi  aarch64 discovered'],
    [node(linuxCaps('x86_64', 16384), 'pinned', false), 'server  x86_64 pinned, silent'],
  ]);
  const context = {
    kind: 'cog',
    package_trust: 'operator_attested',
    node_tier: 'paired',
    network: 'lan',
    secrets: false,
    emulated: false,
    resource_cost: 0.1,
    package_id: verified.packageId,
    signer_keys: [...verified.signerKeys],
    artifact_hashes: [...verified.artifactHashes],
  };
  const view = viewFromCache(cache, { liveness: live, now_ms: now0 });
  const placement = cogPlacementRequest(body, {
    workload: body.id,
    package_id: verified.packageId,
    min_tier: 'paired',
  });
  // Governance per node: the gate's verdict for workload.place at that node's operator-assigned tier.
  const { decision: placed } = placeAndReserve(placement, view, new PlacementState(), {
    now_ms: now0,
    governance: (_id, _variant, n) =>
      gate.dryRun(controllerId, 'workload.place', { ...context, node_tier: n.tier }).decision,
  });
  // cast: explain without the json option returns the text table
  let table = explain(placed) as string;
  for (const [id, name] of names) table = table.replaceAll(id, name.padEnd(id.length));
  for (const line of table.trimEnd().split('\n')) say(line);

  step(4, 'A governed decision, chained');
  const decision = await gate.check(controllerId, 'workload.start', context);
  say(`workload.start on a paired node: ${decision.verdict} by rule "${decision.rule}"`);
  const denied = await gate.check(controllerId, 'workload.start', { ...context, secrets: true });
  say(`the same with secrets on a paired node: ${denied.verdict} (${denied.reason})`);
  const decisionId = decision.event_hash;
  say(`decision id (the chain hash of the decision): ${decisionId}`);

  step(5, 'A signed request, verified by the host and answered');
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

  step(6, 'What the host refuses');
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

  step(7, 'Running a workload: admission, the gate, the adapter, evidence');
  const wasiDir = join(dir, 'wasi-pkg');
  await buildCogPackage(join(repoRoot, 'examples', 'wasi-cog'), wasiDir, { keys: [controller] });
  const wasiCog = workloadFromPackage(
    await verifyPackage<CogBody>(wasiDir, { anchors, revocations: NO_REVOCATIONS }),
  );
  const hostContract = { nodeId: hostId, dataDir: join(dir, 'data') };
  const wasiHost = new WorkloadHost({
    runtime: new WasiRuntime({ dataRoot: dir }),
    gate,
    recorder: chain,
    agent: hostId,
    nodeTier: 'paired',
  });
  const instance = await wasiHost.load(wasiCog, {
    values: {},
    runMode: { type: 'once' },
    host: hostContract,
  });
  await wasiHost.start(instance);
  while ((await wasiHost.status(instance)).state === 'running') await new Promise((r) => setTimeout(r, 20));
  const evidence = await wasiHost.stop(instance, 1000);
  await wasiHost.unload(instance);
  say(`${instance.instanceId} (WASI: no network, only its data dir) exited ${evidence.exitCode}`);
  say(`its output: ${evidence.stdout.trim()}`);
  // The native route cannot isolate the network, and the default policy allows at most "lan".
  const nativeHost = new WorkloadHost({
    runtime: new NativeRuntime({
      stateDir: join(dir, 'native'),
      ...(process.getuid?.() === 0 ? { runAsUser: 'nobody' } : {}),
    }),
    gate,
    recorder: chain,
    agent: hostId,
    nodeTier: 'paired',
  });
  try {
    await nativeHost.load(workloadFromPackage(verified), {
      values: {},
      runMode: { type: 'once' },
      host: hostContract,
    });
    say('the native route was allowed (!)');
  } catch (err) {
    if (!(err instanceof RuntimeError)) throw err;
    say(`the native route of hello-cog is refused before it runs: ${err.code} (${err.message})`);
  }

  step(8, 'The audit chain: checkpoint, inclusion proof, tamper evidence');
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
