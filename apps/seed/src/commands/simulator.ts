import { SeedSimulator, selfSignedCert } from '@heddle/seed-adapter';
import { intFlag, parseSeedArgs } from '../args.js';
import { badInput, ExitCode } from '../cli-error.js';
import { SIMULATOR } from '../command-defs.js';
import { type CliIo, emit } from '../io.js';
import { keyValues } from '../table.js';

/** Resolves when `signal` aborts, or (without one) on SIGINT or SIGTERM of this process. */
function interrupted(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal !== undefined) {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
      return;
    }
    const done = (): void => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    process.on('SIGINT', done);
    process.on('SIGTERM', done);
  });
}

/**
 * `heddle-seed simulator [--https] [--port N] [--host H] [--pair-window]`: runs the Seed simulator of
 * `@heddle/seed-adapter` in the foreground until interrupted, printing its URL, its certificate's SPKI
 * (with `--https`) and a pre-paired TEST token of the simulator (the only token this tool ever prints).
 */
export async function simulator(args: readonly string[], io: CliIo): Promise<number> {
  const a = parseSeedArgs(SIMULATOR, args);
  const host = a.strings.host ?? '127.0.0.1';
  if (!/^(127\.\d+\.\d+\.\d+|::1|localhost)$/.test(host)) {
    throw badInput('invalid_argument', '--host: the simulator listens on loopback only', 'host');
  }
  const port = intFlag(a, 'port', 0, 65_535, 0);
  const https = a.booleans.https === true;
  const sim = await SeedSimulator.start({
    host,
    port,
    pairWindowOpen: a.booleans['pair-window'] === true,
    ...(https ? { https: selfSignedCert('seed') } : {}),
  });
  try {
    const token = sim.addToken();
    const init = https
      ? `heddle-seed init --url ${sim.url} --pin-spki ${sim.spki ?? ''}`
      : `heddle-seed init --url ${sim.url} --allow-plain-http`;
    emit(io, a.json, { url: sim.url, spki: sim.spki ?? null, simulator_test_token: token, init }, () => [
      'Seed simulator running (Ctrl-C to stop)',
      ...keyValues([
        ['url', sim.url],
        ['spki', sim.spki ?? '- (plain http)'],
        ['simulator test token', token],
      ]),
      '',
      'The token above is the SIMULATOR’s own test token, printed for trying things out; heddle-seed never',
      'prints a real Seed’s token. To use it, pair instead (the simulator opens a window on request):',
      `  ${init} --home ./seed-sim`,
      '  heddle-seed pair --open-window --home ./seed-sim',
    ]);
    await interrupted(io.signal);
  } finally {
    await sim.close();
  }
  return ExitCode.ok;
}
