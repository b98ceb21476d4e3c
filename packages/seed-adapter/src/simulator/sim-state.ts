import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { CogConfig, InstalledCog, PairStatus, StoreCog } from '../seed-api.js';
import type { SimInstalledCog } from './sim-types.js';

/** A refusal the simulator answers as `{error}` with an HTTP status. */
export class SimRefusal extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'SimRefusal';
    this.status = status;
  }
}

interface CogState {
  readonly id: string;
  readonly version: string;
  running: boolean;
  pid: number | null;
  config: CogConfig;
  readonly output: string[];
  readonly errors: string[];
  reading: number;
  timer: NodeJS.Timeout | undefined;
}

const MAX_LOG_LINES = 10_000;

/** Settings of {@link SimState}. */
export interface SimStateSettings {
  readonly catalog: readonly StoreCog[];
  readonly cap: number;
  readonly tickMs: number;
  readonly pairWindowSecs: number;
  readonly tokens: readonly string[];
}

/** The simulated Seed's state: store, installed cogs, their logs, paired tokens and the pairing window. */
export class SimState {
  catalog: readonly StoreCog[];
  autoStart = true;
  readonly cap: number;
  private readonly tickMs: number;
  private readonly pairWindowSecs: number;
  private readonly cogs = new Map<string, CogState>();
  private tokens: Buffer[] = [];
  private closed = false;
  private windowUntil = 0;
  private nextPid = 1000;
  private readonly bootedAt = Date.now();

  constructor(s: SimStateSettings) {
    this.catalog = s.catalog;
    this.cap = s.cap;
    this.tickMs = s.tickMs;
    this.pairWindowSecs = s.pairWindowSecs;
    for (const t of s.tokens) this.tokens.push(Buffer.from(t));
  }

  uptimeSecs(): number {
    return Math.floor((Date.now() - this.bootedAt) / 1000);
  }

  /** `valid` for a paired token, `unknown` otherwise (compared in constant time per token). */
  checkToken(token: string): 'valid' | 'unknown' {
    const b = Buffer.from(token);
    const ok = this.tokens.some((t) => t.length === b.length && timingSafeEqual(t, b));
    return ok ? 'valid' : 'unknown';
  }

  addToken(): string {
    const token = randomBytes(24).toString('base64url');
    this.tokens.push(Buffer.from(token));
    return token;
  }

  /** Forgets one paired token (or all of them): the Seed answers 403 to it from then on. */
  revoke(token?: string): void {
    this.tokens = token === undefined ? [] : this.tokens.filter((t) => !t.equals(Buffer.from(token)));
  }

  openWindow(): void {
    this.windowUntil = Date.now() + this.pairWindowSecs * 1000;
  }

  closeWindow(): void {
    this.windowUntil = 0;
  }

  pairStatus(): PairStatus {
    const left = Math.max(0, Math.ceil((this.windowUntil - Date.now()) / 1000));
    return { window_open: left > 0, window_secs_left: left, paired_clients: this.tokens.length };
  }

  /** Pairs while the window is open; refuses (403) otherwise. */
  pair(): string {
    if (!this.pairStatus().window_open) throw new SimRefusal(403, 'pairing window is closed');
    return this.addToken();
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
    if (c === undefined) throw new SimRefusal(404, `cog ${id} is not installed`);
    return c;
  }

  /** Refuses (409) when one more running cog would exceed the cap. */
  checkCap(what: string): void {
    const running = this.runningIds();
    if (running.length >= this.cap) {
      throw new SimRefusal(
        409,
        `${what} refused: concurrency cap ${this.cap} reached (running: ${running.join(', ')})`,
      );
    }
  }

  /** Installs the store cog as it is listed now (auto-starting it unless auto-start is off). */
  install(cog: StoreCog): InstalledCog {
    if (this.cogs.has(cog.id)) throw new SimRefusal(409, `cog ${cog.id} is already installed`);
    if (this.autoStart) this.checkCap(`install of ${cog.id}`);
    const state: CogState = {
      id: cog.id,
      version: cog.version,
      running: false,
      pid: null,
      config: { interval_ms: this.tickMs, enabled: true },
      output: [],
      errors: [],
      reading: 0,
      timer: undefined,
    };
    this.cogs.set(cog.id, state);
    if (this.autoStart) this.start(cog.id);
    return this.view(state);
  }

  start(id: string): InstalledCog {
    const c = this.get(id);
    if (c.running) return this.view(c);
    this.checkCap(`start of ${id}`);
    c.running = true;
    c.pid = this.nextPid++;
    this.append(c, JSON.stringify({ cog: id, event: 'started', version: c.version }));
    if (this.closed) return this.view(c);
    c.timer = setInterval(() => {
      c.reading += 1;
      this.append(c, JSON.stringify({ cog: id, reading: c.reading }));
    }, this.tickMs);
    c.timer.unref();
    return this.view(c);
  }

  stop(id: string): InstalledCog {
    const c = this.get(id);
    if (c.timer !== undefined) clearInterval(c.timer);
    c.timer = undefined;
    if (c.running) this.append(c, JSON.stringify({ cog: id, event: 'stopped' }));
    c.running = false;
    c.pid = null;
    return this.view(c);
  }

  uninstall(id: string): void {
    this.stop(id);
    this.cogs.delete(id);
  }

  logs(id: string, lines: number): { output: string[]; errors: string[] } {
    const c = this.get(id);
    return { output: c.output.slice(-lines), errors: c.errors.slice(-lines) };
  }

  nextReading(id: string): number {
    const c = this.get(id);
    c.reading += 1;
    return c.reading;
  }

  setConfig(id: string, config: CogConfig): CogConfig {
    const c = this.get(id);
    c.config = { ...config };
    return c.config;
  }

  list(): InstalledCog[] {
    return [...this.cogs.values()].map((c) => this.view(c));
  }

  snapshot(): SimInstalledCog[] {
    return [...this.cogs.values()].map((c) => ({ ...this.view(c), config: { ...c.config } }));
  }

  /** Stops every ticker (the simulator is closing). */
  shutdown(): void {
    this.closed = true;
    for (const c of this.cogs.values()) if (c.timer !== undefined) clearInterval(c.timer);
  }

  private view(c: CogState): InstalledCog & { pid: number | null } {
    return { id: c.id, version: c.version, running: c.running, pid: c.pid };
  }

  private append(c: CogState, line: string): void {
    c.output.push(line);
    if (c.output.length > MAX_LOG_LINES) c.output.splice(0, c.output.length - MAX_LOG_LINES);
  }
}
