import type { Capability } from '@heddle/placement';
import type {
  Admission,
  InstanceHandle,
  InstanceStatus,
  NetworkExposure,
  RunEvidence,
  RunHooks,
} from '../contract.js';
import { RuntimeError } from '../errors.js';
import { InstanceTable, instanceHandleFor, instanceIdFor } from '../local/instance-table.js';
import { checkConsoleCommand, checkDataDir, validatedConfig } from '../local/load-checks.js';
import { LocalRuntime } from '../local/local-runtime.js';
import { checkRunMode, type RuntimeWorkload, type WorkloadConfig } from '../workload.js';
import {
  type ContainerChoice,
  chooseContainerVariant,
  ensureImage,
  ociArch,
  probeContainerEngine,
} from './container-admission.js';
import { checkAdoptedContainer } from './container-adopt-check.js';
import {
  CONTAINER_LABELS,
  type ContainerCreateSpec,
  cogCommand,
  containerCreateArgs,
  containerCreateEnv,
} from './container-args.js';
import { runContainerConsole } from './container-console.js';
import {
  type ContainerEngine,
  type EngineVersion,
  engineKindOf,
  findEngineOnPath,
  runEngineOk,
} from './container-engine.js';
import {
  type ContainerEvidenceLimits,
  containerEvidence,
  containerLogLines,
  inspectContainer,
} from './container-evidence.js';
import {
  type ContainerEntry,
  findAdoptedContainer,
  RUN_MODE_LABEL,
  runModeLabel,
  runModeOfLabel,
} from './container-instance.js';
import { haltInterval, stopContainer, watchInterval } from './container-lifecycle.js';
import { containerStatus } from './container-status.js';
import { parseContainerUser } from './container-user.js';

/** Options of {@link ContainerRuntime}. */
export interface ContainerRuntimeOptions {
  /** The engine CLI (`/usr/bin/podman`); default: `docker`, then `podman`, found on `PATH`. */
  readonly engine?: string;
  /** Extra environment for every engine CLI call (`DOCKER_HOST`, or the fake engine's state dir). */
  readonly engineEnv?: Readonly<Record<string, string>>;
  /** Host policy: may a package that asks for network get one (default false: always `--network none`). */
  readonly allowNetwork?: boolean;
  /** The network given when allowed (default `bridge`). */
  readonly networkName?: string;
  /**
   * `uid:gid` the container runs as (default `65534:65534`, nobody), both numeric; root (uid 0, also
   * written `0000`, `+0`, ...), group 0, names and a missing gid are refused (see `parseContainerUser`).
   */
  readonly user?: string;
  /** `--pids-limit` (default 256). */
  readonly pidsLimit?: number;
  /**
   * Bound of the engine's own log of each container: `--log-opt max-size` in bytes (default 1 MiB) and,
   * for docker, `--log-opt max-file` (default 3). See `containerLogArgs`.
   */
  readonly logMaxBytes?: number;
  readonly logMaxFiles?: number;
  /** `/tmp` tmpfs size in MiB (default 16). */
  readonly tmpfsMb?: number;
  /** Arches the engine runs under emulation; default: detected from binfmt_misc handlers. */
  readonly emulatedArches?: readonly string[];
  /** Where binfmt_misc handlers are looked up (default `/proc/sys/fs/binfmt_misc`). */
  readonly binfmtDir?: string;
  /** Lines of each stream kept as evidence (default 200) and their byte bound (default 64 KiB). */
  readonly evidenceLines?: number;
  readonly evidenceBytes?: number;
  /** Timeout of an image pull in ms (default 120 s) and of a console run (default 60 s). */
  readonly pullTimeoutMs?: number;
  readonly consoleTimeoutMs?: number;
  /** `host.dataDir` must resolve strictly under it (optional; see docs/runtimes.md, "Data directories"). */
  readonly dataRoot?: string;
}

