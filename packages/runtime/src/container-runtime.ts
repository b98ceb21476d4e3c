import { isAbsolute } from 'node:path';
import { PackageError, validateCogConfig } from '@heddle/package';
import type { Capability } from '@heddle/placement';
import {
  CONTAINER_LABELS,
  type ContainerCreateSpec,
  cogCommand,
  containerCreateArgs,
  containerCreateEnv,
} from './container-args.js';
import {
  type ContainerEngine,
  cogArchOfOci,
  detectEmulatedArches,
  type EngineVersion,
  engineKindOf,
  findEngineOnPath,
  parseEngineVersion,
  runEngine,
  runEngineOk,
} from './container-engine.js';
import { type ContainerImageRef, readImageRefFile } from './container-image-ref.js';
import {
  type ContainerInspect,
  mergeTimestampedLogs,
  parseInspect,
  parseJsonRecords,
  parsePs,
  signalOfExitCode,
} from './container-inspect.js';
import type {
  Admission,
  ControlMode,
  InstanceHandle,
  InstanceStatus,
  LinkSecurity,
  NetworkExposure,
  Preemption,
  RunEvidence,
  WorkloadRuntime,
} from './contract.js';
import { RuntimeError } from './errors.js';
import { deriveInstanceId } from './instance-id.js';
import type { RunMode, RuntimeWorkload, WorkloadConfig } from './workload.js';

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
  /** `uid:gid` the container runs as (default `65534:65534`, nobody); root is refused. */
  readonly user?: string;
  /** `--pids-limit` (default 256). */
  readonly pidsLimit?: number;
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
}

interface Entry {
  readonly handle: InstanceHandle;
  readonly name: string;
  readonly runMode: RunMode;
  readonly image: string;
  readonly command: readonly string[];
  /** The create spec (absent for an adopted container). */
  readonly spec?: ContainerCreateSpec;
  readonly consoleCommands: readonly string[];
  runs: number;
  stopped: boolean;
  generation: number;
  timer?: NodeJS.Timeout;
  nextRunAtMs?: number;
}

interface Chosen {
  readonly admission: Admission;
  readonly imageRef: ContainerImageRef;
}

const ROOT_USER = /^(root|0)(:.*)?$/;

/**
 * The container adapter (DESIGN 9): runs `<arch>-container` variants with `docker` or `podman` through
 * its CLI. Images are pinned by digest; containers get no network unless both the package and the host
 * policy allow it, a read-only root file system, the data directory at `/data`, the host contract as
 * environment, a non-root user, no capabilities, no new privileges, and memory, CPU and pid limits from
 * the cog's resources.
 */
export class ContainerRuntime implements WorkloadRuntime {
  readonly id: string = 'container';
  readonly route: string = 'container';
  private readonly engine: ContainerEngine | undefined;
  private readonly instances = new Map<string, Entry>();
  private readonly opts: ContainerRuntimeOptions;

  constructor(options: ContainerRuntimeOptions = {}) {
    this.opts = options;
    const user = options.user ?? '65534:65534';
    if (ROOT_USER.test(user))
      throw new RuntimeError('invalid_config', `user: containers never run as root (${user})`, {
        field: 'user',
      });
    const bin = options.engine ?? findEngineOnPath();
    this.engine =
      bin === undefined ? undefined : { bin, kind: engineKindOf(bin), env: { ...options.engineEnv } };
  }

  /** Asks the engine for its version and arch; undefined when there is no engine or it does not answer. */
  async probe(): Promise<(EngineVersion & { emulated: string[] }) | undefined> {
    if (this.engine === undefined) return undefined;
    let r: Awaited<ReturnType<typeof runEngine>>;
    try {
      r = await runEngine(this.engine, ['version', '--format', 'json'], { timeoutMs: 10_000 });
    } catch {
      return undefined;
    }
    const v = parseEngineVersion(this.engine.kind, r.stdout);
    if (v === undefined) return undefined;
    const emulated =
      this.opts.emulatedArches !== undefined
        ? [...this.opts.emulatedArches].filter((a) => a !== v.arch).sort()
        : detectEmulatedArches(v.arch, this.opts.binfmtDir);
    return { ...v, emulated };
  }

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

