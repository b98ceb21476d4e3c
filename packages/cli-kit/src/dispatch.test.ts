import { describe, expect, it } from 'vitest';
import { CliError, ExitCode } from './cli-error.js';
import type { CommandDef } from './command-def.js';
import { dispatchCli } from './dispatch.js';
import type { ProgramDef } from './help.js';
import { parseArgv } from './parse-args.js';

interface Cmd extends CommandDef {
  readonly act: (args: readonly string[]) => number;
}

const JSON_FLAG = { name: 'json', kind: 'boolean', description: 'print JSON' } as const;

function harness() {
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l) };
  const commands: Cmd[] = [
    {
      name: 'ok',
      summary: 'succeeds',
      positionals: [{ name: 'x', description: 'anything', optional: true }],
      flags: [JSON_FLAG],
      act: (args) => (args.length === 0 ? 0 : 7),
    },
    {
      name: 'boom',
      summary: 'fails',
      flags: [JSON_FLAG],
      act: () => {
        throw new CliError('bad_thing', 'it broke', ExitCode.badInput, { field: 'x' });
      },
    },
    {
      name: 'node',
      summary: 'manage nodes',
      act: (args) => (args[0] === 'ls' || args[0] === 'list' ? 10 : args[0] === 'add' ? 11 : 12),
      subcommands: [
        {
          name: 'node add',
          summary: 'add a node',
          positionals: [{ name: 'url', description: 'where it listens' }],
          flags: [{ name: 'tier', kind: 'string', value: '<t>', required: true, description: 'its tier' }],
          examples: ['node add ws://127.0.0.1:7400 --tier paired'],
        },
        { name: 'node ls', summary: 'list the nodes', aliases: ['list'], flags: [JSON_FLAG] },
      ],
    },
    {
      name: 'alerts',
      summary: 'list alerts',
      flags: [JSON_FLAG],
      act: (args) => (args[0] === 'ack' ? 21 : 20),
      subcommands: [
        { name: 'alerts ack', summary: 'ack one', positionals: [{ name: 'id', description: 'it' }] },
      ],
    },
  ];
  const program: ProgramDef<Cmd> = {
    name: 'prog',
    version: '1.2.3',
    summary: 'a test program',
    usage: '<command> [arguments]',
    commands,
    exits: { 0: 'ok', 2: 'usage error (a bad flag)' },
  };
  const run = (argv: string[]) => dispatchCli(argv, io, { program, run: (c, args) => c.act(args) });
  return { out, err, run };
}

