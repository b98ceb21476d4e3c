import { createHash } from 'node:crypto';
import { positional, synopsis } from '@heddle/cli-kit';
import { cogId, keyValuePairs, parseSeedArgs } from '../args.js';
import { badInput, ExitCode, usageError } from '../cli-error.js';
import { CONFIG, CONFIG_GET, CONFIG_SET } from '../command-defs.js';
import { chainRecord, openGoverned } from '../governed.js';
import { type CliIo, emit } from '../io.js';
import { pinFor } from '../pins-file.js';
import { openSession } from '../session.js';
import { keyValues } from '../table.js';

/**
 * `heddle-seed config get <id>` / `config set <id> k=v...`: reads or changes a cog's configuration on
 * the Seed. `set` only for a pinned cog, and chained (`seed.config_set` with the keys and a SHA-256 of
 * the values, never the values: they may hold credentials).
 */
export async function config(args: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'get') {
    const a = parseSeedArgs(CONFIG_GET, rest);
    const id = cogId(positional(a, 0));
    const s = openSession(a.home, io, 'required');
    const c = await s.client.getConfig(id);
    emit(io, a.json, { id, config: c }, () =>
      Object.keys(c).length === 0
        ? ['(empty)']
        : keyValues(Object.entries(c).map(([k, v]) => [k, JSON.stringify(v)])),
    );
    return ExitCode.ok;
  }
  if (sub === 'set') {
    const a = parseSeedArgs(CONFIG_SET, rest);
    const id = cogId(positional(a, 0));
    const values = keyValuePairs(a.positionals.slice(1), 'k=v');
    const g = await openGoverned(a.home, io);
    try {
      if (pinFor(g.pins, id) === undefined)
        throw badInput('not_pinned', `${id} is not pinned; only pinned cogs are configured`, 'id');
      // The Seed merges what it is sent (and checks it against the cog's manifest).
      await g.client.setConfig(id, values);
      const after = await g.client.getConfig(id);
      const digest = createHash('sha256').update(JSON.stringify(values)).digest('hex');
      await chainRecord(g.chain, 'seed.config_set', {
        cog: id,
        keys: Object.keys(values),
        values_sha256: digest,
      });
      emit(io, a.json, { id, config: after }, () => [
        `set ${Object.keys(values).join(', ')} on ${id}`,
        ...keyValues(Object.entries(after).map(([k, v]) => [k, JSON.stringify(v)])),
      ]);
      return ExitCode.ok;
    } finally {
      await g.close();
    }
  }
  throw usageError(`expected get or set\nusage: ${synopsis('heddle-seed', CONFIG)}`);
}
