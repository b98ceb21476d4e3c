import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { StoreCog } from '../seed-api.js';
import {
  defaultManifest,
  MAX_LOG_LINES,
  type SimInstalledCog,
  type SimManifest,
  SYNTHETIC_WARNING,
} from './sim-types.js';

/** A refusal the simulator answers as `{error}` with an HTTP status. */
export class SimRefusal extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'SimRefusal';
    this.status = status;
  }
}

/** A config value as the simulator keeps it. */
export type SimConfigValue = string | number | boolean;

interface CogState {
  readonly id: string;
  readonly version: string;
  readonly manifest: SimManifest;
  running: boolean;
  pid: number | null;
  config: Record<string, SimConfigValue>;
  readonly output: string[];
  readonly errors: string[];
  reading: number;
  timer: NodeJS.Timeout | undefined;
}

/** Settings of {@link SimState}. */
export interface SimStateSettings {
  readonly catalog: readonly StoreCog[];
  readonly manifests: Readonly<Record<string, SimManifest>>;
  readonly cap: number;
  readonly capStatus: number;
  readonly tickMs: number;
  readonly pairWindowSecs: number;
  readonly tokens: readonly string[];
}

/** What a console run answered. */
export interface SimConsoleRun {
  readonly output: string[];
  readonly errors: string[];
  readonly exit_code: number;
}

const sha = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/**
 * The simulated Seed's state (the Seed's public API documents, see docs/seed.md, "The simulator"): the store, the installed cogs with their
 * logs (1000 lines per stream) and configs (`{}` at install), the paired clients (one token per client
 * name, kept as a SHA-256 hash; a new pairing of the same name replaces its token) and the window.
 */
export class SimState {
  catalog: readonly StoreCog[];
  autoStart = true;
  /** Something other than a cog holds UDP 5006 (a relay, another process): console runs go synthetic. */
  feedHeldOutside = false;
  readonly cap: number;
  readonly capStatus: number;
  readonly deviceId: string = randomUUID();
  readonly publicKey: string = randomBytes(32).toString('hex');
  readonly epoch: number = 1 + Math.floor(Math.random() * 50_000);
  private readonly manifests: Readonly<Record<string, SimManifest>>;
  private readonly tickMs: number;
  private readonly pairWindowSecs: number;
  private readonly cogs = new Map<string, CogState>();
  private readonly clients = new Map<string, Buffer>();
  private closed = false;
  private windowUntil = 0;
  private nextPid = 1000;
  private nextClient = 1;
  private readonly bootedAt = Date.now();

  constructor(s: SimStateSettings) {
    this.catalog = s.catalog;
    this.manifests = s.manifests;
    this.cap = s.cap;
    this.capStatus = s.capStatus;
    this.tickMs = s.tickMs;
    this.pairWindowSecs = s.pairWindowSecs;
    for (const t of s.tokens) this.clients.set(`preset-${this.nextClient++}`, sha(t));
  }

  uptimeSecs(): number {
    return Math.floor((Date.now() - this.bootedAt) / 1000);
  }

  /** Whether `token` is the token of a paired client (hashes compared in constant time). */
  checkToken(token: string): boolean {
    const h = sha(token);
    let ok = false;
    for (const t of this.clients.values()) if (timingSafeEqual(t, h)) ok = true;
    return ok;
  }

  /** Pairs (or re-pairs) `clientName` and returns its new token; an earlier token of that name stops working. */
  addClient(clientName: string): string {
    const token = `seed_${randomBytes(30).toString('base64url')}`;
    this.clients.set(clientName, sha(token));
    return token;
  }

  /** A new client with a generated name (a test pairing without a window). */
  addToken(): string {
    return this.addClient(`test-${this.nextClient++}`);
  }

  /** Unpairs a client by name (`DELETE /pair/{client_name}`); false when there is none. */
  removeClient(clientName: string): boolean {
    return this.clients.delete(clientName);
  }

