// Packing the workspace's public packages as a release would, shared by the release dry run
// (scripts/release-check.mjs) and the consumer test of the library READMEs.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The workspace packages (packages/*, apps/*) as `{ name, version, dir, manifest }`, read from their
 * package.json files under `root`.
 */
export function workspacePackages(root) {
  const out = [];
  for (const group of ['packages', 'apps']) {
    const base = join(root, group);
    if (!existsSync(base)) continue;
    for (const entry of readdirSync(base).sort()) {
      const file = join(base, entry, 'package.json');
      if (!existsSync(file)) continue;
      const manifest = JSON.parse(readFileSync(file, 'utf8'));
      out.push({ name: manifest.name, version: manifest.version, dir: join(base, entry), manifest });
    }
  }
  return out;
}

/** The packages a release publishes: every workspace package not marked `private`. */
export function publicPackages(root) {
  return workspacePackages(root).filter((p) => p.manifest.private !== true);
}

/**
 * Runs a command and resolves with `{ code, stdout, stderr }` (never rejects on a non-zero exit).
 * `timeoutMs` kills it (SIGKILL) and reports code null.
 */
export function run(cmd, args, { cwd, env = process.env, timeoutMs = 120_000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Packs each package with the pinned pnpm (which turns `workspace:` ranges into real ones, as
 * `pnpm publish` does) into `dest`, in parallel. Resolves with the tarball paths in package order;
 * rejects naming the package whose pack failed. `pnpmEntry` is the repository's scripts/pnpm.mjs.
 */
export async function packAll(pnpmEntry, packages, dest, env = process.env) {
  const results = await Promise.all(
    packages.map((p) =>
      run(process.execPath, [pnpmEntry, '-C', p.dir, 'pack', '--pack-destination', dest], { env }),
    ),
  );
  return packages.map((p, i) => {
    const r = results[i];
    const file = join(dest, `${p.name.replace(/^@/, '').replace('/', '-')}-${p.version}.tgz`);
    if (r.code !== 0 || !existsSync(file)) {
      throw new Error(`pack of ${p.name} failed (exit ${r.code}):\n${r.stderr}${r.stdout}`);
    }
    return file;
  });
}
