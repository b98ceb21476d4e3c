import { type CommandDef, positional } from '@heddle/cli-kit';
import { cogId, intFlag, parseSeedArgs, type SeedArgs } from '../args.js';
import { ExitCode } from '../cli-error.js';
import { LOGS, RM, START, STOP } from '../command-defs.js';
import { evidenceJson, evidenceLines } from '../evidence-view.js';
import { adoptOne, chainRecord, openGoverned } from '../governed.js';
import { forgetInstance, readInstalled } from '../installed-file.js';
import { type CliIo, emit } from '../io.js';
import { openSession } from '../session.js';

/** Grace period handed to the adapter on stop (the Seed stops a cog its own way). */
export const STOP_GRACE_MS = 5000;

function oneId(def: CommandDef, args: readonly string[]): { id: string; a: SeedArgs } {
  const a = parseSeedArgs(def, args);
  return { id: cogId(positional(a, 0)), a };
}

/** `heddle-seed start <id>`: starts a cog this tool loaded (gated, chained; the pin and the cap checked). */
export async function start(args: readonly string[], io: CliIo): Promise<number> {
  const { id, a } = oneId(START, args);
  const g = await openGoverned(a.home, io);
  try {
    const h = await adoptOne(g, id);
    await g.host.start(h);
    const st = await g.host.status(h);
    emit(io, a.json, { id, instance_id: h.instanceId, state: st.state }, () => [
      `started ${id} (${st.state})`,
    ]);
    return ExitCode.ok;
  } finally {
    await g.close();
  }
}

/** `heddle-seed stop <id>`: stops a cog this tool loaded (gated, chained) and prints the evidence. */
export async function stop(args: readonly string[], io: CliIo): Promise<number> {
  const { id, a } = oneId(STOP, args);
  const g = await openGoverned(a.home, io);
  try {
    const h = await adoptOne(g, id);
    const e = await g.host.stop(h, STOP_GRACE_MS);
    emit(io, a.json, { id, evidence: evidenceJson(e) }, () => evidenceLines('stopped', e));
    return ExitCode.ok;
  } finally {
    await g.close();
  }
}

/**
 * `heddle-seed rm <id>`: unloads a cog this tool loaded (gated, chained): stops it, and uninstalls it
 * only when this tool installed it (a cog that was already on the Seed stays installed). A recorded
 * install (`pending`) whose cog the Seed does not list is dropped (nothing was installed, chained as
 * `seed.intent_dropped`); one the Seed lists, at any version, is unloaded and uninstalled.
 */
export async function rm(args: readonly string[], io: CliIo): Promise<number> {
  const { id, a } = oneId(RM, args);
  const g = await openGoverned(a.home, io);
  try {
    const entry = readInstalled(g.home).find((h) => h.workloadId === id);
    if (entry?.pending === true && !(await g.client.installed()).some((c) => c.id === id)) {
      forgetInstance(g.home, id);
      await chainRecord(g.chain, 'seed.intent_dropped', { id, instance_id: entry.instanceId });
      emit(io, a.json, { id, instance_id: entry.instanceId, uninstalled: false, installed: false }, () => [
        `removed ${id} (its recorded install never reached the Seed: nothing to uninstall)`,
      ]);
      return ExitCode.ok;
    }
    const h = await adoptOne(g, id);
    await g.host.unload(h);
    forgetInstance(g.home, id);
    const uninstalled = h.storeInstalled === true;
    emit(io, a.json, { id, instance_id: h.instanceId, uninstalled, installed: true }, () => [
      uninstalled
        ? `removed ${id} (uninstalled: heddle-seed installed it)`
        : `removed ${id} (left installed: it was on the Seed before heddle-seed loaded it)`,
    ]);
    return ExitCode.ok;
  } finally {
    await g.close();
  }
}

/**
 * `heddle-seed logs <id> [--lines N]`: the cog's last output and error lines, read from the Seed
 * (read-only: not gated, not chained; any installed cog).
 */
export async function logs(args: readonly string[], io: CliIo): Promise<number> {
  const { id, a } = oneId(LOGS, args);
  const lines = intFlag(a, 'lines', 1, 10_000, 100);
  const s = openSession(a.home, io, 'required');
  const l = await s.client.logs(id, lines);
  emit(io, a.json, { id, output: l.output, errors: l.errors }, () => [
    ...l.output,
    ...l.errors.map((e) => `[error] ${e}`),
  ]);
  return ExitCode.ok;
}
