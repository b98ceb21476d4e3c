// The import-direction check: every import in the workspace goes the way docs/architecture.md says.
//
// The documented direction is the layer table of docs/architecture.md (between `<!-- layers:start -->`
// and `<!-- layers:end -->`): each workspace package sits on one layer, and a package may depend only
// on packages of a lower layer. The check finds, from the files themselves:
//   - a workspace package missing from the layer table (a new package is placed on purpose);
//   - a package.json dependency on a package of the same or a higher layer;
//   - an import of a workspace package its package.json does not declare;
//   - a relative import that leaves its package's directory (an app reaching into another app's src).
// scripts/architecture.test.ts runs it in CI; `node scripts/import-direction.mjs` prints the findings.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { workspacePackages } from './dep-graph.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const LAYERS_START = '<!-- layers:start -->';
const LAYERS_END = '<!-- layers:end -->';
const SOURCE = /\.(?:ts|mts|cts|mjs|js)$/;

/**
 * The layer table: `| 0 | `@heddle/envelope` |` rows between the layer markers.
 * @param {string} doc
 * @returns {Map<string, number>}
 */
export function parseLayers(doc) {
  const a = doc.indexOf(LAYERS_START);
  const b = doc.indexOf(LAYERS_END);
  if (a < 0 || b < a) throw new Error(`docs/architecture.md has no ${LAYERS_START} ... ${LAYERS_END} table`);
  const layers = new Map();
  for (const line of doc.slice(a, b).split('\n')) {
    const m = /^\|\s*(\d+)\s*\|(.*)\|/.exec(line);
    if (!m) continue;
    for (const name of m[2].matchAll(/`([^`]+)`/g)) {
      if (layers.has(name[1])) throw new Error(`${name[1]} is on two layers of the table`);
      layers.set(name[1], Number(m[1]));
    }
  }
  return layers;
}

/**
 * The module specifiers a source text imports or re-exports (static and dynamic).
 * @param {string} text
 * @returns {string[]}
 */
export function importsOf(text) {
  const out = [];
  const patterns = [
    /(?:^|[\s;}])(?:import|export)\s[^'"`;]*?\sfrom\s*['"]([^'"]+)['"]/g,
    /(?:^|[\s;])import\s*['"]([^'"]+)['"]/g,
    /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const re of patterns) for (const m of text.matchAll(re)) out.push(m[1]);
  return out;
}

function filesUnder(dir) {
  if (!existsSync(dir)) return [];
  const out = [];
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry === 'dist') continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else if (SOURCE.test(entry) && !entry.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** The workspace package a specifier names (`@heddle/x/testing` names `@heddle/x`), if any. */
function workspaceTarget(spec, names) {
  for (const name of names) if (spec === name || spec.startsWith(`${name}/`)) return name;
  return undefined;
}

/**
 * Every finding for a workspace: an empty list means every import goes the documented way.
 * @param {{ name: string, dir: string, kind: string, deps: string[] }[]} pkgs
 * @param {Map<string, number>} layers
 * @param {(dir: string) => { file: string, text: string }[]} read the source files of a package dir
 * @returns {string[]}
 */
export function findViolations(pkgs, layers, read) {
  const findings = [];
  const names = pkgs.map((p) => p.name).sort((x, y) => y.length - x.length);
  for (const p of pkgs) {
    const mine = layers.get(p.name);
    if (mine === undefined) {
      findings.push(`${p.name} (${p.dir}) is not in the layer table of docs/architecture.md`);
      continue;
    }
    for (const d of p.deps) {
      const theirs = layers.get(d);
      if (theirs !== undefined && theirs >= mine) {
        findings.push(`${p.name} (layer ${mine}) depends on ${d} (layer ${theirs}): dependencies point down`);
      }
    }
    const declared = new Set(p.deps);
    for (const { file, text } of read(p.dir)) {
      for (const spec of importsOf(text)) {
        const target = workspaceTarget(spec, names);
        if (target !== undefined && target !== p.name && !declared.has(target)) {
          findings.push(`${file} imports ${spec}, which ${p.dir}/package.json does not declare`);
        }
        if (spec.startsWith('.')) {
          const resolved = resolve(dirname(join(ROOT, file)), spec);
          const home = join(ROOT, p.dir) + sep;
          if (!resolved.startsWith(home)) {
            findings.push(`${file} imports ${spec}, outside ${p.dir}: import the package instead`);
          }
        }
      }
    }
  }
  return findings;
}

/** The source files of a package directory, relative to the repository root. */
export function readSources(dir) {
  return filesUnder(join(ROOT, dir)).map((path) => ({
    file: relative(ROOT, path),
    text: readFileSync(path, 'utf8'),
  }));
}

/** The findings for this repository. */
export function checkRepository() {
  const layers = parseLayers(readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8'));
  return findViolations(workspacePackages(ROOT), layers, readSources);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const findings = checkRepository();
  for (const f of findings) process.stdout.write(`${f}\n`);
  process.exit(findings.length === 0 ? 0 : 1);
}
