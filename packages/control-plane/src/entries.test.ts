// The package's entries: better-sqlite3 is an optional peer dependency, loaded only by the `./sqlite`
// entry (and `./testing`, which opens a SQLite store); the main entry and `./driver` must load without
// it. `pg` likewise: only a PostgreSQL store's worker thread loads it (`./postgres`), when it opens. Checked on the source import graph, and on the built entries with a resolve hook that makes
// `better-sqlite3` unresolvable.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from './test-plane.js';

const pkg = resolve(import.meta.dirname, '..');
const src = join(pkg, 'src');

/** The value imports of a source file (`import type` and `export type` lines left out). */
function valueImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/^(?:import|export)\s+(type\s+)?[^'";]*?from\s+'([^']+)';/gms)) {
    if (m[1] === undefined && m[2] !== undefined) out.push(m[2]);
  }
  for (const m of text.matchAll(/^import\s+'([^']+)';/gm)) if (m[1] !== undefined) out.push(m[1]);
  return out;
}

/** Every package a source entry loads at run time, through its relative imports. */
function packagesLoadedBy(entry: string): Set<string> {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const walk = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const spec of valueImports(file)) {
      if (spec.startsWith('.')) walk(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
      else packages.add(spec);
    }
  };
  walk(join(src, entry));
  return packages;
}

describe('better-sqlite3 is an optional peer, loaded by the ./sqlite entry only', () => {
  it('is an optional peer dependency, not a dependency', () => {
    const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
    expect(manifest.dependencies['better-sqlite3']).toBeUndefined();
    expect(manifest.peerDependencies['better-sqlite3']).toMatch(/^\^12\./);
    expect(manifest.peerDependenciesMeta['better-sqlite3']).toEqual({ optional: true });
  });

  it('the sources of the main entry and ./driver never import it; ./sqlite does', () => {
    expect(packagesLoadedBy('index.ts').has('better-sqlite3')).toBe(false);
    expect(packagesLoadedBy('driver.ts').has('better-sqlite3')).toBe(false);
    expect(packagesLoadedBy('sqlite.ts').has('better-sqlite3')).toBe(true);
  });

  it('the built main entry and ./driver load where better-sqlite3 cannot be resolved; ./sqlite does not', () => {
    const dist = join(pkg, 'dist');
    expect(existsSync(join(dist, 'index.js')), 'build the package first (turbo run build)').toBe(true);
    const dir = tempDir('heddle-cp-entries-');
    const hooks = join(dir, 'hooks.mjs');
    writeFileSync(
      hooks,
      `export async function resolve(specifier, context, next) {
  if (specifier === 'better-sqlite3' || specifier.startsWith('better-sqlite3/')) throw new Error('better-sqlite3 is not installed here');
  if (specifier === 'pg' || specifier.startsWith('pg/')) throw new Error('pg is not installed here');
  return next(specifier, context);
}\n`,
    );
    const register = join(dir, 'register.mjs');
    writeFileSync(
      register,
      `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
    );
    const load = (entry: string) =>
      spawnSync(
        process.execPath,
        [
          '--import',
          pathToFileURL(register).href,
          '--input-type=module',
          '-e',
          `await import(${JSON.stringify(pathToFileURL(join(dist, entry)).href)}); console.log('loaded');`,
        ],
        { encoding: 'utf8', cwd: pkg, timeout: 20_000 },
      );
    for (const entry of ['index.js', 'driver.js', 'postgres.js']) {
      const r = load(entry);
      expect({ entry, status: r.status, stderr: r.stderr }).toEqual({ entry, status: 0, stderr: '' });
      expect(r.stdout.trim()).toBe('loaded');
    }
    // The hook lands: the SQLite entry cannot load under it.
    const sqlite = load('sqlite.js');
    expect(sqlite.status).not.toBe(0);
    expect(sqlite.stderr).toContain('better-sqlite3 is not installed here');
  });
});

describe('pg is an optional peer, loaded only when a PostgreSQL store opens', () => {
  it('is an optional peer dependency, not a dependency', () => {
    const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
    expect(manifest.dependencies.pg).toBeUndefined();
    expect(manifest.peerDependencies.pg).toMatch(/^\^8\./);
    expect(manifest.peerDependenciesMeta.pg).toEqual({ optional: true });
  });

  it('no entry imports it statically (the worker thread requires it by the path resolved at open)', () => {
    for (const entry of ['index.ts', 'driver.ts', 'sqlite.ts', 'postgres.ts', 'contract.ts']) {
      expect(packagesLoadedBy(entry).has('pg'), entry).toBe(false);
    }
  });
});
