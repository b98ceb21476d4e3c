// heddle-seed follows the CLI conventions of dispatchCli: --version, help <cmd> [<sub>], <cmd> --help
// (exit 0), did you mean for commands and subcommands, completion from the usages.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { commandHelp, programHelp } from '@heddle/cli-kit';
import { modulesLoaded } from '@heddle/cli-kit/testing';
import { describe, expect, it } from 'vitest';
import { PROGRAM } from './cli.js';
import { runCaptured, tempDir } from './test-io.js';

const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

const VERSION = (
  JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')) as { version: string }
).version;

describe('heddle-seed CLI conventions', () => {
  it('--version, help <command>, <command> --help, did you mean, completion', async () => {
    const cwd = tempDir();
    expect(await runCaptured(['--version'], cwd)).toEqual({
      code: 0,
      out: `heddle-seed ${VERSION}`,
      err: '',
    });
    const pin = await runCaptured(['pin', '--help'], cwd);
    expect(pin.code).toBe(0);
    expect(pin.out.split('\n')[0]).toBe('usage: heddle-seed pin <add|ls|rm> [arguments]');
    const add = await runCaptured(['help', 'pin', 'add'], cwd);
    expect(add.out.split('\n')[0]).toBe(
      'usage: heddle-seed pin add <id@version> [--sha256 <hex>] [--console <command>]... [--home <dir>] [--json]',
    );
    expect(await runCaptured(['pin', 'add', '--help'], cwd)).toEqual(add);
    const typo = await runCaptured(['pin', 'lss'], cwd);
    expect(typo.code).toBe(2);
    expect(typo.err.split('\n')[0]).toBe('heddle-seed pin: unknown subcommand "lss"; did you mean "ls"?');
    expect((await runCaptured(['pari'], cwd)).err.split('\n')[0]).toBe(
      'heddle-seed: unknown command "pari"; did you mean "pair"?',
    );
    const bash = await runCaptured(['completion', 'bash'], cwd);
    expect(bash.out).toContain("add) words='--sha256 --console --home --json --help' ;;");
    expect(bash.out).toContain(
      "init) words='--url --pin-spki --allow-plain-http --client-name --force --home --json --help' ;;",
    );
  });

  it('every help is the shared renderer of @heddle/cli-kit, from the command definitions', async () => {
    const cwd = tempDir();
    expect((await runCaptured(['--help'], cwd)).out).toBe(programHelp(PROGRAM));
    for (const c of PROGRAM.commands) {
      expect((await runCaptured([c.name, '--help'], cwd)).out, c.name).toBe(commandHelp(PROGRAM, c));
      for (const sub of c.subcommands ?? []) {
        expect((await runCaptured(['help', ...sub.name.split(' ')], cwd)).out).toBe(
          commandHelp(PROGRAM, sub),
        );
      }
    }
  });

  it('`console <id> -- --help` passes --help to the cog (not the help of console)', async () => {
    const cwd = tempDir();
    const r = await runCaptured(['console', 'air-quality', '--home', join(cwd, 'none'), '--', '--help'], cwd);
    expect(r.out).not.toContain('usage:');
    expect(r.code).not.toBe(0);
  });

  it('reports a mistyped flag with its name, reason and a suggestion (exit 2)', async () => {
    const cwd = tempDir();
    const r = await runCaptured(['pin', 'add', 'a@1', '--sha265', 'x', '--json'], cwd);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.err).error).toMatchObject({
      code: 'usage',
      field: 'sha265',
      reason: 'unknown_flag',
      token: '--sha265',
    });
    expect(JSON.parse(r.err).error.message).toContain('did you mean "--sha256"?');
  });

  it('--help and --version load neither the crypto nor the validation stack, nor any command', () => {
    for (const args of [['--help'], ['--version'], ['pin', '--help']]) {
      const r = modulesLoaded(['--import', tsx, join(import.meta.dirname, 'bin.ts'), ...args], {
        cwd: tempDir(),
        env: { ...process.env, TSX_TSCONFIG_PATH: join(import.meta.dirname, '..', 'tsconfig.source.json') },
      });
      expect(r.code, args.join(' ')).toBe(0);
      expect(
        r.urls.some((u) => u.endsWith('/cli.ts')),
        'the recording works',
      ).toBe(true);
      const heavy = r.urls.filter((u) =>
        /\/zod\/|@noble|hash-wasm|envelope\/src\/index\.ts|\/commands\//.test(u),
      );
      expect(heavy, args.join(' ')).toEqual([]);
    }
  });
});
