import { describe, expect, it } from 'vitest';
import { CliError, ExitCode } from './cli-error.js';
import { dispatchCli } from './dispatch.js';

interface Cmd {
  readonly summary: string;
  readonly act: (args: readonly string[]) => number;
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
  };
  const run = (argv: string[]) =>
    dispatchCli(argv, io, {
      prefix: 'prog',
      commands,
      helpText: () => 'HELP',
      commandHelp: (name, c) => (name === 'own' ? undefined : `prog ${name}: ${c.summary}`),
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
    expect(await h.run(['nope'])).toBe(2);
    expect(await h.run(['toString'])).toBe(2);
    expect(h.err[0]).toBe('prog: unknown command "nope"\n\nHELP');
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
