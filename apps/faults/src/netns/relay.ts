// The harness's side of the relay process (relay-main.ts): starts it inside a namespace and sends it
// commands. Every controller-to-host connection of a namespace cluster goes through it (the
// controller is given `ws://127.0.0.1:<8000+i>/` for host i), and so does the operator API as seen
// from the root namespace (`<controller address>:7071` to its loopback 7070).
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { RelayMode, RelayStats } from './relay-main.js';

const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const MAIN = fileURLToPath(new URL('./relay-main.ts', import.meta.url));

/** The outcome of a TCP connect from the relay's namespace. */
export interface ProbeResult {
  /** `connected`, `refused` (a reset came back), `timeout` (silence), `unreachable` (EHOSTUNREACH ...). */
  readonly result: 'connected' | 'refused' | 'reset' | 'timeout' | 'unreachable';
  readonly ms: number;
  /** When the relay started the connect (epoch ms, the relay's own clock: the same machine's). */
  readonly sentAt: number;
  readonly code?: string;
}

/** A running relay process (see the file comment). */
export class Relay {
  readonly proc: ChildProcess;
  #seq = 0;
  readonly #pending = new Map<
    number,
    { resolve: (v: Record<string, unknown>) => void; reject: (e: Error) => void }
  >();
  stderr = '';

  private constructor(proc: ChildProcess) {
    this.proc = proc;
    createInterface({ input: proc.stdout ?? process.stdin }).on('line', (line) => {
      let m: Record<string, unknown>;
      try {
        // cast: one JSON object per line from relay-main.ts.
        m = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      const p = typeof m.seq === 'number' ? this.#pending.get(m.seq) : undefined;
      if (p === undefined) return;
      this.#pending.delete(m.seq as number); // cast: checked to be a number just above
      if (m.ok === true) p.resolve(m);
      else p.reject(new Error(`relay: ${String(m.error)}`));
    });
    proc.stderr?.on('data', (d: Buffer) => {
      this.stderr = (this.stderr + d.toString()).slice(-4000);
    });
    proc.on('exit', () => {
      for (const p of this.#pending.values()) p.reject(new Error(`the relay exited: ${this.stderr}`));
      this.#pending.clear();
    });
  }

  /** Starts the relay inside namespace `ns`; resolves once it is ready. */
  static async start(ns: string): Promise<Relay> {
    const proc = spawn('ip', ['netns', 'exec', ns, process.execPath, '--import', tsx, MAIN], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const r = new Relay(proc);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the relay did not start: ${r.stderr}`)), 60_000);
      const onLine = (d: Buffer): void => {
        if (d.toString().includes('"listening"')) {
          clearTimeout(timer);
          proc.stdout?.off('data', onLine);
          resolve();
        }
      };
      proc.stdout?.on('data', onLine);
      proc.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the relay exited (${code}): ${r.stderr}`));
      });
    });
    return r;
  }

  #send(msg: Record<string, unknown>): Promise<Record<string, unknown>> {
    const seq = ++this.#seq;
    return new Promise((resolve, reject) => {
      this.#pending.set(seq, { resolve, reject });
      this.proc.stdin?.write(`${JSON.stringify({ seq, ...msg })}\n`);
    });
  }

  /** A listener `id` on host:port (0: any) forwarding to `target` (`addr:port`); resolves with its port. */
  async listen(id: string, host: string, port: number, target: string): Promise<number> {
    const r = await this.#send({ op: 'listen', id, host, port, target });
    return Number(r.port);
  }

  /** Sets the impairment of listener `id` (all zero: plain forwarding). */
  async mode(id: string, mode: Partial<RelayMode>): Promise<void> {
    await this.#send({ op: 'mode', id, mode });
  }

  /** Listener `id`'s cumulative counters. */
  async stats(id: string): Promise<RelayStats> {
    const r = await this.#send({ op: 'stats', id });
    // cast: relay-main.ts answers its RelayStats as is.
    return r.stats as RelayStats;
  }

  /** Connects to `target` from the relay's namespace, waiting at most `timeoutMs`. */
  async probe(target: string, timeoutMs = 1500): Promise<ProbeResult> {
    const r = await this.#send({ op: 'probe', target, timeoutMs });
    // cast: relay-main.ts answers a ProbeResult's fields.
    return {
      result: r.result as ProbeResult['result'],
      ms: Number(r.ms),
      sentAt: Number(r.sentAt),
      ...(typeof r.code === 'string' ? { code: r.code } : {}),
    };
  }

  /** An echo server on host:port (0: any) in the relay's namespace; resolves with its port. */
  async serveEcho(host: string, port: number): Promise<number> {
    return Number((await this.#send({ op: 'serve', host, port })).port);
  }

  /** Opens connection `id` to `target` and holds it: `connected` or `timeout`. */
  async open(id: string, target: string, timeoutMs = 1500): Promise<string> {
    return String((await this.#send({ op: 'open', id, target, timeoutMs })).result);
  }

  /**
   * Writes one byte on held connection `id` and waits for the echo: `echoed`, `timeout` (silence) or
   * `closed`; with every event the connection saw so far (`error ECONNRESET`, `close`, ...).
   */
  async ping(id: string, timeoutMs = 1500): Promise<{ result: string; ms: number; events: string[] }> {
    const r = await this.#send({ op: 'ping', id, timeoutMs });
    // cast: relay-main.ts answers events as a list of strings.
    return { result: String(r.result), ms: Number(r.ms), events: (r.events as string[] | undefined) ?? [] };
  }

  /** Ends the relay (SIGKILL) and waits for it. */
  async close(): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    const gone = new Promise((r) => this.proc.once('exit', r));
    this.proc.kill('SIGKILL');
    await gone;
  }
}
