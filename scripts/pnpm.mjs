#!/usr/bin/env node
// Runs the pinned pnpm, installing it into .tools/ with npm first if needed, so that a fresh machine
// with only Node 20 and npm can work on the repository. `--bootstrap` installs the workspace.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const wanted = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).packageManager.split('@')[1];
const tools = join(root, '.tools');
const entry = join(tools, 'node_modules', 'pnpm', 'bin', 'pnpm.mjs');

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...opts });
  if (r.error) throw r.error;
  return r.status ?? 1;
}

function installedVersion() {
  const pkg = join(tools, 'node_modules', 'pnpm', 'package.json');
  return existsSync(pkg) ? JSON.parse(readFileSync(pkg, 'utf8')).version : undefined;
}

if (installedVersion() !== wanted) {
  console.error(`[heddle] installing pnpm ${wanted} into .tools/ (one time)`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const code = run(npm, [
    'install',
    '--prefix',
    tools,
    '--no-audit',
    '--no-fund',
    '--loglevel=error',
    `pnpm@${wanted}`,
  ]);
  if (code !== 0) process.exit(code);
}

// Every child (turbo, lifecycle scripts, vitest's spawned CLIs) must find this pnpm, and node-gyp for
// addons that compile, without anything installed globally: a shim directory goes first on PATH.
const shims = join(tools, 'bin');
const gypBin = join(tools, 'node_modules', 'pnpm', 'dist', 'node-gyp-bin');
function writeShim(name, body) {
  const file = join(shims, name);
  if (!existsSync(file) || readFileSync(file, 'utf8') !== body) {
    mkdirSync(shims, { recursive: true });
    writeFileSync(file, body);
    chmodSync(file, 0o755);
  }
}
if (process.platform === 'win32') {
  writeShim('pnpm.cmd', `@"${process.execPath}" "${entry}" %*\r\n`);
} else {
  writeShim('pnpm', `#!/bin/sh\nexec "${process.execPath}" "${entry}" "$@"\n`);
}

// Native addons (better-sqlite3) compile against this Node's own headers when they ship with it, so
// that node-gyp never downloads them (no network beyond the package registry is assumed).
const env = { ...process.env };
const pathKey = Object.keys(env).find((k) => k.toUpperCase() === 'PATH') ?? 'PATH';
env[pathKey] = [shims, gypBin, env[pathKey] ?? ''].join(delimiter);
if (env.npm_config_node_gyp === undefined && existsSync(join(gypBin, '..', 'node_modules', 'node-gyp'))) {
  env.npm_config_node_gyp = join(gypBin, '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
}
const prefix = join(dirname(process.execPath), '..');
if (env.npm_config_nodedir === undefined && existsSync(join(prefix, 'include', 'node', 'node.h'))) {
  env.npm_config_nodedir = prefix;
}

const args = process.argv.slice(2);
const pnpm = (a) => run(process.execPath, [entry, ...a], { env });
if (args[0] === '--bootstrap') {
  process.exit(pnpm(['install', '--frozen-lockfile', '--reporter=silent']));
}
process.exit(pnpm(args));
