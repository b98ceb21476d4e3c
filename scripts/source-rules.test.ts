import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { workspacePackages } from './dep-graph.mjs';

// Rules every source file keeps, checked over the whole tree so that they cannot drift back.
const ROOT = fileURLToPath(new URL('..', import.meta.url));

function filesUnder(dir: string, pattern: RegExp): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry === 'dist') continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path, pattern));
    else if (pattern.test(entry)) out.push(path);
  }
  return out;
}

const sources = [
  ...filesUnder(join(ROOT, 'packages'), /\.(?:ts|mts|mjs)$/),
  ...filesUnder(join(ROOT, 'apps'), /\.(?:ts|mts|mjs)$/),
].filter((f) => !f.endsWith('.d.ts') && !f.endsWith('.d.mts'));
const isTest = (f: string): boolean => /\.test\.ts$|test-util\.ts$/.test(f);

/** Each line that matches, as `file:line: text`. */
function grep(files: readonly string[], re: RegExp): string[] {
  const hits: string[] = [];
  for (const file of files) {
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, i) => {
      if (re.test(line)) hits.push(`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
    });
  }
  return hits;
}

describe('source rules', () => {
  it('no source file or doc cites a document outside the repository', () => {
    const docs = filesUnder(join(ROOT, 'docs'), /\.md$/);
    const readmes = [
      ...filesUnder(join(ROOT, 'packages'), /^README\.md$/),
      ...filesUnder(join(ROOT, 'apps'), /^README\.md$/),
    ];
    expect(
      grep(
        [...sources, ...docs, ...readmes],
        /\bDESIGN(?:\.md)?\s+(?:section\s+)?\d|\.\.\/shared\/|\bseeds\/[a-z_-]+\.rs\b/,
      ),
    ).toEqual([]);
  });

  it('every error code in the source is snake_case', () => {
    const kebab = "'[a-z0-9]+(?:-[a-z0-9]+)+'";
    const code = new RegExp(`\\b(?:code\\s*[:=]\\s*|new \\w*Error\\(\\s*)${kebab}`);
    const union = new RegExp(`^\\s*\\|\\s*${kebab}`);
    const codeFiles = sources.filter((f) => !isTest(f) && /(?:errors?|codes?)\.ts$/.test(f));
    expect([
      ...grep(
        sources.filter((f) => !isTest(f)),
        code,
      ),
      ...grep(codeFiles, union),
    ]).toEqual([]);
  });

  it('every library has an export snapshot test covering each entry of its exports map', () => {
    const missing: string[] = [];
    for (const p of workspacePackages(ROOT).filter((q) => q.kind === 'library')) {
      const testFile = join(ROOT, p.dir, 'src', 'exports.test.ts');
      if (!existsSync(testFile)) {
        missing.push(`${p.dir}/src/exports.test.ts`);
        continue;
      }
      const text = readFileSync(testFile, 'utf8');
      const manifest = JSON.parse(readFileSync(join(ROOT, p.dir, 'package.json'), 'utf8')) as {
        exports?: Record<string, unknown>;
      };
      for (const key of Object.keys(manifest.exports ?? {})) {
        if (key === './package.json') continue;
        const entry = key === '.' ? 'index' : key.slice(2);
        if (!text.includes(`./${entry}.js`))
          missing.push(`${p.dir}/src/exports.test.ts does not cover ${key}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('the strict compiler options are on for every package', () => {
    const base = JSON.parse(readFileSync(join(ROOT, 'tsconfig.base.json'), 'utf8')) as {
      compilerOptions: Record<string, unknown>;
    };
    expect(base.compilerOptions.strict).toBe(true);
    expect(base.compilerOptions.exactOptionalPropertyTypes).toBe(true);
    for (const p of workspacePackages(ROOT)) {
      const own = join(ROOT, p.dir, 'tsconfig.json');
      if (!existsSync(own)) continue;
      const text = readFileSync(own, 'utf8');
      expect(text, `${p.dir}/tsconfig.json turns a strict option off`).not.toMatch(
        /"(?:strict|exactOptionalPropertyTypes|noUncheckedIndexedAccess)"\s*:\s*false/,
      );
    }
  });
});

describe('benchmarks', () => {
  it('every name a benchmark imports from a workspace package is exported there', async () => {
    const missing: string[] = [];
    for (const file of filesUnder(join(ROOT, 'bench'), /\.mjs$/)) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/import\s*\{([^}]*)\}\s*from\s*'(@heddle\/[^']+)'/g)) {
        const [, list = '', spec = ''] = m;
        const mod: Record<string, unknown> = await import(spec);
        for (const raw of list.split(',')) {
          const name =
            raw
              .trim()
              .split(/\s+as\s+/)[0]
              ?.trim() ?? '';
          if (name === '' || name.startsWith('type ')) continue;
          if (!(name in mod)) missing.push(`${relative(ROOT, file)}: ${spec} has no export ${name}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });
});
