#!/usr/bin/env node
// A release, rehearsed without publishing and without touching this tree: copies the tree (the files
// git knows of, plus the built dist/ of each public package) to a temporary directory, runs
// `changeset version` there, packs every public package with the pinned pnpm (as `changeset publish`
// would, `workspace:` ranges turned into the new versions), and runs `npm publish --dry-run` on each
// tarball. Prints one JSON summary line; exits non-zero on the first failure. Run after a build.
// Usage: node scripts/release-check.mjs [--keep]   (--keep leaves the scratch directory for a look)
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packAll, publicPackages, run, workspacePackages } from './packing.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const keep = process.argv.includes('--keep');
const work = mkdtempSync(join(tmpdir(), 'heddle-release-'));
const tree = join(work, 'tree');

function fail(message) {
  console.error(`release-check: ${message}`);
  if (!keep) rmSync(work, { recursive: true, force: true });
  process.exit(1);
}

/** The packages a changeset file names, with their bumps (the YAML front matter of .changeset/*.md). */
function pendingBumps(dir) {
  const bumps = new Map();
  for (const f of readdirSync(dir)) {
    if (!f.endsWith('.md') || f === 'README.md') continue;
    const front = /^---\n([\s\S]*?)\n---/.exec(readFileSync(join(dir, f), 'utf8'))?.[1] ?? '';
    for (const line of front.split('\n')) {
      const m = /^\s*["']?([^"':]+)["']?\s*:\s*(major|minor|patch)\s*$/.exec(line);
      if (m) bumps.set(m[1], m[2]);
    }
  }
  return bumps;
}

// 1. A copy of the tree as a clone would have it, plus the build output a publish packs.
const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
  cwd: root,
  encoding: 'utf8',
});
if (listed.status !== 0) fail(`git ls-files failed: ${listed.stderr}`);
for (const rel of listed.stdout.split('\0')) {
  if (rel !== '' && existsSync(join(root, rel))) cpSync(join(root, rel), join(tree, rel));
}
const before = publicPackages(root);
if (before.length === 0) fail('no public packages found');
for (const p of before) {
  const dist = join(p.dir, 'dist');
  if (!existsSync(dist)) fail(`${p.name} is not built (no ${relative(root, dist)}): build first`);
  cpSync(dist, join(tree, relative(root, p.dir), 'dist'), { recursive: true });
}

// 2. changeset version, in the copy.
const bumps = pendingBumps(join(tree, '.changeset'));
const changeset = join(root, 'node_modules', '@changesets', 'cli', 'bin.js');
const version = spawnSync(process.execPath, [changeset, 'version'], { cwd: tree, encoding: 'utf8' });
if (version.status !== 0) fail(`changeset version failed:\n${version.stderr}${version.stdout}`);
const after = new Map(publicPackages(tree).map((p) => [p.name, p]));
const versions = {};
for (const p of before) {
  const now = after.get(p.name);
  if (now === undefined) fail(`${p.name} disappeared after changeset version`);
  versions[p.name] = `${p.version} -> ${now.version}`;
  if (bumps.has(p.name)) {
    if (now.version === p.version)
      fail(`${p.name} has a ${bumps.get(p.name)} changeset but kept ${p.version}`);
    const log = join(now.dir, 'CHANGELOG.md');
    if (!existsSync(log) || !readFileSync(log, 'utf8').includes(`## ${now.version}`)) {
      fail(`${p.name}: CHANGELOG.md has no section for ${now.version}`);
    }
  }
}
const left = readdirSync(join(tree, '.changeset')).filter((f) => f.endsWith('.md') && f !== 'README.md');
if (left.length > 0) fail(`changeset version left changesets behind: ${left.join(', ')}`);

// 3. Pack each public package. pnpm resolves `workspace:` ranges through the package's
// node_modules, so each gets links to the workspace packages it depends on (nothing is installed).
const byName = new Map(workspacePackages(tree).map((p) => [p.name, p]));
for (const p of after.values()) {
  const m = p.manifest;
  for (const deps of [m.dependencies, m.devDependencies, m.optionalDependencies, m.peerDependencies]) {
    for (const [dep, range] of Object.entries(deps ?? {})) {
      if (!String(range).startsWith('workspace:')) continue;
      const target = byName.get(dep);
      if (target === undefined) fail(`${p.name} depends on ${dep}@${range}, which is not in the workspace`);
      const link = join(p.dir, 'node_modules', ...dep.split('/'));
      if (existsSync(link)) continue;
      mkdirSync(dirname(link), { recursive: true });
      symlinkSync(relative(dirname(link), target.dir), link, 'dir');
    }
  }
}
const dest = join(work, 'tarballs');
mkdirSync(dest, { recursive: true });
const published = [...after.values()];
let tarballs;
try {
  tarballs = await packAll(join(root, 'scripts', 'pnpm.mjs'), published, dest);
} catch (err) {
  fail(err.message);
}

// 4. Every packed manifest names real versions, then npm's own dry run of the publish.
for (const [i, tgz] of tarballs.entries()) {
  const manifest = spawnSync('tar', ['-xOzf', tgz, 'package/package.json'], { encoding: 'utf8' });
  if (manifest.status !== 0) fail(`cannot read package.json in ${tgz}`);
  const m = JSON.parse(manifest.stdout);
  if (m.version !== published[i].version)
    fail(`${m.name}: packed ${m.version}, expected ${published[i].version}`);
  for (const deps of [m.dependencies, m.optionalDependencies, m.peerDependencies]) {
    for (const [dep, range] of Object.entries(deps ?? {})) {
      if (String(range).startsWith('workspace:')) fail(`${m.name}: ${dep} is still ${range} in the tarball`);
      const target = after.get(dep);
      if (target !== undefined && range !== `^${target.version}`) {
        fail(`${m.name}: ${dep} is ${range} in the tarball, expected ^${target.version}`);
      }
    }
  }
}
const env = { ...process.env, npm_config_dry_run: 'true' };
for (const k of Object.keys(env))
  if (k.startsWith('npm_config_') && k !== 'npm_config_dry_run') delete env[k];
const dry = await Promise.all(
  tarballs.map((tgz) =>
    run('npm', ['publish', '--dry-run', '--access', 'public', '--loglevel=notice', tgz], { cwd: work, env }),
  ),
);
for (const [i, r] of dry.entries()) {
  const p = published[i];
  const out = r.stdout + r.stderr;
  if (r.code !== 0) fail(`npm publish --dry-run of ${p.name} failed (exit ${r.code}):\n${out}`);
  if (!out.includes(`+ ${p.name}@${p.version}`))
    fail(`npm publish --dry-run of ${p.name} did not report it:\n${out}`);
}

console.log(
  JSON.stringify({ ok: true, versions, published: published.map((p) => `${p.name}@${p.version}`) }),
);
if (keep) console.error(`release-check: scratch tree kept in ${work}`);
else rmSync(work, { recursive: true, force: true });
