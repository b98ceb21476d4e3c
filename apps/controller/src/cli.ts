import { type CommandDef, dispatchCli, type ProgramDef } from '@heddle/cli-kit';
import { CONTEXT_GROUP, OPERATOR_GROUP, WHOAMI } from './defs/access.js';
import { APPROVALS_GROUP } from './defs/approvals.js';
import { EVENTS } from './defs/events.js';
import { ALERTS_GROUP, LOGS, PLACE, PS, START, STATUS, STOP, UNLOAD } from './defs/instances.js';
import { JOB_GROUP } from './defs/jobs.js';
import { CONTROLLER, ID, INIT, KEYGEN } from './defs/local.js';
import { NODE_GROUP } from './defs/node.js';
import { POLICY } from './defs/policy.js';
import { STATE } from './defs/state.js';
import { CHAIN, PKG, REVOKE } from './defs/tools.js';
import { type CliIo, processIo } from './io.js';
import { VERSION } from './version.js';

type Command = (args: readonly string[], io: CliIo) => number | Promise<number>;

/** A command of `heddle`: its definition, and its code, loaded only when it runs. */
export interface Entry extends CommandDef {
  readonly load: () => Promise<Command>;
}

const entry = (def: CommandDef, load: () => Promise<Command>): Entry => ({ ...def, load });

// Each command's module is loaded only when that command runs, so `heddle ps` does not pay for the
// daemon, the package builder or the state store, and `--help` (rendered from the definitions, which
// are data) loads none of them.
const COMMANDS: readonly Entry[] = [
  entry(INIT, async () => (await import('./commands/init.js')).init),
  entry(CONTROLLER, async () => (await import('./commands/controller.js')).controller),
  entry(NODE_GROUP, async () => (await import('./commands/node.js')).node),
  // `heddle place` sends its order first (when it can: place-early.ts), then loads the command and its
  // validating client while the daemon works.
  entry(PLACE, async () => {
    const { placeEarly } = await import('./place-early.js');
    return async (args, io) => {
      const early = placeEarly(args, io);
      return (await import('./commands/place.js')).place(args, io, early);
    };
  }),
  entry(PS, async () => (await import('./commands/ps.js')).ps),
  entry(ALERTS_GROUP, async () => (await import('./commands/alerts.js')).alerts),
  entry(EVENTS, async () => (await import('./commands/events.js')).events),
  entry(APPROVALS_GROUP, async () => (await import('./commands/approvals.js')).approvals),
  entry(JOB_GROUP, async () => (await import('./commands/job.js')).job),
  entry(STATUS, async () => (await import('./commands/status.js')).status),
  entry(LOGS, async () => (await import('./commands/logs.js')).logs),
  entry(START, async () => (await import('./commands/instance.js')).start),
  entry(STOP, async () => (await import('./commands/instance.js')).stop),
  entry(UNLOAD, async () => (await import('./commands/instance.js')).unload),
  entry(KEYGEN, async () => (await import('./commands/keygen.js')).keygen),
  entry(ID, async () => (await import('./commands/id.js')).id),
  entry(CHAIN, async () => (await import('./commands/chain.js')).chain),
  entry(STATE, async () => (await import('./commands/state.js')).state),
  entry(PKG, async () => (await import('./commands/pkg.js')).pkg),
  entry(REVOKE, async () => (await import('./commands/revoke.js')).revoke),
  entry(POLICY, async () => (await import('./commands/policy.js')).policy),
  entry(CONTEXT_GROUP, async () => (await import('./commands/context.js')).context),
  entry(OPERATOR_GROUP, async () => (await import('./commands/operators.js')).operator),
  entry(WHOAMI, async () => (await import('./commands/operators.js')).whoami),
];

/** `heddle` as its help, its dispatcher and its completion see it. */
export const PROGRAM: ProgramDef<Entry> = {
  name: 'heddle',
  version: VERSION,
  summary: 'place signed, governed workloads onto edge nodes',
  usage: '<command> [arguments] [--json]',
  commands: COMMANDS,
  exits: { 0: 'ok', 1: 'check failed', 2: 'usage error', 3: 'bad input', 4: 'internal error' },
  docs: 'docs/cli.md',
};

/**
 * Runs the CLI with `argv` (without the node and script paths) and returns the exit code. Never
 * throws: every failure is printed to standard error (as `{"error":{code,message}}` with `--json`).
 */
export function runCli(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  return dispatchCli(argv, io, {
    program: PROGRAM,
    run: async (command, args) => (await command.load())(args, io),
  });
}