  private async choose(workload: RuntimeWorkload): Promise<Chosen> {
    const src = workload.source;
    if (src.type !== 'package')
      throw new RuntimeError(
        'admission',
        'source: the container adapter runs signed packages, not store pins',
        {
          field: 'source',
        },
      );
    if (this.engine === undefined)
      throw new RuntimeError('admission', 'engine: no container engine (docker or podman) found on PATH', {
        field: 'engine',
      });
    const p = await this.probe();
    if (p === undefined)
      throw new RuntimeError(
        'admission',
        `engine: ${this.engine.bin} did not answer "version" (is its daemon running?)`,
        {
          field: 'engine',
        },
      );
    const variants = Object.entries(src.verified.body.variants).filter(([, v]) => v.route === 'container');
    if (variants.length === 0)
      throw new RuntimeError('admission', `variants: ${workload.id} has no <arch>-container variant`, {
        field: 'variants',
      });
    const native = variants.find(([, v]) => v.arch === p.arch);
    const emulated = native === undefined ? variants.find(([, v]) => p.emulated.includes(v.arch)) : undefined;
    const pick = native ?? emulated;
    if (pick === undefined)
      throw new RuntimeError(
        'admission',
        `variants: no container variant for ${p.arch}${p.emulated.length > 0 ? ` or emulated ${p.emulated.join(', ')}` : ''} (package has ${variants.map(([n]) => n).join(', ')})`,
        { field: 'variants' },
      );
    const [name, variant] = pick;
    const file = src.verified.files.find((f) => f.path === variant.file);
    if (file === undefined)
      throw new RuntimeError(
        'admission',
        `variants.${name}.file: ${variant.file} is not a file of the package`,
        {
          field: `variants.${name}.file`,
        },
      );
    const imageRef = readImageRefFile(file.absolutePath);
    const notes = [`image ${imageRef.image}`, `engine ${this.engine.kind} ${p.version} (${p.arch})`];
    if (native === undefined) notes.push(`emulated: ${variant.arch} image on a ${p.arch} engine`);
    if (imageRef.network && this.opts.allowNetwork !== true)
      notes.push('network: the package asks for network; the host policy does not allow it (runs with none)');
    return {
      admission: {
        runtime: this.id,
        variant: name,
        arch: variant.arch,
        emulated: native === undefined,
        notes,
      },
      imageRef,
    };
  }

  async admit(workload: RuntimeWorkload): Promise<Admission> {
    return (await this.choose(workload)).admission;
  }

  private get eng(): ContainerEngine {
    if (this.engine === undefined)
      throw new RuntimeError('runtime', 'engine: no container engine', { field: 'engine' });
    return this.engine;
  }

  private async ensureImage(imageRef: ContainerImageRef, arch: string): Promise<void> {
    let r = await runEngine(this.eng, ['image', 'inspect', imageRef.image], { timeoutMs: 30_000 });
    if (r.code !== 0) {
      await runEngineOk(this.eng, ['pull', imageRef.image], {
        timeoutMs: this.opts.pullTimeoutMs ?? 120_000,
      });
      r = await runEngineOk(this.eng, ['image', 'inspect', imageRef.image], { timeoutMs: 30_000 });
    }
    const img = parseJsonRecords(r.stdout)[0];
    const imgArch = typeof img?.Architecture === 'string' ? cogArchOfOci(img.Architecture) : undefined;
    if (imgArch !== arch)
      throw new RuntimeError(
        'admission',
        `image: ${imageRef.image} is for ${String(img?.Architecture)}, the variant says ${arch}`,
        { field: 'image' },
      );
  }

