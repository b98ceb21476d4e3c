import { join } from 'node:path';
import { chooseLogLevel, errorFields, Logger, parseArgv, runUntilSignal, synopsis } from '@heddle/cli-kit';
import { usageError } from '../cli-error.js';
import { loadControllerConfig } from '../controller-config.js';
import { type RunningController, startController } from '../daemon.js';
import { CONTROLLER_RUN } from '../defs/local.js';
import { CONTROLLER_CONFIG_FILE, homeDir } from '../home.js';
import type { CliIo } from '../io.js';

/**
 * `heddle controller run [--home D] [--accept-state-loss] [--accept-chain-loss] [--log-level L]`: runs
 * the controller daemon until SIGTERM or SIGINT (graceful shutdown, exit 0). Logs one JSON object per
 * line to standard output, at `--log-level`, else the config's `log_level`, else info. A config that cannot be used is refused before anything listens (exit 3, the field
 * named), and so is a state database behind the chain or a chain behind the state, unless the
 * matching `--accept-*` flag accepts the loss (see `state-seal.ts`).
 */
export async function controller(args: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'run') throw usageError(`usage: ${synopsis('heddle', CONTROLLER_RUN)}`, 'subcommand');
  const { strings, booleans } = parseArgv('heddle', CONTROLLER_RUN, rest);
  const home = homeDir(strings.home, io);
  const flagLevel = strings['log-level'];
  const log = new Logger((line) => io.out(line), Date.now, chooseLogLevel(flagLevel, 'info'));
  let running: RunningController;
  try {
    const config = loadControllerConfig(join(home, CONTROLLER_CONFIG_FILE));
    log.level = chooseLogLevel(flagLevel, config.logLevel);
    running = await startController(config, log, {
      acceptStateLoss: booleans['accept-state-loss'] === true,
      acceptChainLoss: booleans['accept-chain-loss'] === true,
    });
  } catch (err) {
    log.error('refusing to start', errorFields(err));
    throw err;
  }
  return runUntilSignal((signal) => running.stop(signal), log);
}
