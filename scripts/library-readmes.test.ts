// The libraries as a consumer gets them: every public package under packages/ is packed as a release
// packs it, the tarballs are installed with npm (one install) into a scratch project in a temp dir,
// and the first ```ts block under each README's "## Example" heading is typechecked against the
// packed types and run there, from an empty working directory. So a README example cannot rot, and
// cannot lean on files of this repository. The same install checks the published manifests (ranges,
// engines, ESM-only exports), that require() is refused cleanly, that `@heddle/envelope/browser`
// bundles for the browser, and that one small helper does not pull in the whole package.
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ESM script without types
import { packAll, publicPackages, run } from './packing.mjs';

interface Pkg {
  name: string;
  version: string;
  dir: string;
  manifest: Record<string, unknown>;
}
interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const work = mkdtempSync(join(tmpdir(), 'heddle-consumer-'));
const app = join(work, 'app');
afterAll(() => rmSync(work, { recursive: true, force: true }));

const libraries = (publicPackages(root) as Pkg[]).filter((p) => dirname(p.dir) === join(root, 'packages'));
const short = (p: Pkg): string => p.name.replace('@heddle/', '');

/** npm and node children get this process's environment without the outer pnpm's npm_* settings. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) {
    if (k.startsWith('npm_') || k.startsWith('PNPM_') || k === 'NODE_OPTIONS') delete env[k];
  }
  return env;
}

/**
 * The first ```ts fenced block after the second-level heading that starts with `heading` and before
 * the next second-level heading. Undefined when there is none.
 */
function readmeBlock(markdown: string, heading = 'Example'): string | undefined {
  const sections = markdown.split(/^(?=## )/m);
  const section = sections.find((s) => s.startsWith(`## ${heading}`));
  return section === undefined ? undefined : /^```ts\n([\s\S]*?)^```$/m.exec(section)?.[1];
}

const examples = new Map<string, string | undefined>();
let tarballs: string[] = [];
let install: RunResult;
let typecheck: RunResult;
const runs = new Map<string, Promise<RunResult>>();

beforeAll(async () => {
  for (const p of libraries) {
    if (!existsSync(join(p.dir, 'dist'))) throw new Error(`${p.name} is not built: run the build first`);
    examples.set(short(p), readmeBlock(readFileSync(join(p.dir, 'README.md'), 'utf8')));
  }
  const dest = join(work, 'tarballs');
  mkdirSync(dest, { recursive: true });
  tarballs = await packAll(join(root, 'scripts', 'pnpm.mjs'), libraries, dest);

  // One npm install of every tarball; third-party dependencies come from the registry. Install
  // scripts are skipped: the one native addon (better-sqlite3, for the control plane's SQLite store)
  // would compile from source for minutes, so it is held to the workspace's version (within the
  // published range) and the workspace's build of it is copied in.
  mkdirSync(join(app, 'src'), { recursive: true });
  const dependencies = Object.fromEntries(libraries.map((p, i) => [p.name, `file:${tarballs[i]}`]));
  const pnpmStore = join(root, 'node_modules', '.pnpm');
  const sqliteVersion = readdirSync(pnpmStore)
    .find((d) => d.startsWith('better-sqlite3@'))
    ?.slice('better-sqlite3@'.length);
  const overrides = sqliteVersion === undefined ? {} : { 'better-sqlite3': sqliteVersion };
  // better-sqlite3 is an optional peer of @heddle/control-plane (only its ./sqlite entry loads it): a
  // consumer of the SQLite store installs it, as the control-plane README says.
  const sqliteDependency = sqliteVersion === undefined ? {} : { 'better-sqlite3': sqliteVersion };
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify(
      {
        name: 'consumer',
        private: true,
        type: 'module',
        dependencies: { ...dependencies, ...sqliteDependency },
        overrides,
      },
      null,
      2,
    ),
  );
  install = await run(
    'npm',
    ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'],
    { cwd: app, env: cleanEnv(), timeoutMs: 240_000 },
  );
  if (install.code !== 0) return;
  const sqlite = join(app, 'node_modules', 'better-sqlite3');
  if (existsSync(sqlite)) {
    const want = JSON.parse(readFileSync(join(sqlite, 'package.json'), 'utf8')).version;
    const addon = join(
      pnpmStore,
      `better-sqlite3@${want}`,
      'node_modules',
      'better-sqlite3',
      'build',
      'Release',
    );
    mkdirSync(join(sqlite, 'build', 'Release'), { recursive: true });
    if (existsSync(join(addon, 'better_sqlite3.node'))) {
      copyFileSync(
        join(addon, 'better_sqlite3.node'),
        join(sqlite, 'build', 'Release', 'better_sqlite3.node'),
      );
    } else {
      // Compile it against this Node's own headers (no download), as scripts/pnpm.mjs does.
      const env = { ...cleanEnv(), npm_config_nodedir: join(dirname(process.execPath), '..') };
      const rebuilt = await run('npm', ['rebuild', 'better-sqlite3'], { cwd: app, env, timeoutMs: 400_000 });
      if (rebuilt.code !== 0) throw new Error(`better-sqlite3 ${want} did not build:\n${rebuilt.stderr}`);
    }
  }

  // Typecheck and compile the examples as a consumer's strict NodeNext project would.
  // The envelope README's browser example is typechecked with them (the bundling test runs it).
  for (const [name, code] of examples)
    if (code !== undefined) writeFileSync(join(app, 'src', `${name}.ts`), code);
  const browserExample = readmeBlock(
    readFileSync(join(root, 'packages', 'envelope', 'README.md'), 'utf8'),
    'In the browser',
  );
  if (browserExample !== undefined) writeFileSync(join(app, 'src', 'envelope-browser.ts'), browserExample);
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        skipLibCheck: true,
        rootDir: 'src',
        outDir: 'out',
        types: ['node'],
        typeRoots: [join(root, 'node_modules', '@types')],
      },
      include: ['src'],
    }),
  );
  typecheck = await run(
    process.execPath,
    [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app],
    {
      cwd: app,
      env: cleanEnv(),
    },
  );
  // tsc emits even with type errors, so each example also runs (and reports its own failure).
  for (const name of examples.keys()) {
    const file = join(app, 'out', `${name}.js`);
    if (!existsSync(file)) continue;
    const cwd = mkdtempSync(join(work, `run-${name}-`));
    runs.set(name, run(process.execPath, [file], { cwd, env: cleanEnv(), timeoutMs: 60_000 }));
  }
  await Promise.all(runs.values());
}, 480_000);