  async load(workload: RuntimeWorkload, config: WorkloadConfig): Promise<InstanceHandle> {
    const { admission, imageRef } = await this.choose(workload);
    if (workload.source.type !== 'package') throw new RuntimeError('admission', 'source: not a package');
    const body = workload.source.verified.body;
    let values: ReturnType<typeof validateCogConfig>;
    try {
      values = validateCogConfig(body.config, config.values);
    } catch (e) {
      if (e instanceof PackageError)
        throw new RuntimeError('invalid_config', e.message, { field: e.field ?? 'config', cause: e });
      throw e;
    }
    if (!isAbsolute(config.host.dataDir))
      throw new RuntimeError('invalid_config', 'host.dataDir: must be an absolute path', {
        field: 'host.dataDir',
      });
    if (
      config.runMode.type === 'interval' &&
      !(Number.isInteger(config.runMode.secs) && config.runMode.secs >= 1)
    )
      throw new RuntimeError('invalid_config', 'runMode.secs: must be an integer >= 1', {
        field: 'runMode.secs',
      });
    const instanceId = deriveInstanceId(
      workload.id,
      workload.ref,
      config.values,
      config.runMode,
      config.host.nodeId,
    );
    const known = this.instances.get(instanceId);
    if (known !== undefined) return known.handle;
    await this.ensureImage(imageRef, admission.arch);
    const name = `heddle-${instanceId}`;
    const command = cogCommand(config.runMode, values);
    const mode = config.runMode.type === 'interval' ? `interval:${config.runMode.secs}` : config.runMode.type;
    const spec: ContainerCreateSpec = {
      name,
      image: imageRef.image,
      labels: {
        [CONTAINER_LABELS.instance]: instanceId,
        [CONTAINER_LABELS.workload]: workload.id,
        [CONTAINER_LABELS.version]: workload.version,
        [CONTAINER_LABELS.ref]: workload.ref,
        'heddle.run_mode': mode,
      },
      host: config.host,
      ramMb: body.resources.ram_mb,
      cpuPct: body.resources.cpu_pct,
      pidsLimit: this.opts.pidsLimit ?? 256,
      user: this.opts.user ?? '65534:65534',
      network:
        imageRef.network && this.opts.allowNetwork === true ? (this.opts.networkName ?? 'bridge') : 'none',
      tmpfsMb: this.opts.tmpfsMb ?? 16,
      command,
      ...(admission.emulated ? { platform: `linux/${ociArch(admission.arch)}` } : {}),
    };
    await runEngineOk(this.eng, containerCreateArgs(spec), { env: containerCreateEnv(config.host) });
    const handle: InstanceHandle = {
      instanceId,
      runtime: this.id,
      workloadId: workload.id,
      version: workload.version,
    };
    this.instances.set(instanceId, {
      handle,
      name,
      runMode: config.runMode,
      image: imageRef.image,
      command,
      spec,
      consoleCommands: body.console.map((c) => c.name),
      runs: 0,
      stopped: false,
      generation: 0,
    });
    return handle;
  }

  async adopt(handle: InstanceHandle, workload: RuntimeWorkload): Promise<void> {
    const r = await runEngineOk(this.eng, [
      'ps',
      '-a',
      '--filter',
      `label=${CONTAINER_LABELS.instance}=${handle.instanceId}`,
      '--format',
      'json',
    ]);
    const row = parsePs(r.stdout)[0];
    if (row === undefined)
      throw new RuntimeError(
        'unknown_instance',
        `instance ${handle.instanceId}: no container carries its label`,
        {
          field: 'instanceId',
        },
      );
    if (
      row.labels[CONTAINER_LABELS.workload] !== workload.id ||
      row.labels[CONTAINER_LABELS.version] !== workload.version
    )
      throw new RuntimeError(
        'runtime',
        `instance ${handle.instanceId}: container ${row.name} belongs to another workload`,
        {
          field: 'instanceId',
        },
      );
    const ins = await this.inspect(row.name);
    const modeLabel = row.labels['heddle.run_mode'] ?? 'listener';
    const secs = modeLabel.startsWith('interval:') ? Number(modeLabel.slice(9)) : 0;
    const runMode: RunMode =
      secs > 0 ? { type: 'interval', secs } : modeLabel === 'once' ? { type: 'once' } : { type: 'listener' };
    const consoleCommands =
      workload.source.type === 'package' ? workload.source.verified.body.console.map((c) => c.name) : [];
    const entry: Entry = {
      handle: { ...handle, runtime: this.id },
      name: row.name,
      runMode,
      image: ins?.image ?? row.name,
      command: [],
      consoleCommands,
      runs: ins?.startedAtMs === null || ins === undefined ? 0 : 1,
      stopped: false,
      generation: 0,
    };
    this.instances.set(handle.instanceId, entry);
    if (runMode.type === 'interval') this.watchInterval(entry, entry.generation);
  }

  private entry(handle: InstanceHandle): Entry {
    const e = this.instances.get(handle.instanceId);
    if (e === undefined)
      throw new RuntimeError(
        'unknown_instance',
        `instance ${handle.instanceId}: not loaded by this adapter`,
        {
          field: 'instanceId',
        },
      );
    return e;
  }

  private async inspect(name: string): Promise<ContainerInspect | undefined> {
    const r = await runEngine(this.eng, ['inspect', '--type', 'container', '--format', 'json', name], {
      timeoutMs: 15_000,
    });
    return r.code === 0 ? parseInspect(r.stdout) : undefined;
  }

