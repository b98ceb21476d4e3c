import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SeedSimulator, selfSignedCert } from '@heddle/seed-adapter';
import { expect } from 'vitest';
import { type CliRun, runCaptured } from './test-io.js';

/** A CLI runner bound to one profile directory that keeps every output, to check none holds a secret. */
export class ProfileRunner {
  readonly outputs: CliRun[] = [];

  constructor(readonly home: string) {}

  /** Runs `heddle-seed <argv> --home <home>` (the flags go before a `--` in argv). */
  async run(...argv: string[]): Promise<CliRun> {
    const r = await runCaptured(withFlags(argv, ['--home', this.home]), this.home);
    this.outputs.push(r);
    return r;
  }

  /** Runs with `--json`, expects `code`, and returns stdout parsed (or the stderr error on failure). */
  async json(code: number, ...argv: string[]): Promise<Record<string, unknown>> {
    const r = await this.run(...withFlags(argv, ['--json']));
    if (r.code !== code)
      throw new Error(`heddle-seed ${argv.join(' ')}: exit ${r.code}, expected ${code}\n${r.out}\n${r.err}`);
    // cast: a test reads the CLI's --json output loosely; the tests assert its fields
    if (code === 0) return JSON.parse(r.out) as Record<string, unknown>;
    return (JSON.parse(r.err) as { error: Record<string, unknown> }).error;
  }

  /** The stored token (read from the profile, for asserting it is never printed). */
  token(): string {
    return readFileSync(join(this.home, 'token'), 'utf8').trim();
  }

  /** Asserts that no stdout or stderr of any run so far contains `secret`. */
  assertNeverPrinted(secret: string): void {
    expect(secret.length).toBeGreaterThanOrEqual(8);
    for (const r of this.outputs) {
      expect(r.out).not.toContain(secret);
      expect(r.err).not.toContain(secret);
    }
  }
}

/** An HTTPS simulator with a fresh self-signed certificate (short installs, quick ticks). */
export function httpsSimulator(): Promise<SeedSimulator> {
  return SeedSimulator.start({ https: selfSignedCert('seed'), installDelayMs: 50, tickMs: 50 });
}

/** `argv` with `flags` added at its end, or before its `--` when it has one. */
function withFlags(argv: readonly string[], flags: readonly string[]): string[] {
  const end = argv.indexOf('--');
  return end < 0 ? [...argv, ...flags] : [...argv.slice(0, end), ...flags, ...argv.slice(end)];
}
