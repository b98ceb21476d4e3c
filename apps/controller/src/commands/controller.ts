import { join } from 'node:path';
import { errorFields, Logger, runUntilSignal } from '@heddle/cli-kit';
import { parseCommandArgs } from '../args.js';
import { usageError } from '../cli-error.js';
import { loadControllerConfig } from '../controller-config.js';
import { type RunningController, startController } from '../daemon.js';
import { CONTROLLER_CONFIG_FILE, homeDir } from '../home.js';
import type { CliIo } from '../io.js';

const USAGE = 'run [--home D] [--accept-state-loss] [--accept-chain-loss]';

/**
 * `heddle controller run [--home D] [--accept-state-loss] [--accept-chain-loss]`: runs the controller
 * daemon until SIGTERM or SIGINT (graceful shutdown, exit 0). Logs one JSON object per line to
 * standard output. A config that cannot be used is refused before anything listens (exit 3, the field
 * named), and so is a state database behind the chain or a chain behind the state, unless the
 * matching `--accept-*` flag accepts the loss (see `state-seal.ts`).
 */
export async function controller(args: readonly string[], io: CliIo): Promise<number> {
  const { flags, positionals } = parseCommandArgs(
    'controller',
    args,
    { home: 'string', 'accept-state-loss': 'boolean', 'accept-chain-loss': 'boolean' },
    {
      min: 1,
      max: 1,
      names: USAGE,
    },
  );
  if (positionals[0] !== 'run') throw usageError(`usage: heddle controller ${USAGE}`);
  const home = homeDir(flags.home as string | undefined, io);
  const log = new Logger((line) => io.out(line));
  let running: RunningController;
  try {
    const config = loadControllerConfig(join(home, CONTROLLER_CONFIG_FILE));
    running = await startController(config, log, {
      acceptStateLoss: flags['accept-state-loss'] === true,
      acceptChainLoss: flags['accept-chain-loss'] === true,
    });
  } catch (err) {
    log.error('refusing to start', errorFields(err));
    throw err;
  }
  return runUntilSignal((signal) => running.stop(signal), log);
}
