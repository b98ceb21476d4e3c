import { join } from 'node:path';
import { type Chain, openChainFile, openMemoryChain } from '@heddle/chain';
import { type KeyPair, makeDirs, nodeIdFromPublicKey, toHex } from '@heddle/envelope';
import { Gate, type Policy } from '@heddle/gate';
import { HostService } from '@heddle/host-service';
import type { NodeTier } from '@heddle/model';
import { RevocationHolder, type TrustAnchors } from '@heddle/package';
import type { ControllerPolicy } from '@heddle/protocol';
import { WorkloadHost } from '@heddle/runtime';
import { WireServer } from '@heddle/wire';
import { SimulatedRuntime, type SimulatedRuntimeOptions } from './sim-runtime.js';

/** What every hollow host of a fleet shares (read once for the whole process). */
export interface HollowShared {
  /** The controllers the hosts obey. */
  readonly controllers: ControllerPolicy;
  /** The hosts' trust anchors (the same trust file a real host is given). */
  readonly anchors: TrustAnchors;
  /** The hosts' governance policy. */
  readonly policy: Policy;
  /** The tier the hosts' own gates use. */
  readonly tier: NodeTier;
  /** The simulated runtime's settings (one runtime per host and route). */
  readonly runtime: Omit<SimulatedRuntimeOptions, 'route'>;
  /** The routes each host offers. */
  readonly routes: readonly SimulatedRuntimeOptions['route'][];
  /** `file`: each host keeps its chain in `<dir>/chain.jsonl` as a real host does; `memory`: in memory. */
  readonly chain: 'file' | 'memory';
  /** Where the hosts listen (default `127.0.0.1`). */
  readonly listenHost: string;
  /** Told of failures no caller can be answered about. */
  readonly onError: (err: unknown) => void;
  /** The controller lease (ms), as `controller_lease_secs` of a real host; default none. */
  readonly leaseMs?: number;
}

/** One hollow host's identity and place. */
export interface HollowHostSpec {
  readonly index: number;
  readonly keys: KeyPair;
  /** Its own directory (data, chain, nonce journal, revocation list). */
  readonly dir: string;
  /** The port to listen on (0: any free port; a revived host listens on the port it had). */
  readonly port: number;
}

/**
 * A hollow host (docs/hollow.md): a real `HostService` (the same request verification, signing,
 * describe, leases, refusals, nonce journal, chain, gate and package fetch and verification as
 * `heddle-host`) behind its own `WireServer`, whose only simulated part is its runtime adapter
 * ({@link SimulatedRuntime}).
 */
export class HollowHost {
  readonly index: number;
  readonly nodeId: string;
  readonly publicKey: string;
  readonly url: string;
  readonly service: HostService;
  /** The simulated runtime of each route. */
  readonly runtimes: readonly SimulatedRuntime[];
  readonly #server: WireServer;
  readonly #chain: Chain;
  #dead = false;

  private constructor(
    spec: HollowHostSpec,
    parts: { server: WireServer; chain: Chain; service: HostService; runtimes: SimulatedRuntime[] },
  ) {
    this.index = spec.index;
    this.nodeId = nodeIdFromPublicKey(spec.keys.publicKey);
    this.publicKey = toHex(spec.keys.publicKey);
    this.url = parts.server.url;
    this.service = parts.service;
    this.runtimes = parts.runtimes;
    this.#server = parts.server;
    this.#chain = parts.chain;
  }

  /** The port it listens on. */
  get port(): number {
    return this.#server.address.port;
  }

  /** True once {@link kill} ran. */
  get dead(): boolean {
    return this.#dead;
  }

  /** Instances placed here (any state). */
  instanceIds(): string[] {
    return this.service.instanceIds();
  }

  /**
   * Starts a hollow host: opens its chain, builds its gate, simulated runtimes and `HostService`,
   * re-adopts what a previous run left (simulated instances never survive: each is reported lost),
   * and listens.
   */
  static async start(spec: HollowHostSpec, shared: HollowShared): Promise<HollowHost> {
    const nodeId = nodeIdFromPublicKey(spec.keys.publicKey);
    const dataDir = join(spec.dir, 'data');
    makeDirs(join(dataDir, 'instances'), 0o711);
    const chain =
      shared.chain === 'file' ? await openChainFile(join(dataDir, 'chain.jsonl')) : await openMemoryChain();
    let server: WireServer | undefined;
    try {
      const holder = new RevocationHolder({
        path: join(spec.dir, 'revocations.json'),
        trustedKeys: shared.anchors.operatorKeys(),
        generationFile: join(dataDir, 'revocations.generation'),
      });
      const gate = new Gate({ policy: shared.policy, recorder: chain, revocations: holder });
      const runtimes = shared.routes.map((route) => new SimulatedRuntime({ ...shared.runtime, route }));
      const hosts = runtimes.map(
        (runtime) =>
          new WorkloadHost({ runtime, gate, recorder: chain, agent: nodeId, nodeTier: shared.tier }),
      );
      let service: HostService | undefined;
      server = await WireServer.listen({
        handler: async (signed, ctx) => {
          if (service === undefined) throw new Error('the host is not ready');
          return service.handle(signed, ctx);
        },
        host: shared.listenHost,
        port: spec.port,
        onError: shared.onError,
      });
      service = new HostService({
        keys: spec.keys,
        controllers: shared.controllers,
        anchors: shared.anchors,
        revocations: holder,
        routes: hosts,
        recorder: chain,
        dataDir,
        address: server.url,
        software: { name: 'heddle-hollow', version: '0.1.0' },
        nonceJournal: {
          path: join(dataDir, 'nonces.journal'),
          expected: shared.chain === 'file' && !chain.openReport.created,
        },
        onError: shared.onError,
        ...(shared.leaseMs === undefined ? {} : { leaseMs: shared.leaseMs }),
      });
      await service.recover();
      return new HollowHost(spec, { server, chain, service, runtimes });
    } catch (err) {
      await server?.close().catch(() => {});
      await chain.close().catch(() => {});
      throw err;
    }
  }

  /**
   * Dies as a host that lost power: every connection is cut and the port closed, the service halts
   * (nothing drained, nothing more written) and its simulated instances are gone. Idempotent.
   */
  async kill(): Promise<void> {
    if (this.#dead) return;
    this.#dead = true;
    await Promise.all([this.#server.close(), this.service.halt()]);
    await this.#chain.close().catch(() => {});
  }

  /** A graceful stop: the service drains (its instances are stopped, chained), then the server and chain close. */
  async stop(): Promise<void> {
    if (this.#dead) return;
    this.#dead = true;
    this.#server.stopAccepting();
    await this.service.shutdown(5_000).catch(() => undefined);
    await this.#server.close();
    await this.#chain.close().catch(() => {});
  }
}