  async start(handle: InstanceHandle): Promise<void> {
    const e = this.entry(handle);
    e.generation++;
    if (e.timer !== undefined) clearTimeout(e.timer);
    e.stopped = false;
    await runEngineOk(this.eng, ['start', e.name]);
    e.runs++;
    if (e.runMode.type === 'interval') this.watchInterval(e, e.generation);
  }

  /** Interval mode: after each run ends (`wait`), start the container again `secs` later. */
  private watchInterval(e: Entry, generation: number): void {
    if (e.runMode.type !== 'interval') return;
    const secs = e.runMode.secs;
    void runEngine(this.eng, ['wait', e.name], { timeoutMs: 2 ** 31 - 1 })
      .then((r) => {
        if (e.generation !== generation || e.stopped || r.code !== 0) return;
        e.nextRunAtMs = Date.now() + secs * 1000;
        e.timer = setTimeout(() => {
          if (e.generation !== generation || e.stopped) return;
          e.nextRunAtMs = undefined;
          void runEngine(this.eng, ['start', e.name]).then((s) => {
            if (s.code !== 0 || e.generation !== generation || e.stopped) return;
            e.runs++;
            this.watchInterval(e, generation);
          });
        }, secs * 1000);
        e.timer.unref();
      })
      .catch(() => undefined);
  }

  async stop(handle: InstanceHandle, graceMs: number): Promise<RunEvidence> {
    const e = this.entry(handle);
    e.stopped = true;
    e.generation++;
    if (e.timer !== undefined) clearTimeout(e.timer);
    e.nextRunAtMs = undefined;
    let killed = false;
    const before = await this.inspect(e.name);
    let stopRequested = false;
    if (before?.running === true) {
      stopRequested = true;
      const secs = Math.max(0, Math.ceil(graceMs / 1000));
      await runEngine(this.eng, ['stop', '-t', String(secs), e.name], { timeoutMs: graceMs + 10_000 });
      const after = await this.inspect(e.name);
      if (after?.running === true) {
        await runEngine(this.eng, ['kill', e.name], { timeoutMs: 15_000 });
        killed = true;
      }
    }
    const ins = await this.inspect(e.name);
    if (ins?.running === true)
      throw new RuntimeError(
        'runtime',
        `instance ${handle.instanceId}: container ${e.name} still runs after kill`,
        {
          field: 'instanceId',
        },
      );
    if (stopRequested && ins?.exitCode === 137) killed = true;
    const ev = await this.evidence(e, ins, [e.image, ...e.command]);
    const notes = [...ev.notes];
    if (killed) notes.push(`did not stop within ${graceMs} ms: killed`);
    return { ...ev, killed, notes };
  }

  private async evidence(
    e: Entry,
    ins: ContainerInspect | undefined,
    args: readonly string[],
  ): Promise<RunEvidence> {
    const lines = this.opts.evidenceLines ?? 200;
    const r = await runEngine(this.eng, ['logs', '--tail', String(lines), e.name], {
      maxBytes: this.opts.evidenceBytes ?? 64 * 1024,
      timeoutMs: 15_000,
    });
    const started = ins?.startedAtMs ?? null;
    const code = started === null || ins === undefined ? null : ins.exitCode;
    const signal = code === null ? null : signalOfExitCode(code);
    const notes: string[] = [];
    if (ins?.oomKilled === true) notes.push('memory limit exceeded');
    if (ins === undefined) notes.push('container not found');
    return {
      instanceId: e.handle.instanceId,
      args,
      exitCode: signal === null ? code : null,
      signal,
      startedAtMs: started,
      endedAtMs: ins?.finishedAtMs ?? null,
      killed: false,
      stdout: r.code === 0 ? r.stdout : '',
      stdoutTruncatedBytes: r.stdoutTruncated,
      stderr: r.code === 0 ? r.stderr : '',
      stderrTruncatedBytes: r.stderrTruncated,
      notes,
    };
  }

  async unload(handle: InstanceHandle): Promise<void> {
    const e = this.entry(handle);
    e.stopped = true;
    e.generation++;
    if (e.timer !== undefined) clearTimeout(e.timer);
    await runEngineOk(this.eng, ['rm', '-f', e.name]);
    this.instances.delete(handle.instanceId);
  }

