import { type CommandDef, commandWord, type FlagDef, isRunnable } from './command-def.js';

/** A program as its help, its dispatcher and its completion see it. */
export interface ProgramDef<C extends CommandDef = CommandDef> {
  /** The program name (`heddle`, `heddle-host`, `heddle-seed`): it starts every help and error line. */
  readonly name: string;
  /** Its version, printed by `--version` and `version`. */
  readonly version: string;
  /** One line: what it is (the help's first line is `<name>: <summary>`). */
  readonly summary: string;
  /** What follows the name in the top-level synopsis (`<command> [arguments] [--json]`). */
  readonly usage: string;
  /** Its commands, in help order. */
  readonly commands: readonly C[];
  /** More lines for the end of the top-level help (where a profile is found, ...). */
  readonly notes?: readonly string[];
  /** Its exit codes, code to meaning (the help prints the meaning up to its first ` (`). */
  readonly exits: Readonly<Record<number, string>>;
  /** The document that describes it (`docs/host.md`), named at the end of every help. */
  readonly docs?: string;
}

/** A flag as the synopsis and the help show it: `--tier <t>`, `-o, --out <dir>`. */
export function flagLabel(f: FlagDef): string {
  return `--${f.name}${f.kind === 'string' ? ` ${f.value ?? '<value>'}` : ''}`;
}

/** The one-line synopsis of a command: `heddle node rm <id> [--force] [--home <dir>] [--json]`. */
export function synopsis(program: string, def: CommandDef): string {
  const parts = [`${program} ${def.name}`];
  for (const p of def.positionals ?? []) {
    const word = `<${p.name}>${p.variadic === true ? '...' : ''}`;
    parts.push(p.optional === true ? `[${word}]` : word);
  }
  for (const f of def.flags ?? []) {
    const flag = flagLabel(f);
    parts.push(`${f.required === true ? flag : `[${flag}]`}${f.multiple === true ? '...' : ''}`);
  }
  if (!isRunnable(def) && def.subcommands !== undefined) {
    parts.push(`<${def.subcommands.map(commandWord).join('|')}>`, '[arguments]');
  }
  return parts.join(' ');
}

/** `0 ok, 1 check failed, ...`: exit codes with each meaning up to its first ` (`. */
export function exitsLine(exits: Readonly<Record<number, string>>): string {
  return `exit codes: ${Object.entries(exits)
    .map(([c, m]) => `${c} ${m.split(' (')[0]}`)
    .join(', ')}`;
}

/** Rows `  <left>  <right>` with the left column padded to its widest entry. */
function rows(items: readonly (readonly [string, string])[]): string[] {
  const width = Math.max(0, ...items.map(([l]) => l.length));
  return items.map(([l, r]) => `  ${l.padEnd(width)}  ${r}`.trimEnd());
}

function flagText(f: FlagDef): string {
  const notes = [
    f.required === true ? 'required' : undefined,
    f.default === undefined ? undefined : `default: ${f.default}`,
    f.multiple === true ? 'repeatable' : undefined,
  ].filter((n) => n !== undefined);
  return `${f.description}${notes.length === 0 ? '' : ` (${notes.join('; ')})`}`;
}

/**
 * The `--help` text of a command, the same for every program: `usage:` with its synopsis, its
 * summary, then its `arguments:`, `flags:`, `subcommands:` and `examples:` (each when it has any),
 * its exit codes (its own, else the program's), and the program's document.
 */
export function commandHelp(program: ProgramDef, def: CommandDef): string {
  const out = [`usage: ${synopsis(program.name, def)}`];
  const subs = def.subcommands ?? [];
  if (isRunnable(def) && subs.length > 0) {
    out.push(`       ${program.name} ${def.name} <${subs.map(commandWord).join('|')}> [arguments]`);
  }
  out.push('', def.summary);
  const positionals = def.positionals ?? [];
  if (positionals.length > 0) {
    out.push('', 'arguments:', ...rows(positionals.map((p) => [`<${p.name}>`, p.description])));
  }
  const flags = def.flags ?? [];
  if (flags.length > 0) {
    out.push(
      '',
      'flags:',
      ...rows(
        flags.map((f) => [`${f.short === undefined ? '' : `-${f.short}, `}${flagLabel(f)}`, flagText(f)]),
      ),
    );
  }
  if (subs.length > 0) {
    out.push(
      '',
      'subcommands:',
      ...rows(
        subs.map((s) => [
          commandWord(s),
          `${s.summary}${s.aliases?.length ? ` (also: ${s.aliases.join(', ')})` : ''}`,
        ]),
      ),
      '',
      `${program.name} help ${def.name} <subcommand> (or ${program.name} ${def.name} <subcommand> --help) shows one`,
    );
  }
  if (def.examples !== undefined && def.examples.length > 0) {
    out.push('', 'examples:', ...def.examples.map((e) => `  ${program.name} ${e}`));
  }
  out.push('', exitsLine(def.exits ?? program.exits));
  if (program.docs !== undefined) out.push(`see ${program.docs}`);
  return out.join('\n');
}

/** The top-level help of a program: what it is, its synopsis, its commands, the conventions, exits. */
export function programHelp(program: ProgramDef): string {
  const p = program.name;
  return [
    `${p}: ${program.summary}`,
    '',
    `usage: ${p} ${program.usage}`,
    '',
    'commands:',
    ...rows(program.commands.map((c) => [c.name, c.summary])),
    '',
    `${p} help <command> [<subcommand>] (or ${p} <command> --help) shows one; ${p} --version;`,
    `${p} completion bash|zsh prints a shell completion script.`,
    ...(program.notes ?? []),
    exitsLine(program.exits),
    ...(program.docs === undefined ? [] : [`see ${program.docs}`]),
  ].join('\n');
}