  /** Forgets the client holding `token` (or every client): the Seed refuses that token from then on. */
  revoke(token?: string): void {
    if (token === undefined) {
      this.clients.clear();
      return;
    }
    const h = sha(token);
    for (const [name, t] of this.clients) if (t.equals(h)) this.clients.delete(name);
  }

  clientCount(): number {
    return this.clients.size;
  }

  openWindow(): void {
    this.windowUntil = Date.now() + this.pairWindowSecs * 1000;
  }

  closeWindow(): void {
    this.windowUntil = 0;
  }

  windowLeft(): number {
    return Math.max(0, Math.ceil((this.windowUntil - Date.now()) / 1000));
  }

  storeCog(id: string): StoreCog | undefined {
    return this.catalog.find((c) => c.id === id);
  }

  runningIds(): string[] {
    return [...this.cogs.values()].filter((c) => c.running).map((c) => c.id);
  }

  has(id: string): boolean {
    return this.cogs.has(id);
  }

  get(id: string): CogState {
    const c = this.cogs.get(id);
    if (c === undefined) throw new SimRefusal(404, `app ${id} is not installed`);
    return c;
  }

  /** Refuses (the cap status) when one more running cog would exceed the cap. */
  checkCap(what: string): void {
    const running = this.runningIds();
    if (running.length >= this.cap) {
      throw new SimRefusal(
        this.capStatus,
        `${what}: max ${this.cap} concurrent active cogs (running: ${running.join(', ')}); stop another cog`,
      );
    }
  }

  /** Installs the store cog as it is listed now, with an optional initial config, and auto-starts it. */
  install(cog: StoreCog, config: Record<string, unknown> | undefined): void {
    const manifest = this.manifests[cog.id] ?? defaultManifest(cog.id, cog.version);
    const state: CogState = {
      id: cog.id,
      version: cog.version,
      manifest,
      running: false,
      pid: null,
      config: {},
      output: [],
      errors: [],
      reading: 0,
      timer: undefined,
    };
    if (config !== undefined) state.config = checkConfig(manifest, {}, config);
    this.cogs.set(cog.id, state);
    if (this.autoStart) this.start(cog.id);
  }

  /** Starts a cog (idempotent); returns its pid. */
  start(id: string): number {
    const c = this.get(id);
    if (c.running && c.pid !== null) return c.pid;
    this.checkCap(`start of ${id}`);
    c.running = true;
    c.pid = this.nextPid++;
    this.append(c.errors, `[cog-${id}] start`);
    if (this.closed) return c.pid;
    c.timer = setInterval(() => {
      c.reading += 1;
      this.append(c.output, JSON.stringify({ cog: id, reading: c.reading, source: this.feedOf(id) }));
    }, this.tickMs);
    c.timer.unref();
    return c.pid;
  }

  stop(id: string): void {
    const c = this.get(id);
    if (c.timer !== undefined) clearInterval(c.timer);
    c.timer = undefined;
    if (c.running) this.append(c.errors, `[cog-${id}] stop`);
    c.running = false;
    c.pid = null;
  }

  /** Uninstalls a cog: stopped, its logs and local config lost. */
  uninstall(id: string): void {
    this.stop(id);
    this.cogs.delete(id);
  }

  logs(id: string, lines: number): { output: string[]; errors: string[] } {
    const c = this.get(id);
    return { output: c.output.slice(-lines), errors: c.errors.slice(-lines) };
  }

  manifest(id: string): SimManifest {
    return this.get(id).manifest;
  }

  config(id: string): Record<string, SimConfigValue> {
    return { ...this.get(id).config };
  }

  /** Merges `values` into the cog's config after checking each against the manifest's `[config]`. */
  mergeConfig(id: string, values: Record<string, unknown>): Record<string, SimConfigValue> {
    const c = this.get(id);
    c.config = checkConfig(c.manifest, c.config, values);
    return { ...c.config };
  }

