import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CompletionCommand, completionScript } from './completion.js';
import { tempDir } from './testing.js';

const COMMANDS: CompletionCommand[] = [
  {
    name: 'node',
    summary: 'manage nodes: add, ls',
    flags: ['json'],
    subcommands: [
      { name: 'add', summary: 'add a node (it’s "quoted")', flags: ['tier', 'json'], subcommands: [] },
      { name: 'ls', summary: 'list them', flags: ['json'], subcommands: [] },
    ],
  },
  { name: 'place', summary: 'place a package', flags: ['dry-run', 'prefer'], subcommands: [] },
];

const dir = tempDir('heddle-completion-');
writeFileSync(join(dir, 'pkg.json'), '{}');

/** What the bash script completes for the words typed so far (the last one being completed). */
function bash(words: string[]): string[] {
  const script = join(dir, 'prog.bash');
  writeFileSync(script, completionScript('bash', 'my-prog', COMMANDS));
  const quoted = words.map((w) => `'${w}'`).join(' ');
  const r = spawnSync(
    'bash',
    [
      '-c',
      `source '${script}'; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _my_prog_complete; printf '%s\\n' "\${COMPREPLY[@]}"`,
    ],
    { cwd: dir, encoding: 'utf8' },
  );
  expect(r.stderr).toBe('');
  return r.stdout.split('\n').filter((l) => l !== '');
}

const hasZsh = spawnSync('zsh', ['-c', 'true']).status === 0;

/** What the zsh script offers, with compadd/_describe/_files replaced by printers. */
function zsh(words: string[]): string[] {
  const script = join(dir, '_my_prog');
  writeFileSync(script, completionScript('zsh', 'my-prog', COMMANDS));
  const quoted = words.map((w) => `'${w}'`).join(' ');
  const stubs = [
    'compdef() { :; }',
    'compadd() { [[ $1 == -- ]] && shift; print -rl -- "$@"; }',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: zsh code, not a template.
    '_describe() { print -rl -- "${(@P)4}"; }',
    '_files() { print -- "(files)"; }',
  ].join('\n');
  const r = spawnSync(
    'zsh',
    [
      '-f',
      '-c',
      `${stubs}\nsource '${script}'\nwords=(${quoted}); CURRENT=${words.length}; PREFIX='${words.at(-1)}'; _my_prog`,
    ],
    { cwd: dir, encoding: 'utf8' },
  );
  expect(r.stderr).toBe('');
  return r.stdout.split('\n').filter((l) => l !== '');
}

describe('completionScript', () => {
  it('bash completes commands, subcommands, flags, then file names', () => {
    expect(bash(['my-prog', ''])).toEqual([
      'help',
      'version',
      'completion',
      'node',
      'place',
      '--help',
      '--version',
    ]);
    expect(bash(['my-prog', 'p'])).toEqual(['place']);
    expect(bash(['my-prog', 'node', ''])).toEqual(['add', 'ls', '--json', '--help']);
    expect(bash(['my-prog', 'node', 'add', '--t'])).toEqual(['--tier']);
    expect(bash(['my-prog', 'place', '--'])).toEqual(['--dry-run', '--prefer', '--help']);
    expect(bash(['my-prog', 'place', 'pk'])).toEqual(['pkg.json']);
    expect(bash(['my-prog', 'completion', ''])).toEqual(['bash', 'zsh']);
    expect(bash(['my-prog', 'help', 'no'])).toEqual(['node']);
  });

  it.skipIf(!hasZsh)('zsh offers commands with summaries, subcommands, flags, then files', () => {
    expect(zsh(['my-prog', ''])).toContain('node:manage nodes\\: add, ls');
    expect(zsh(['my-prog', '-'])).toEqual(['--help', '--version']);
    expect(zsh(['my-prog', 'node', ''])).toEqual(['add:add a node (it’s "quoted")', 'ls:list them']);
    expect(zsh(['my-prog', 'node', 'add', '--'])).toEqual(['--tier', '--json', '--help']);
    expect(zsh(['my-prog', 'place', 'x'])).toEqual(['(files)']);
    expect(zsh(['my-prog', 'completion', ''])).toEqual(['bash', 'zsh']);
  });

  it('refuses words that would not be safe in a shell script', () => {
    expect(() => completionScript('bash', 'my prog', COMMANDS)).toThrow('not a program name');
    expect(() =>
      completionScript('zsh', 'p', [{ name: 'x;rm', summary: '', flags: [], subcommands: [] }]),
    ).toThrow('not a command word');
    expect(() =>
      completionScript('zsh', 'p', [{ name: 'x', summary: '', flags: ["a'b"], subcommands: [] }]),
    ).toThrow('not a flag name');
  });
});
