import { errorMessage, positional, synopsis } from '@heddle/cli-kit';
import type { RunEvidence } from '@heddle/runtime';
import { SYNTHETIC_FEED_NOTE } from '@heddle/seed-adapter';
import { cogId, parseSeedArgs } from '../args.js';
import { CliError, ExitCode, toCliError } from '../cli-error.js';
import { CONSOLE } from '../command-defs.js';
import { evidenceJson, evidenceLines } from '../evidence-view.js';
import { adoptAll, adoptOne, type Governed, openGoverned } from '../governed.js';
import { readInstalled } from '../installed-file.js';
import { type CliIo, emit } from '../io.js';

/** The usage of `console`. */
export const CONSOLE_USAGE: string = synopsis('heddle-seed', CONSOLE);

/**
 * `heddle-seed console <id> [--] <command>...`: runs one console command the operator pinned for the
 * cog (the words after the id, joined by single spaces; after `--` words that begin with `--` are the
 * command's, so `console air-quality -- --once --interval 1` sends `--once --interval 1`), through the
 * WorkloadHost: every running cog holds the sensor feed, so each is gated and preempted (stopped), the
 * command runs, and each is resumed; all of it chained. Prints the evidence. Exit 1 (`synthetic_feed`)
 * when the run read synthetic data instead of the feed; exit 1 (`not_resumed`) when a cog is left
 * stopped (a resume that failed or was denied, a Seed that went away): each is named with how to
 * start it. An unpinned command is refused
 * (`invalid_config`, exit 3).
 */
export async function consoleCommand(args: readonly string[], io: CliIo): Promise<number> {
  const a = parseSeedArgs(CONSOLE, args);
  const id = cogId(positional(a, 0));
  const command = a.positionals.slice(1).join(' ');
  const g = await openGoverned(a.home, io);
  try {
    const h = await adoptOne(g, id);
    await adoptAll(g, io, id);
    const before = (await g.client.installed()).filter((c) => c.running).map((c) => c.id);
    let e: RunEvidence;
    try {
      e = await g.host.console(h, command);
    } catch (err) {
      const left = await leftStopped(g, before);
      if (left === '') throw err;
      const c = toCliError(err);
      throw new CliError(
        c.code,
        `${c.message}\n${left}`,
        c.exitCode,
        c.field ? { field: c.field } : undefined,
      );
    }
    emit(io, a.json, { id, command, evidence: evidenceJson(e) }, () => evidenceLines('console', e));
    const left = await leftStopped(g, before);
    if (left !== '') {
      io.err(`heddle-seed: not_resumed: ${left}`);
      return ExitCode.failed;
    }
    const synthetic = e.notes.find((n) => n.startsWith(`${SYNTHETIC_FEED_NOTE}:`));
    if (synthetic !== undefined) {
      io.err(
        `heddle-seed: synthetic_feed: the console run read synthetic data, not the sensor feed (${synthetic.slice(SYNTHETIC_FEED_NOTE.length + 2)}); something else holds UDP 5006: stop it and run again`,
      );
      return ExitCode.failed;
    }
    return e.exitCode === null || e.exitCode === 0 ? ExitCode.ok : ExitCode.failed;
  } finally {
    await g.close();
  }
}

/**
 * Which of the cogs that ran before the console run are not running now, with how to start each; ''
 * when all run again. When the Seed cannot be read, all of them are named as possibly stopped.
 */
async function leftStopped(g: Governed, before: readonly string[]): Promise<string> {
  if (before.length === 0) return '';
  const mine = new Set(readInstalled(g.home).map((x) => x.workloadId));
  const how = (id: string): string =>
    mine.has(id)
      ? `${id} (start it: heddle-seed start ${id})`
      : `${id} (not loaded by heddle-seed: start it on the Seed, POST /api/v1/apps/${id}/start)`;
  let running: string[];
  try {
    running = (await g.client.installed()).filter((c) => c.running).map((c) => c.id);
  } catch (err) {
    return `the Seed cannot be read now (${errorMessage(err).slice(0, 200)}); these cogs were stopped for the console run and may still be stopped: ${before.map(how).join(', ')}`;
  }
  const stopped = before.filter((id) => !running.includes(id));
  if (stopped.length === 0) return '';
  return `stopped for the console run and not running now: ${stopped.map(how).join(', ')}`;
}