describe('dispatchCli', () => {
  it('prints the help for no command (exit 2) and for help (exit 0)', async () => {
    const h = harness();
    expect(await h.run([])).toBe(2);
    expect(await h.run(['--help'])).toBe(0);
    expect(h.out[0]).toBe(h.out[1]);
    expect(h.out[0]).toBe(
      [
        'prog: a test program',
        '',
        'usage: prog <command> [arguments]',
        '',
        'commands:',
        '  ok      succeeds',
        '  boom    fails',
        '  node    manage nodes',
        '  alerts  list alerts',
        '',
        'prog help <command> [<subcommand>] (or prog <command> --help) shows one; prog --version;',
        'prog completion bash|zsh prints a shell completion script.',
        'exit codes: 0 ok, 2 usage error',
      ].join('\n'),
    );
  });

  it('refuses an unknown command (also an inherited property name) with the help', async () => {
    const h = harness();
    expect(await h.run(['zzzz'])).toBe(2);
    expect(await h.run(['toString'])).toBe(2);
    expect(h.err[0]?.split('\n')[0]).toBe('prog: unknown command "zzzz"');
    expect(h.err[0]).toContain('\n\nprog: a test program');
  });

  it('prints the version for --version and version (exit 0), as JSON with --json', async () => {
    const h = harness();
    expect(await h.run(['--version'])).toBe(0);
    expect(await h.run(['version'])).toBe(0);
    expect(await h.run(['--version', '--json'])).toBe(0);
    expect(h.out).toEqual(['prog 1.2.3', 'prog 1.2.3', '{"name":"prog","version":"1.2.3"}']);
  });

  it('says "did you mean" for a mistyped command and subcommand (exit 2), naming the word', async () => {
    const h = harness();
    expect(await h.run(['nod'])).toBe(2);
    expect(h.err[0]?.split('\n')[0]).toBe('prog: unknown command "nod"; did you mean "node"?');
    expect(await h.run(['versoin'])).toBe(2);
    expect(h.err[1]?.split('\n')[0]).toBe('prog: unknown command "versoin"; did you mean "version"?');
    expect(await h.run(['node', 'lss'])).toBe(2);
    expect(h.err[2]).toBe(
      'prog node: unknown subcommand "lss"; did you mean "ls"?\nusage: prog node <add|ls> ... (prog node --help lists them)',
    );
    expect(await h.run(['node', 'lst', '--json'])).toBe(2);
    const e = JSON.parse(h.err[3] ?? '').error;
    expect(e).toMatchObject({ code: 'usage', field: 'subcommand', reason: 'unknown_command', token: 'lst' });
    expect(e.message).toContain('did you mean "list" or "ls"?');
    // Aliases pass through to the command.
    expect(await h.run(['node', 'list'])).toBe(10);
  });

  it('refuses a group of subcommands called without one (exit 2); a runnable group runs', async () => {
    const h = harness();
    expect(await h.run(['node'])).toBe(2);
    expect(await h.run(['node', '--json'])).toBe(2);
    expect(JSON.parse(h.err[1] ?? '').error).toMatchObject({
      code: 'usage',
      field: 'subcommand',
      reason: 'missing_argument',
    });
    expect(await h.run(['alerts'])).toBe(20);
    expect(await h.run(['alerts', 'ack', 'a-1'])).toBe(21);
  });

  it('answers <group> --help with the subcommands, <command> --help with the definition (exit 0)', async () => {
    const h = harness();
    expect(await h.run(['node', '--help'])).toBe(0);
    expect(await h.run(['help', 'node'])).toBe(0);
    expect(h.out[0]).toBe(
      [
        'usage: prog node <add|ls> [arguments]',
        '',
        'manage nodes',
        '',
        'subcommands:',
        '  add  add a node',
        '  ls   list the nodes (also: list)',
        '',
        'prog help node <subcommand> (or prog node <subcommand> --help) shows one',
        '',
        'exit codes: 0 ok, 2 usage error',
      ].join('\n'),
    );
    expect(h.out[1]).toBe(h.out[0]);
    expect(await h.run(['node', 'add', '--help'])).toBe(0);
    expect(h.out[2]).toBe(
      [
        'usage: prog node add <url> --tier <t>',
        '',
        'add a node',
        '',
        'arguments:',
        '  <url>  where it listens',
        '',
        'flags:',
        '  --tier <t>  its tier (required)',
        '',
        'examples:',
        '  prog node add ws://127.0.0.1:7400 --tier paired',
        '',
        'exit codes: 0 ok, 2 usage error',
      ].join('\n'),
    );
    expect(await h.run(['help', 'node', 'add'])).toBe(0);
    expect(h.out[3]).toBe(h.out[2]);
  });

  it('a --help after -- is the command’s own argument', async () => {
    const h = harness();
    expect(await h.run(['ok', '--', '--help'])).toBe(7);
    expect(h.out).toEqual([]);
  });

  it('help <command> of an unknown command is refused with "did you mean"', async () => {
    const h = harness();
    expect(await h.run(['help', 'nod'])).toBe(2);
    expect(h.err[0]?.split('\n')[0]).toBe('prog: unknown command "nod"; did you mean "node"?');
  });

  it('prints completion scripts from the definitions; refuses an unknown shell (exit 2)', async () => {
    const h = harness();
    expect(await h.run(['completion', 'bash'])).toBe(0);
    expect(h.out[0]).toContain('complete -o filenames -F _prog_complete prog');
    expect(h.out[0]).toContain("add) words='--tier --help' ;;");
    expect(await h.run(['completion', 'zsh'])).toBe(0);
    expect(h.out[1]?.startsWith('#compdef prog\n')).toBe(true);
    expect(await h.run(['completion', 'bahs'])).toBe(2);
    expect(h.err[0]).toBe(
      'prog completion: unknown shell "bahs"; did you mean "bash"?\nusage: prog completion <shell>',
    );
    expect(await h.run(['completion'])).toBe(2);
    expect(h.err[1]).toBe('prog completion: missing <shell>\nusage: prog completion <shell>');
    expect(await h.run(['completion', '--help'])).toBe(0);
    expect(h.out[2]?.split('\n')[0]).toBe('usage: prog completion <shell>');
  });

  it('runs the command with its arguments and reports what it throws, human or JSON', async () => {
    const h = harness();
    expect(await h.run(['ok', 'x'])).toBe(7);
    expect(await h.run(['boom'])).toBe(3);
    expect(await h.run(['boom', '--json'])).toBe(3);
    expect(h.err).toEqual([
      'prog boom: it broke',
      JSON.stringify({ error: { code: 'bad_thing', message: 'it broke', field: 'x' } }),
    ]);
  });

  it('reports a parse error of a command with its reason and field', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const def: CommandDef = { name: 'go', summary: 'goes', flags: [JSON_FLAG] };
    const code = await dispatchCli(
      ['go', '--jsno', '--json'],
      { out: (l) => out.push(l), err: (l) => err.push(l) },
      {
        program: { name: 'p', version: '1', summary: 's', usage: '<command>', commands: [def], exits: {} },
        run: (c, args) => parseArgv('p', c, args).positionals.length,
      },
    );
    expect(code).toBe(2);
    expect(JSON.parse(err[0] ?? '').error).toEqual({
      code: 'usage',
      message: 'unknown flag --jsno; did you mean "--json"?\nusage: p go [--json]',
      field: 'jsno',
      reason: 'unknown_flag',
      token: '--jsno',
    });
  });
});
