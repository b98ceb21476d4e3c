import { SeedError } from '../errors.js';
import { selfSignedCert } from '../test-tls.js';
import { SeedSimulator } from './seed-simulator.js';

/** Parsed arguments of `heddle-seed simulator`. */
export interface SimulatorArgs {
  readonly https: boolean;
  readonly port: number;
  readonly host: string;
  readonly pairWindowOpen: boolean;
}

/** Usage of `heddle-seed simulator`. */
export const SIMULATOR_USAGE: string =
  'usage: heddle-seed simulator [--https] [--port N] [--host ADDR] [--pair-window]';

/**
 * Parses `[--https] [--port N] [--host ADDR] [--pair-window]`. Refuses anything else with
 * `SeedError('invalid_argument')`.
 */
export function parseSimulatorArgs(argv: readonly string[]): SimulatorArgs {
  let https = false;
  let port = 0;
  let host = '127.0.0.1';
  let pairWindowOpen = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--https') https = true;
    else if (a === '--pair-window') pairWindowOpen = true;
    else if (a === '--port' || a === '--host') {
      const v = argv[++i];
      if (v === undefined) throw new SeedError('invalid_argument', `${a} needs a value`, { field: a });
      if (a === '--host') host = v;
      else {
        if (!/^\d{1,5}$/.test(v) || Number(v) > 65_535) {
          throw new SeedError('invalid_argument', '--port must be 0-65535', { field: '--port' });
        }
        port = Number(v);
      }
    } else {
      throw new SeedError('invalid_argument', `unknown argument ${String(a)}; ${SIMULATOR_USAGE}`);
    }
  }
  return { https, port, host, pairWindowOpen };
}

/** What {@link runSimulatorFromArgv} started: the simulator and the pre-paired token it printed. */
export interface RunningSimulator {
  readonly simulator: SeedSimulator;
  readonly token: string;
}

/**
 * Starts a simulator for people trying the CLI without hardware (`heddle-seed simulator`): plain HTTP on
 * loopback, or HTTPS with a fresh self-signed certificate; prints the URL, the SPKI pin (HTTPS) and a
 * pre-paired token to `write` (default stdout). The caller keeps the process alive and closes the simulator.
 */
export async function runSimulatorFromArgv(
  argv: readonly string[],
  write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Promise<RunningSimulator> {
  const args = parseSimulatorArgs(argv);
  const simulator = await SeedSimulator.start({
    host: args.host,
    port: args.port,
    pairWindowOpen: args.pairWindowOpen,
    ...(args.https ? { https: selfSignedCert('seed') } : {}),
  });
  const token = simulator.addToken();
  write(`url: ${simulator.url}`);
  if (simulator.spki !== undefined) write(`spki: ${simulator.spki}`);
  write(`token: ${token}`);
  return { simulator, token };
}
