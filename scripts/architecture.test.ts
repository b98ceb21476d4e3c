import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderBlock, withBlock, workspacePackages } from './dep-graph.mjs';
import { checkRepository, findViolations, importsOf, parseLayers } from './import-direction.mjs';

const DOC = new URL('../docs/architecture.md', import.meta.url);

describe('docs/architecture.md matches the code', () => {
  it('the dependency diagram is the one generated from the package.json files', () => {
    const doc = readFileSync(DOC, 'utf8');
    const fresh = withBlock(doc, renderBlock(workspacePackages()));
    // Out of date: run `node scripts/dep-graph.mjs --write`.
    expect(doc).toBe(fresh);
  });

  it('every dependency and every import goes the documented direction', () => {
    expect(checkRepository()).toEqual([]);
  });

  it('no library depends on an app, and every app sits on the top layer', () => {
    const layers = parseLayers(readFileSync(DOC, 'utf8'));
    const pkgs = workspacePackages();
    const top = Math.max(...layers.values());
    for (const p of pkgs.filter((q) => q.kind === 'app')) expect(layers.get(p.name), p.name).toBe(top);
    for (const p of pkgs.filter((q) => q.kind === 'library'))
      expect(layers.get(p.name), p.name).toBeLessThan(top);
  });
});

describe('the import-direction check', () => {
  const layers = new Map([
    ['@x/low', 0],
    ['@x/mid', 1],
    ['@x/app', 2],
    ['@x/other-app', 2],
  ]);
  const pkgs = [
    { name: '@x/low', dir: 'packages/low', kind: 'library', deps: [] },
    { name: '@x/mid', dir: 'packages/mid', kind: 'library', deps: ['@x/low'] },
    { name: '@x/app', dir: 'apps/app', kind: 'app', deps: ['@x/mid'] },
    { name: '@x/other-app', dir: 'apps/other-app', kind: 'app', deps: [] },
  ];
  const files = (byDir: Record<string, string>) => (dir: string) =>
    byDir[dir] === undefined ? [] : [{ file: `${dir}/src/a.ts`, text: byDir[dir] }];

  it('passes a workspace whose imports all go down and are declared', () => {
    const read = files({
      'packages/mid': "import { a } from '@x/low';\nimport { b } from './b.js';",
      'apps/app': "import { c } from '@x/mid';\nconst d = await import('@x/mid/testing');",
    });
    expect(findViolations(pkgs, layers, read)).toEqual([]);
  });

  it('finds a dependency that points up', () => {
    const up = [...pkgs.slice(0, 1), { ...pkgs[1], deps: ['@x/low', '@x/app'] }, ...pkgs.slice(2)];
    expect(findViolations(up, layers, files({}))).toEqual([
      '@x/mid (layer 1) depends on @x/app (layer 2): dependencies point down',
    ]);
  });

  it('finds an import of a package the importer does not declare', () => {
    const found = findViolations(pkgs, layers, files({ 'packages/low': "export { x } from '@x/mid/sub';" }));
    expect(found).toEqual([
      'packages/low/src/a.ts imports @x/mid/sub, which packages/low/package.json does not declare',
    ]);
  });

  it("finds an app reaching into another app's src by a relative path", () => {
    const found = findViolations(
      pkgs,
      layers,
      files({ 'apps/app': "import { y } from '../../other-app/src/y.js';" }),
    );
    expect(found).toHaveLength(1);
    expect(found[0]).toContain('outside apps/app');
  });

  it('finds a package missing from the layer table', () => {
    const more = [...pkgs, { name: '@x/new', dir: 'packages/new', kind: 'library', deps: [] }];
    expect(findViolations(more, layers, files({}))).toEqual([
      '@x/new (packages/new) is not in the layer table of docs/architecture.md',
    ]);
  });

  it('reads static, re-export, side-effect and dynamic imports', () => {
    const text = [
      "import a from 'one';",
      "import type { B } from 'two';",
      "export * from 'three';",
      "import 'four';",
      "const m = await import('five');",
      'import {\n  c,\n  d,\n} from "six";',
    ].join('\n');
    expect(importsOf(text).sort()).toEqual(['five', 'four', 'one', 'six', 'three', 'two']);
  });

  it('refuses a layer table that puts one package on two layers', () => {
    const doc = '<!-- layers:start -->\n| 0 | `@x/a` |\n| 1 | `@x/a` |\n<!-- layers:end -->';
    expect(() => parseLayers(doc)).toThrow(/two layers/);
  });
});