  async status(handle: InstanceHandle): Promise<InstanceStatus> {
    const e = this.instances.get(handle.instanceId);
    if (e === undefined) return { instanceId: handle.instanceId, state: 'unknown' };
    const ins = await this.inspect(e.name);
    if (ins === undefined)
      return { instanceId: handle.instanceId, state: 'unknown', detail: `container ${e.name} is gone` };
    const base = { instanceId: handle.instanceId, runs: e.runs };
    const ended = {
      ...(ins.startedAtMs === null ? {} : { startedAtMs: ins.startedAtMs }),
      lastExitCode: signalOfExitCode(ins.exitCode) === null ? ins.exitCode : null,
      lastSignal: signalOfExitCode(ins.exitCode),
      ...(ins.oomKilled ? { detail: 'memory limit exceeded' } : {}),
    };
    if (ins.running)
      return {
        ...base,
        state: 'running',
        pid: ins.pid,
        ...(ins.startedAtMs === null ? {} : { startedAtMs: ins.startedAtMs }),
      };
    if (ins.status === 'created') return { ...base, state: 'loaded' };
    if (ins.status === 'dead') return { ...base, ...ended, state: 'failed' };
    if (e.stopped) return { ...base, ...ended, state: 'stopped' };
    if (e.runMode.type === 'interval' && e.nextRunAtMs !== undefined) {
      const wait = Math.max(0, Math.round((e.nextRunAtMs - Date.now()) / 1000));
      return { ...base, ...ended, state: 'exited', detail: `waiting ${wait} s for the next interval` };
    }
    return { ...base, ...ended, state: ins.exitCode === 0 && !ins.oomKilled ? 'exited' : 'failed' };
  }

  async logs(handle: InstanceHandle, lines: number): Promise<readonly string[]> {
    const e = this.entry(handle);
    const n = Math.max(0, Math.min(10_000, Math.floor(lines)));
    if (n === 0) return [];
    const r = await runEngine(this.eng, ['logs', '--timestamps', '--tail', String(n), e.name], {
      maxBytes: 1024 * 1024,
      timeoutMs: 15_000,
    });
    if (r.code !== 0) throw new RuntimeError('runtime', `logs: ${r.stderr.trim()}`, { field: 'instanceId' });
    return mergeTimestampedLogs(r.stdout, r.stderr).slice(-n);
  }

  controlMode(): ControlMode {
    return 'managed';
  }

  linkSecurity(): LinkSecurity {
    return 'local';
  }

  networkExposure(): NetworkExposure {
    return this.opts.allowNetwork === true ? 'egress' : 'none';
  }

  async consolePreemptions(_handle: InstanceHandle): Promise<readonly Preemption[]> {
    return [];
  }

  async preempt(_preemption: Preemption): Promise<void> {}

  async resume(_preemption: Preemption): Promise<void> {}

  /**
   * Runs a console command in a fresh container of the same image, with the same isolation, as
   * `--console=<command>` plus the instance's config arguments; removed afterwards.
   */
  async console(handle: InstanceHandle, command: string): Promise<RunEvidence> {
    const e = this.entry(handle);
    if (!e.consoleCommands.includes(command))
      throw new RuntimeError(
        'invalid_config',
        `command: ${JSON.stringify(command)} is not a console command of the package`,
        {
          field: 'command',
        },
      );
    if (e.spec === undefined)
      throw new RuntimeError(
        'runtime',
        `instance ${handle.instanceId}: console needs a container loaded by this process (adopted)`,
        {
          field: 'instanceId',
        },
      );
    const name = `${e.name}-console`;
    const cmd = [`--console=${command}`, ...e.command.filter((a) => a !== '--once')];
    const spec: ContainerCreateSpec = {
      ...e.spec,
      name,
      command: cmd,
      labels: { ...e.spec.labels, 'heddle.console': command },
    };
    const c: Entry = { ...e, name };
    await runEngine(this.eng, ['rm', '-f', name]);
    try {
      await runEngineOk(this.eng, containerCreateArgs(spec), { env: containerCreateEnv(spec.host) });
      await runEngineOk(this.eng, ['start', name]);
      const timeout = this.opts.consoleTimeoutMs ?? 60_000;
      const w = await runEngine(this.eng, ['wait', name], { timeoutMs: timeout });
      let killed = false;
      if (w.code !== 0) {
        await runEngine(this.eng, ['kill', name]);
        killed = true;
      }
      const ev = await this.evidence(c, await this.inspect(name), [e.image, ...cmd]);
      return killed ? { ...ev, killed, notes: [...ev.notes, 'timeout'] } : ev;
    } finally {
      await runEngine(this.eng, ['rm', '-f', name]);
    }
  }
}

function ociArch(arch: string): string {
  return arch === 'x86_64' ? 'amd64' : arch === 'aarch64' ? 'arm64' : arch === 'armv7' ? 'arm' : arch;
}