describe('library READMEs, run from the packed tarballs', () => {
  it('installs every packed library with one npm install', () => {
    expect(install.code, install.stderr).toBe(0);
    expect(libraries.length).toBeGreaterThanOrEqual(10);
  });

  it('every library README has a ```ts block under "## Example"', () => {
    const missing = [...examples].filter(([, code]) => code === undefined).map(([name]) => name);
    expect(missing).toEqual([]);
  });

  it('the examples typecheck against the packed types (strict, NodeNext)', () => {
    expect(typecheck.stdout + typecheck.stderr).toBe('');
    expect(typecheck.code).toBe(0);
  });

  it.each(libraries.map(short))('the %s example runs in an empty directory and exits 0', async (name) => {
    const r = await runs.get(name);
    expect(r, `no compiled example for ${name}`).toBeDefined();
    expect(r?.code, `${r?.stderr}\n${r?.stdout}`).toBe(0);
  });
});

describe('published manifests', () => {
  it('use ranges for dependencies, say engines node >=20.19, and claim ESM only', () => {
    expect(tarballs).toHaveLength(libraries.length);
    for (const name of libraries.map(short)) {
      const m = JSON.parse(readFileSync(join(app, 'node_modules', '@heddle', name, 'package.json'), 'utf8'));
      expect(m.engines, m.name).toEqual({ node: '>=20.19' });
      expect(m.type, m.name).toBe('module');
      for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies']) {
        for (const [dep, range] of Object.entries((m[field] ?? {}) as Record<string, string>)) {
          expect(range, `${m.name} ${field}.${dep}`).toMatch(/^[\^~]\d+\.\d+\.\d+$/);
        }
      }
      expect(m.main, m.name).toBeUndefined();
      expect(m.types, m.name).toBeUndefined();
      for (const [subpath, target] of Object.entries(m.exports as Record<string, unknown>)) {
        if (subpath === './package.json') continue;
        // Only the `import` condition: a `require`, `default` or top-level `types` condition would
        // tell CommonJS consumers (and TypeScript) that require() works, and it does not.
        expect(Object.keys(target as object), `${m.name} exports ${subpath}`).toEqual(['import']);
        const imp = (target as { import: Record<string, string> }).import;
        expect(Object.keys(imp), `${m.name} exports ${subpath}`).toEqual(['types', 'default']);
        for (const file of Object.values(imp)) {
          expect(existsSync(join(app, 'node_modules', '@heddle', name, file)), `${m.name} ${file}`).toBe(
            true,
          );
        }
      }
    }
  });

  it('require() of a library is refused up front (ERR_PACKAGE_PATH_NOT_EXPORTED), not half-loaded', async () => {
    const names = JSON.stringify(libraries.map((p) => p.name));
    const r = await run(
      process.execPath,
      [
        '-e',
        `const out = {}; for (const n of ${names}) { try { require(n); out[n] = 'loaded'; } catch (e) { out[n] = e.code; } } console.log(JSON.stringify(out));`,
      ],
      { cwd: app, env: cleanEnv() },
    );
    expect(r.code, r.stderr).toBe(0);
    const got = JSON.parse(r.stdout) as Record<string, string>;
    for (const p of libraries) expect(got[p.name], p.name).toBe('ERR_PACKAGE_PATH_NOT_EXPORTED');
  });
});

describe('@heddle/envelope in bundles', () => {
  it("the README's browser example bundles for the browser (a node: import fails the build) and runs", async () => {
    const readme = readFileSync(join(root, 'packages', 'envelope', 'README.md'), 'utf8');
    const code = readmeBlock(readme, 'In the browser');
    expect(code, 'a ```ts block under "## In the browser" in the envelope README').toBeDefined();
    expect(code).toContain("from '@heddle/envelope/browser'");
    const entry = join(app, 'browser-entry.ts');
    writeFileSync(entry, code ?? '');
    const out = await build({
      entryPoints: [entry],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      outfile: join(app, 'browser-bundle.mjs'),
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(out.metafile.inputs);
    expect(inputs.filter((i) => i.startsWith('node:') || i.includes('hash-wasm'))).toEqual([]);
    expect(inputs.some((i) => i.includes('node_modules/@heddle/envelope/dist/browser.js'))).toBe(true);
    const r = await run(process.execPath, [join(app, 'browser-bundle.mjs')], { cwd: app, env: cleanEnv() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('true\nfalse\n');
  });

  it('importing only toHex bundles to a few kilobytes, not the whole package', async () => {
    const entry = join(app, 'to-hex-entry.mjs');
    writeFileSync(
      entry,
      "import { toHex } from '@heddle/envelope';\nconsole.log(toHex(new Uint8Array([1, 2])));\n",
    );
    const out = await build({
      entryPoints: [entry],
      bundle: true,
      platform: 'node',
      format: 'esm',
      minify: true,
      write: false,
      logLevel: 'silent',
    });
    const bytes = out.outputFiles[0]?.contents.length ?? 0;
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThan(4_096);
  });
});
