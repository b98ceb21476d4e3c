// No app imports another app's files: what two apps share lives in a library under packages/.
// Every TypeScript file under apps/<x>/src is read, and each relative import or export specifier
// is resolved against the file; one that lands in apps/<y> (y != x) fails the test, naming both.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const appsDir = join(root, 'apps');

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'dist' ? [] : tsFiles(p);
    return /\.(m|c)?tsx?$/.test(e.name) ? [p] : [];
  });
}

/** The module specifiers of `import ... from`, `export ... from`, `import('...')` and `import '...'`. */
function specifiers(text: string): string[] {
  const out: string[] = [];
  const re = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])([^'"\n]+)\1/g;
  for (const m of text.matchAll(re)) if (m[2] !== undefined) out.push(m[2]);
  return out;
}

/** The app a path lies in (`controller` for apps/controller/...), or undefined. */
function appOf(path: string): string | undefined {
  const rel = relative(appsDir, path);
  if (rel.startsWith('..') || rel === '') return undefined;
  return rel.split(sep)[0];
}

/** `file imports spec` lines where a file of one app imports a file of another. */
function crossAppImports(files: readonly string[]): string[] {
  const bad: string[] = [];
  for (const file of files) {
    const from = appOf(file);
    for (const spec of specifiers(readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      const to = appOf(resolve(dirname(file), spec));
      if (to !== undefined && to !== from) bad.push(`${relative(root, file)} imports ${spec}`);
    }
  }
  return bad;
}

describe('app boundaries', () => {
  it('no file under apps/<x> imports from apps/<y>', () => {
    const files = readdirSync(appsDir).flatMap((app) => {
      try {
        return tsFiles(join(appsDir, app, 'src'));
      } catch {
        return [];
      }
    });
    expect(files.length).toBeGreaterThan(50);
    expect(crossAppImports(files)).toEqual([]);
  });

  it('the check sees the forms an import takes', () => {
    const text = [
      "import { a } from '../../controller/src/x.js';",
      'export { b } from "../../host/src/y.js";',
      "const c = await import('../../seed/src/z.js');",
      "import '../../controller/src/side-effect.js';",
      "import type { T } from '@heddle/operator-api';",
    ].join('\n');
    expect(specifiers(text)).toEqual([
      '../../controller/src/x.js',
      '../../host/src/y.js',
      '../../seed/src/z.js',
      '../../controller/src/side-effect.js',
      '@heddle/operator-api',
    ]);
  });
});
