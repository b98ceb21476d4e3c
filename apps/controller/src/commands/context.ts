import { resolve } from 'node:path';
import { parseArgv, positional, requiredString } from '@heddle/cli-kit';
import { normaliseFingerprint } from '@heddle/operator-api';
import { badInput, ExitCode, usageError } from '../cli-error.js';
import { badValue } from '../command-def.js';
import {
  type ContextEntry,
  ContextEntrySchema,
  ContextNameSchema,
  contextsPath,
  readContexts,
  writeContexts,
} from '../contexts.js';
import { CONTEXT_ADD, CONTEXT_LS, CONTEXT_RM, CONTEXT_USE } from '../defs/access.js';
import { table } from '../format/table.js';
import { type CliIo, emit } from '../io.js';

const USAGE = 'usage: heddle context add|use|ls|rm ... (heddle context <sub> --help shows each)';

/**
 * `heddle context add|use|ls|rm`: the controllers this CLI talks to, by name, kept in the user's
 * contexts file (0600, written crash-safely; see `contextsPath`).
 */
export function context(args: readonly string[], io: CliIo): number {
  const [sub, ...rest] = args;
  const env = io.env ?? process.env;
  const path = contextsPath(env);
  switch (sub) {
    case 'add': {
      const p = parseArgv('heddle', CONTEXT_ADD, rest);
      const name = checkName(positional(p, 0));
      const keyFile = p.strings.key;
      const tokenFile = p.strings['token-file'];
      if ((keyFile === undefined) === (tokenFile === undefined))
        throw usageError('heddle context add: give exactly one of --key and --token-file', 'key');
      const fpText = p.strings.fingerprint;
      const fingerprint = fpText === undefined ? undefined : normaliseFingerprint(fpText);
      if (fpText !== undefined && fingerprint === undefined)
        throw badValue('fingerprint', `--fingerprint: ${JSON.stringify(fpText)} is not sha256:<64 hex>`);
      const url = requiredString(p, 'url').replace(/\/+$/, '');
      const candidate = {
        name,
        url,
        ...(fingerprint === undefined ? {} : { fingerprint }),
        ...(keyFile === undefined ? {} : { key_file: resolve(io.cwd, keyFile) }),
        ...(tokenFile === undefined ? {} : { token_file: resolve(io.cwd, tokenFile) }),
      };
      const r = ContextEntrySchema.safeParse(candidate);
      if (!r.success) {
        const issue = r.error.issues[0];
        const field = String(issue?.path[0] ?? 'url');
        throw badValue(field, `--${field.replace('_file', '')}: ${issue?.message ?? 'invalid'}`);
      }
      if (url.startsWith('https:') && fingerprint === undefined)
        io.err(
          `heddle context add: no --fingerprint: ${url}'s certificate will be checked against the system CAs`,
        );
      const file = readContexts(path);
      const held = file.contexts.find((c) => c.name === name);
      if (held !== undefined && p.booleans.force !== true)
        throw badInput('context_exists', `context ${name} exists (--force replaces it)`, 'name');
      const contexts = [...file.contexts.filter((c) => c.name !== name), r.data];
      const current = p.booleans.use === true ? name : file.current;
      writeContexts(path, { ...file, contexts, current });
      emit(io, p.booleans.json === true, { context: r.data, current, file: path }, () => [
        `added context ${name} (${url})${current === name ? ', now current' : ''} in ${path}`,
      ]);
      return ExitCode.ok;
    }
    case 'use': {
      const p = parseArgv('heddle', CONTEXT_USE, rest);
      const name = positional(p, 0);
      const file = readContexts(path);
      if (name !== '-' && !file.contexts.some((c) => c.name === name))
        throw badInput('unknown_context', `no context ${name} in ${path} (see heddle context ls)`, 'name');
      const current = name === '-' ? null : name;
      writeContexts(path, { ...file, current });
      emit(io, p.booleans.json === true, { current }, () => [
        current === null
          ? 'no current context: commands use the controller home'
          : `current context: ${current}`,
      ]);
      return ExitCode.ok;
    }
    case 'ls':
    case 'list': {
      const p = parseArgv('heddle', CONTEXT_LS, rest);
      const file = readContexts(path);
      emit(io, p.booleans.json === true, { current: file.current, contexts: file.contexts }, () =>
        file.contexts.length === 0
          ? [`no contexts (${path}); add one with heddle context add`]
          : table(
              ['', 'NAME', 'URL', 'AUTH', 'FINGERPRINT'],
              file.contexts.map((c) => [
                c.name === file.current ? '*' : '',
                c.name,
                c.url,
                authOf(c),
                c.fingerprint === undefined ? '-' : `${c.fingerprint.slice(0, 23)}…`,
              ]),
            ),
      );
      return ExitCode.ok;
    }
    case 'rm':
    case 'remove': {
      const p = parseArgv('heddle', CONTEXT_RM, rest);
      const name = positional(p, 0);
      const file = readContexts(path);
      if (!file.contexts.some((c) => c.name === name))
        throw badInput('unknown_context', `no context ${name} in ${path} (see heddle context ls)`, 'name');
      const current = file.current === name ? null : file.current;
      writeContexts(path, { ...file, current, contexts: file.contexts.filter((c) => c.name !== name) });
      emit(io, p.booleans.json === true, { removed: name, current }, () => [`removed context ${name}`]);
      return ExitCode.ok;
    }
    default:
      throw usageError(USAGE);
  }
}

function checkName(name: string): string {
  const r = ContextNameSchema.safeParse(name);
  if (!r.success)
    throw badValue('name', `context name ${JSON.stringify(name)}: ${r.error.issues[0]?.message}`);
  return name;
}

function authOf(c: ContextEntry): string {
  return c.key_file !== undefined ? `key ${c.key_file}` : `token ${c.token_file ?? ''}`;
}