/**
 * The container adapter (docs/runtimes.md, "Container adapter"): runs `<arch>-container` variants with `docker` or `podman` through
 * its CLI. Images are pinned by digest; containers get no network unless both the package and the host
 * policy allow it, a read-only root file system, the data directory at `/data`, the host contract as
 * environment, a non-root user, no capabilities, no new privileges, and memory, CPU and pid limits from
 * the cog's resources.
 */
export class ContainerRuntime extends LocalRuntime {
  readonly id: string = 'container';
  readonly route: string = 'container';
  private readonly engine: ContainerEngine | undefined;
  private readonly instances = new InstanceTable<ContainerEntry>();
  private readonly opts: ContainerRuntimeOptions;
  /** The canonical `uid:gid` every container runs as (see {@link parseContainerUser}). */
  private readonly user: string;

  /** An adapter driving `options.engine` (or the engine found on `PATH`); refuses a root `user`. */
  constructor(options: ContainerRuntimeOptions = {}) {
    super();
    this.opts = options;
    this.user = parseContainerUser(options.user ?? '65534:65534').spec;
    for (const field of ['logMaxBytes', 'logMaxFiles'] as const) {
      const v = options[field];
      if (v !== undefined && (!Number.isSafeInteger(v) || v < 1))
        throw new RuntimeError('invalid_config', `${field}: must be a positive integer`, { field });
    }
    const bin = options.engine ?? findEngineOnPath();
    this.engine =
      bin === undefined ? undefined : { bin, kind: engineKindOf(bin), env: { ...options.engineEnv } };
  }

  /** Asks the engine for its version and arch; undefined when there is no engine or it does not answer. */
  async probe(): Promise<(EngineVersion & { emulated: string[] }) | undefined> {
    if (this.engine === undefined) return undefined;
    return probeContainerEngine(this.engine, this.opts.emulatedArches, this.opts.binfmtDir);
  }

  /** `runtime.container.<engine>` with the native and emulated arches, when the engine answers. */
  async provides(): Promise<readonly Capability[]> {
    const p = await this.probe();
    if (p === undefined || this.engine === undefined) return [];
    return [
      {
        id: `runtime.container.${this.engine.kind}`,
        attrs: { arches_native: [p.arch], arches_emulated: p.emulated, engine_version: p.version },
        provenance: 'probed',
        state: 'available',
        exclusive: false,
      },
    ];
  }

