import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { positional, requiredString } from '@heddle/cli-kit';
import { loadKeyFile, parsePublicKey, readTextBounded, toHex } from '@heddle/envelope';
import { ROLES } from '@heddle/operator-api';
import { ExitCode, usageError } from '../cli-error.js';
import { badValue, choiceFlag } from '../command-def.js';
import { OPERATOR_ADD, OPERATOR_LS, OPERATOR_RM, WHOAMI } from '../defs/access.js';
import { table } from '../format/table.js';
import type { CliIo } from '../io.js';
import { runOperator } from '../operator.js';

const USAGE = 'usage: heddle operator add|ls|rm ... (heddle operator <sub> --help shows each)';

/** `heddle operator add|ls|rm`: who may use the operator API, in which role (admin). */
export function operator(args: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'add':
      return runOperator(OPERATOR_ADD, rest, io, async (ctx) => {
        const name = positional(ctx.parsed, 0);
        const role = choiceFlag('role', requiredString(ctx.parsed, 'role'), ROLES);
        const keyText = ctx.parsed.strings.key;
        const wantsToken = ctx.parsed.booleans.token === true;
        if ((keyText === undefined) === !wantsToken)
          throw usageError('heddle operator add: give exactly one of --key and --token', 'key');
        const r = await ctx
          .client()
          .addOperator(
            keyText === undefined
              ? { name, role, token: true }
              : { name, role, public_key: publicKeyOf(keyText, ctx.io.cwd) },
          );
        ctx.emit(r, () => [
          `added operator ${r.operator.name} as ${r.operator.role} (${r.operator.kind === 'key' ? `key ${r.operator.public_key ?? ''}` : 'token'})`,
          ...(r.token === undefined ? [] : [`token (shown once; keep it in a 0600 file): ${r.token}`]),
        ]);
        return ExitCode.ok;
      });
    case 'ls':
    case 'list':
      return runOperator(OPERATOR_LS, rest, io, async (ctx) => {
        const operators = await ctx.client().operators();
        ctx.emit({ operators }, () =>
          operators.length === 0
            ? ['no operators (the home’s api.token is an admin); add one with heddle operator add']
            : table(
                ['NAME', 'ROLE', 'AUTH', 'KEY'],
                operators.map((o) => [o.name, o.role, o.kind, o.public_key ?? '-']),
              ),
        );
        return ExitCode.ok;
      });
    case 'rm':
    case 'remove':
      return runOperator(OPERATOR_RM, rest, io, async (ctx) => {
        const o = await ctx.client().removeOperator(positional(ctx.parsed, 0));
        ctx.emit({ operator: o }, () => [`removed operator ${o.name} (${o.role})`]);
        return ExitCode.ok;
      });
    default:
      return Promise.reject(usageError(USAGE));
  }
}

/** `heddle whoami`: the operator the controller takes this CLI for. */
export function whoami(args: readonly string[], io: CliIo): Promise<number> {
  return runOperator(WHOAMI, args, io, async (ctx) => {
    const me = await ctx.client().whoami();
    ctx.emit(me, () => [
      `${me.name} (${me.role}, by ${me.via}${me.key === undefined ? '' : ` ${me.key}`}) at ${ctx.client().url}`,
    ]);
    return ExitCode.ok;
  });
}

/** An operator's public key from `--key`: 64 hex, or a file holding it (hex or PEM), or a key file. */
function publicKeyOf(text: string, cwd: string): string {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return text.toLowerCase();
  const path = resolve(cwd, text);
  if (!existsSync(path))
    throw badValue('key', `--key: ${JSON.stringify(text)} is neither 64 hex characters nor a file`);
  try {
    return toHex(parsePublicKey(readTextBounded(path, 64 * 1024)));
  } catch {
    try {
      return toHex(loadKeyFile(path).publicKey);
    } catch (err) {
      throw badValue(
        'key',
        `--key: ${path} holds no Ed25519 public key nor key file (${err instanceof Error ? err.message : String(err)})`,
      );
    }
  }
}
