import { cogId, parseCommandArgs } from '../args.js';
import { ExitCode } from '../cli-error.js';
import { evidenceJson, evidenceLines } from '../evidence-view.js';
import { adoptAll, adoptOne, openGoverned } from '../governed.js';
import { type CliIo, emit } from '../io.js';

/**
 * `heddle-seed console <id> <command>`: runs one console command the operator pinned for the cog,
 * through the WorkloadHost: every other running cog holds the sensor feed, so each is gated and
 * preempted (stopped), the command runs, and each is resumed; all of it chained. Prints the evidence.
 * An unpinned command is refused (`invalid_config`, exit 3).
 */
export async function consoleCommand(args: readonly string[], io: CliIo): Promise<number> {
  const a = parseCommandArgs(args, {
    usage: 'heddle-seed console <id> <command> [--home D] [--json]',
    flags: {},
    positionals: ['id', 'command'],
  });
  const id = cogId(a.positionals[0] ?? '');
  const command = a.positionals[1] ?? '';
  const g = await openGoverned(a.home, io);
  try {
    const h = await adoptOne(g, id);
    await adoptAll(g, io, id);
    const e = await g.host.console(h, command);
    emit(io, a.json, { id, command, evidence: evidenceJson(e) }, () => evidenceLines('console', e));
    return e.exitCode === null || e.exitCode === 0 ? ExitCode.ok : ExitCode.failed;
  } finally {
    await g.close();
  }
}
