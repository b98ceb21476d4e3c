import { describe, expect, it } from 'vitest';
import { CliError, ExitCode } from './cli-error.js';
import { dispatchCli } from './dispatch.js';

interface Cmd {
  readonly summary: string;
  readonly act: (args: readonly string[]) => number;
  readonly subcommands?: Record<string, { summary: string; aliases?: string[]; flags?: string[] }>;
}

function harness() {
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l) };
  const commands: Record<string, Cmd> = {
    ok: { summary: 'succeeds', act: (args) => (args.length === 0 ? 0 : 7) },
    boom: {
      summary: 'fails',
      act: () => {
        throw new CliError('bad_thing', 'it broke', ExitCode.badInput, { field: 'x' });
      },
    },
    own: { summary: 'answers --help itself', act: (args) => (args.includes('--help') ? 5 : 0) },
    node: {
      summary: 'manage nodes',
      act: (args) => (args[0] === 'ls' ? 10 : args[0] === 'add' ? 11 : 12),
      subcommands: {
        add: { summary: 'add a node', flags: ['tier'] },
        ls: { summary: 'list the nodes', aliases: ['list'] },
      },
    },
  };
  const run = (argv: string[]) =>
    dispatchCli(argv, io, {
      prefix: 'prog',
      version: '1.2.3',
      commands,
      helpText: () => 'HELP',
      commandHelp: (name, c, sub) =>
        name === 'own' || (name === 'node' && sub !== 'add')
          ? undefined
          : `prog ${name}${sub === undefined ? '' : ` ${sub}`}: ${c.summary}`,
      run: (c, args) => c.act(args),
    });
  return { out, err, run };
}

describe('dispatchCli', () => {
  it('prints the help for no command (exit 2) and for help (exit 0)', async () => {
    const h = harness();
    expect(await h.run([])).toBe(2);
    expect(await h.run(['--help'])).toBe(0);
    expect(h.out).toEqual(['HELP', 'HELP']);
  });

  it('refuses an unknown command (also an inherited property name) with the help', async () => {
    const h = harness();
    expect(await h.run(['zzzz'])).toBe(2);
    expect(await h.run(['toString'])).toBe(2);
    expect(h.err[0]).toBe('prog: unknown command "zzzz"\n\nHELP');
  });

  it('prints the version for --version and version (exit 0), as JSON with --json', async () => {
    const h = harness();
    expect(await h.run(['--version'])).toBe(0);
    expect(await h.run(['version'])).toBe(0);
    expect(await h.run(['--version', '--json'])).toBe(0);
    expect(h.out).toEqual(['prog 1.2.3', 'prog 1.2.3', '{"name":"prog","version":"1.2.3"}']);
  });

  it('says "did you mean" for a mistyped command and subcommand (exit 2)', async () => {
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
    expect(JSON.parse(h.err[3] as string).error).toMatchObject({ code: 'usage' });
    expect(JSON.parse(h.err[3] as string).error.message).toContain('did you mean "list" or "ls"?');
    // Aliases and flags pass through to the command.
    expect(await h.run(['node', 'list'])).toBe(12);
    expect(await h.run(['node', '--all'])).toBe(12);
  });

  it('answers <command> --help of a command with subcommands with their list (exit 0)', async () => {
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
      ].join('\n'),
    );
    expect(h.out[1]).toBe(h.out[0]);
  });

  it('help <command> [<subcommand>] is <command> [<subcommand>] --help', async () => {
    const h = harness();
    expect(await h.run(['help', 'ok'])).toBe(0);
    expect(await h.run(['help', 'node', 'add'])).toBe(0);
    expect(h.out).toEqual(['prog ok: succeeds', 'prog node add: manage nodes']);
    // A subcommand that answers --help itself runs with it.
    expect(await h.run(['help', 'node', 'ls'])).toBe(10);
    expect(await h.run(['help', 'own'])).toBe(5);
    expect(await h.run(['help', 'nod'])).toBe(2);
    expect(h.err[0]?.split('\n')[0]).toBe('prog: unknown command "nod"; did you mean "node"?');
  });

  it('prints completion scripts; refuses an unknown shell (exit 2)', async () => {
    const h = harness();
    expect(await h.run(['completion', 'bash'])).toBe(0);
    expect(h.out[0]).toContain('complete -o filenames -F _prog_complete prog');
    expect(await h.run(['completion', 'zsh'])).toBe(0);
    expect(h.out[1]?.startsWith('#compdef prog\n')).toBe(true);
    expect(await h.run(['completion', 'bahs'])).toBe(2);
    expect(h.err[0]).toBe(
      'prog completion: unknown shell "bahs"; did you mean "bash"?\nusage: prog completion <bash|zsh>',
    );
    expect(await h.run(['completion'])).toBe(2);
    expect(await h.run(['completion', '--help'])).toBe(0);
  });

  it('answers <command> --help, unless the command answers it itself', async () => {
    const h = harness();
    expect(await h.run(['ok', '--help'])).toBe(0);
    expect(h.out).toEqual(['prog ok: succeeds']);
    expect(await h.run(['own', '--help'])).toBe(5);
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
});