  /**
   * One console cycle of `id` with `command` (one of the manifest's `allowed_commands`, else 400). The
   * cycle needs the sensor feed (UDP 5006): when any running cog holds it, the run silently falls back
   * to synthetic data and logs the warning line on its errors (no API error, as cog-sensor-sources does).
   */
  console(id: string, command: string, fail: string | undefined): SimConsoleRun {
    const c = this.get(id);
    if (!c.manifest.console.allowed_commands.includes(command)) {
      throw new SimRefusal(
        400,
        `command not allowed for ${id}: allowed_commands are ${c.manifest.console.allowed_commands.join(', ')}`,
      );
    }
    if (fail !== undefined) return { output: [], errors: [`[cog-${id}] ${fail}`], exit_code: 1 };
    if (command === '--help') {
      return {
        output: [
          `usage: cog-${id}-arm [--once] [--interval N] [--help]`,
          'JSON lines on stdout; errors on stderr',
        ],
        errors: [],
        exit_code: 0,
      };
    }
    const taken = this.feedHeldOutside || this.runningIds().length > 0;
    c.reading += 1;
    const line = JSON.stringify({ cog: id, reading: c.reading, source: taken ? 'synthetic' : 'csi' });
    return { output: [line], errors: taken ? [SYNTHETIC_WARNING] : [], exit_code: 0 };
  }

  list(): Array<{ id: string; version: string; running: boolean; pid?: number; has_binary: boolean }> {
    return [...this.cogs.values()].map((c) => ({
      id: c.id,
      version: c.version,
      running: c.running,
      ...(c.pid === null ? {} : { pid: c.pid }),
      has_binary: true,
    }));
  }

  snapshot(): SimInstalledCog[] {
    return [...this.cogs.values()].map((c) => ({
      id: c.id,
      version: c.version,
      running: c.running,
      pid: c.pid,
      config: { ...c.config },
    }));
  }

  /** Stops every ticker (the simulator is closing). */
  shutdown(): void {
    this.closed = true;
    for (const c of this.cogs.values()) if (c.timer !== undefined) clearInterval(c.timer);
  }

  /** The feed a running cog reads: the first running cog holds UDP 5006, the others run on synthetic data. */
  private feedOf(id: string): 'csi' | 'synthetic' {
    return this.runningIds()[0] === id ? 'csi' : 'synthetic';
  }

  private append(lines: string[], line: string): void {
    lines.push(line);
    if (lines.length > MAX_LOG_LINES) lines.splice(0, lines.length - MAX_LOG_LINES);
  }
}

/** Checks `values` against the manifest's `[config]` (type, min/max, allowed) and merges them into `into`. */
function checkConfig(
  manifest: SimManifest,
  into: Record<string, SimConfigValue>,
  values: Record<string, unknown>,
): Record<string, SimConfigValue> {
  const out = { ...into };
  for (const [key, value] of Object.entries(values)) {
    const knob = Object.hasOwn(manifest.config, key) ? manifest.config[key] : undefined;
    if (knob === undefined) throw new SimRefusal(400, `config: unknown key ${JSON.stringify(key)}`);
    const bad = (why: string): never => {
      throw new SimRefusal(400, `config.${key}: ${why}`);
    };
    if (knob.type === 'boolean') {
      if (typeof value !== 'boolean') bad('expected a boolean');
    } else if (knob.type === 'string') {
      if (typeof value !== 'string') bad('expected a string');
      // cast: the knob type check above said it is a string
      if (knob.allowed !== undefined && !knob.allowed.includes(value as string)) {
        bad(`expected one of ${knob.allowed.join(', ')}`);
      }
    } else {
      if (typeof value !== 'number' || !Number.isFinite(value)) bad(`expected a ${knob.type}`);
      // cast: the knob type check above said it is a number
      const n = value as number;
      if (knob.type === 'integer' && !Number.isInteger(n)) bad('expected an integer');
      if (knob.min !== undefined && n < knob.min) bad(`at least ${knob.min}`);
      if (knob.max !== undefined && n > knob.max) bad(`at most ${knob.max}`);
    }
    // cast: checked against its knob type above
    out[key] = value as SimConfigValue;
  }
  return out;
}