  /**
   * Refuses store pins, no engine or one that does not answer, and a package without an
   * `<arch>-container` variant the engine runs natively or emulates (`admission`).
   */
  async admit(workload: RuntimeWorkload): Promise<Admission> {
    return (await this.#choose(workload)).admission;
  }

  /**
   * Admits, validates config, makes sure the image is present and of the variant's arch, and creates
   * the container `heddle-<instance id>` with the isolation flags (see docs/runtimes.md). Loading the
   * same request again returns the same handle.
   */
  async load(workload: RuntimeWorkload, config: WorkloadConfig): Promise<InstanceHandle> {
    const { admission, imageRef } = await this.#choose(workload);
    if (workload.source.type !== 'package') throw new RuntimeError('admission', 'source: not a package');
    const body = workload.source.verified.body;
    const values = validatedConfig(body.config, config.values);
    checkDataDir(config.host, this.opts.dataRoot);
    const mode = config.runMode;
    checkRunMode(mode);
    const instanceId = instanceIdFor(workload, config);
    const known = this.instances.find(instanceId);
    if (known !== undefined) return known.handle;
    await ensureImage(this.#eng, imageRef, admission.arch, this.opts.pullTimeoutMs ?? 120_000);
    const name = `heddle-${instanceId}`;
    const command = cogCommand(mode, values);
    const spec: ContainerCreateSpec = {
      name,
      image: imageRef.image,
      labels: {
        [CONTAINER_LABELS.instance]: instanceId,
        [CONTAINER_LABELS.workload]: workload.id,
        [CONTAINER_LABELS.version]: workload.version,
        [CONTAINER_LABELS.ref]: workload.ref,
        [RUN_MODE_LABEL]: runModeLabel(mode),
      },
      host: config.host,
      ramMb: body.resources.ram_mb,
      cpuPct: body.resources.cpu_pct,
      pidsLimit: this.opts.pidsLimit ?? 256,
      user: this.user,
      network: this.#network(imageRef.network),
      tmpfsMb: this.opts.tmpfsMb ?? 16,
      command,
      log: {
        engineKind: this.#eng.kind,
        maxBytes: this.opts.logMaxBytes ?? 1024 * 1024,
        maxFiles: this.opts.logMaxFiles ?? 3,
      },
      ...(admission.emulated ? { platform: `linux/${ociArch(admission.arch)}` } : {}),
    };
    await runEngineOk(this.#eng, containerCreateArgs(spec), { env: containerCreateEnv(config.host) });
    const handle = instanceHandleFor(this.id, instanceId, workload);
    const consoleCommands = body.console.map((c) => c.name);
    const entry = { handle, name, runMode: mode, image: imageRef.image, command, spec, consoleCommands };
    this.instances.set(instanceId, { ...entry, runs: 0, stopped: false, generation: 0 });
    return handle;
  }

  /**
   * Takes over the container carrying the instance's label (after a restart of the host process); its
   * run mode comes from the `heddle.run_mode` label and an interval instance is watched again. See
   * {@link checkAdoptedContainer}: only a container with the verified image and isolation is taken over.
   */
  async adopt(handle: InstanceHandle, workload: RuntimeWorkload): Promise<void> {
    const { imageRef } = await this.#choose(workload);
    const row = await findAdoptedContainer(this.#eng, handle, workload);
    await checkAdoptedContainer(this.#eng, row.name, {
      image: imageRef.image,
      network: this.#network(imageRef.network),
      user: this.user,
    });
    const ins = await inspectContainer(this.#eng, row.name);
    const runMode = runModeOfLabel(row.labels[RUN_MODE_LABEL]);
    const consoleCommands =
      workload.source.type === 'package' ? workload.source.verified.body.console.map((c) => c.name) : [];
    const entry: ContainerEntry = {
      handle: { ...handle, runtime: this.id },
      name: row.name,
      runMode,
      image: ins?.image ?? row.name,
      command: [],
      consoleCommands,
      runs: ins?.startedAtMs === null || ins === undefined ? 0 : 1,
      stopped: false,
      generation: 0,
      endedBeforeAdopt: ins !== undefined && ins.startedAtMs !== null && !ins.running,
    };
    this.instances.set(handle.instanceId, entry);
    watchInterval(this.#eng, entry, entry.generation, this.#evidenceOf(entry));
  }

  /** `start`s the container; an interval instance is started again `secs` after each run ends. */
  async start(handle: InstanceHandle): Promise<void> {
    const e = this.instances.get(handle);
    e.generation++;
    if (e.timer !== undefined) clearTimeout(e.timer);
    e.stopped = false;
    e.refused = undefined;
    e.endedBeforeAdopt = false;
    await runEngineOk(this.#eng, ['start', e.name]);
    e.runs++;
    watchInterval(this.#eng, e, e.generation, this.#evidenceOf(e));
  }

  /**
   * Cancels the next interval run, then `stop -t <ceil(grace s)>` and `kill` if the container still
   * runs; the evidence from `inspect` and `logs --tail` (`killed` when it had to be killed).
   */
  async stop(handle: InstanceHandle, graceMs: number): Promise<RunEvidence> {
    const e = this.instances.get(handle);
    haltInterval(e);
    e.nextRunAtMs = undefined;
    const { ins, killed } = await stopContainer(this.#eng, e.name, handle.instanceId, graceMs);
    const ev = await containerEvidence(
      this.#eng,
      e.name,
      e.handle.instanceId,
      ins,
      [e.image, ...e.command],
      this.#evidenceLimits(),
    );
    const notes = [...ev.notes];
    if (killed) notes.push(`did not stop within ${graceMs} ms: killed`);
    return { ...ev, killed, notes };
  }

  /** Removes the container (`rm -f`) and forgets the instance. */
  async unload(handle: InstanceHandle): Promise<void> {
    const e = this.instances.get(handle);
    haltInterval(e);
    await runEngineOk(this.#eng, ['rm', '-f', e.name]);
    this.instances.delete(handle.instanceId);
  }

  /** The instance's status from `inspect`; `unknown` for an id this adapter does not hold or a container that is gone. */
  async status(handle: InstanceHandle): Promise<InstanceStatus> {
    const e = this.instances.find(handle.instanceId);
    if (e === undefined) return { instanceId: handle.instanceId, state: 'unknown' };
    return containerStatus(e, await inspectContainer(this.#eng, e.name));
  }

  /** The last `lines` (at most 10 000) lines of both streams, merged by timestamp (`logs --timestamps`). */
  async logs(handle: InstanceHandle, lines: number): Promise<readonly string[]> {
    return containerLogLines(this.#eng, this.instances.get(handle).name, lines);
  }

  /** `none`, or `egress` when the host policy allows network (`allowNetwork`). */
  networkExposure(): NetworkExposure {
    return this.opts.allowNetwork === true ? 'egress' : 'none';
  }

  /**
   * Runs a console command in a fresh container of the same image, with the same isolation, as
   * `--console <command>` plus the instance's config arguments; removed afterwards.
   */
  async console(handle: InstanceHandle, command: string): Promise<RunEvidence> {
    const e = this.instances.get(handle);
    checkConsoleCommand(e.consoleCommands, command, e.handle.workloadId);
    const timeoutMs = this.opts.consoleTimeoutMs ?? 60_000;
    return runContainerConsole(this.#eng, e, command, timeoutMs, this.#evidenceLimits());
  }

  /**
   * Every later run goes through `hooks`: interval re-runs wait for `beforeRun`, and each run that
   * ends without a stop is reported to `runEnded` with its evidence (watched with `wait`).
   */
  watchRuns(handle: InstanceHandle, hooks: RunHooks): void {
    const e = this.instances.get(handle);
    const fresh = e.hooks === undefined;
    e.hooks = hooks;
    // A running listener or once instance was not watched before it had hooks.
    if (fresh && e.runMode.type !== 'interval' && e.runs > 0 && !e.stopped) {
      watchInterval(this.#eng, e, e.generation, this.#evidenceOf(e));
    }
  }

  /** The evidence of an entry's run that ended by itself (inspect and logs). */
  #evidenceOf(e: ContainerEntry): () => Promise<RunEvidence> {
    return async () =>
      containerEvidence(
        this.#eng,
        e.name,
        e.handle.instanceId,
        await inspectContainer(this.#eng, e.name),
        [e.image, ...e.command],
        this.#evidenceLimits(),
      );
  }

  get #eng(): ContainerEngine {
    if (this.engine === undefined)
      throw new RuntimeError('runtime', 'engine: no container engine', { field: 'engine' });
    return this.engine;
  }

  /** The network of a container: when both the package asks and the host policy allows. */
  #network(asked: boolean): string {
    return asked && this.opts.allowNetwork === true ? (this.opts.networkName ?? 'bridge') : 'none';
  }

  #choose(workload: RuntimeWorkload): Promise<ContainerChoice> {
    const allowNetwork = this.opts.allowNetwork === true;
    return chooseContainerVariant(workload, this.id, this.engine, () => this.probe(), allowNetwork);
  }

  #evidenceLimits(): ContainerEvidenceLimits {
    return { lines: this.opts.evidenceLines ?? 200, bytes: this.opts.evidenceBytes ?? 64 * 1024 };
  }
}
