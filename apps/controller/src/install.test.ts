// The apps install without the monorepo: each is packed with pnpm pack exactly as it would be
// published, and the heddle-host tarball is installed globally with npm into a scratch prefix,
// offline, then run as a real host that the controller (from source) places a cog onto. Needs the
// apps built (`turbo run build`; `npm test` builds first).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { loadKeyFile } from '@heddle/envelope';
import { ApiClient } from '@heddle/operator-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Daemon, kill, spawnController, waitFor, wasiPackage } from './daemon-fixtures.js';
import { runCaptured, tempDir } from './test-io.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const PNPM = join(ROOT, 'scripts', 'pnpm.mjs');

/** The environment without the npm_* settings a package manager running the tests may have set. */
const cleanEnv = (): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));

/** Packs `apps/<app>` with pnpm pack into `dir`; returns the tarball's path. */
function pack(app: string, dir: string): string {
  const appDir = join(ROOT, 'apps', app);
  if (!existsSync(join(appDir, 'dist', 'bin.js')))
    throw new Error(`apps/${app} is not built: run the build first`);
  execFileSync(process.execPath, [PNPM, '-C', appDir, 'pack', '--pack-destination', dir], {
    stdio: 'pipe',
    env: cleanEnv(),
  });
  const { name, version } = JSON.parse(readFileSync(join(appDir, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  return join(dir, `${name}-${version}.tgz`);
}

/** `npm install -g --offline` of `tarball` into `prefix` (no registry is asked: nothing to fetch). */
function installGlobally(tarball: string, prefix: string): void {
  execFileSync(
    'npm',
    [
      'install',
      '-g',
      '--prefix',
      prefix,
      '--offline',
      '--no-audit',
      '--no-fund',
      '--cache',
      join(prefix, '.npm-cache'),
      tarball,
    ],
    { stdio: 'pipe', env: { ...cleanEnv(), npm_config_registry: 'http://127.0.0.1:9/' } },
  );
}

/** Every file under `dir`. */
function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) =>
    statSync(join(dir, f)).isFile(),
  );
}

// A 0700 prefix: on a root host the WASI runner runs unprivileged, from a copy it can read
// (packages/runtime wasi-runner-copy.ts), so the installed host still offers runtime.wasi.
const work = tempDir();
const prefix = join(work, 'prefix');
const installed = join(prefix, 'lib', 'node_modules');
const hostBin = join(prefix, 'bin', 'heddle-host');
const ctlHome = join(work, 'ctl');
let tarballs: Record<'host' | 'seed' | 'controller', string>;
let controller: Daemon | undefined;
let host: Daemon | undefined;

beforeAll(() => {
  tarballs = { host: pack('host', work), seed: pack('seed', work), controller: pack('controller', work) };
  installGlobally(tarballs.host, prefix);
  installGlobally(tarballs.seed, prefix);
}, 60_000);

afterAll(async () => {
  await Promise.all([kill(controller), kill(host)]);
});

const VERSION = (
  JSON.parse(readFileSync(join(ROOT, 'apps/host/package.json'), 'utf8')) as { version: string }
).version;

/** A later version (99.0.0) of the packed heddle-host (the bundled version follows package.json). */
function laterTarball(): string {
  const nextTarball = join(work, 'heddle-host-99.0.0.tgz');
  if (existsSync(nextTarball)) return nextTarball;
  const next = join(work, 'next');
  mkdirSync(next);
  execFileSync('tar', ['-xzf', tarballs.host, '-C', next]);
  const manifest = join(next, 'package', 'package.json');
  writeFileSync(
    manifest,
    readFileSync(manifest, 'utf8').replace(`"version": "${VERSION}"`, '"version": "99.0.0"'),
  );
  // The bundled package.json sits in whichever file of the bundle holds it (bin.js or a chunk).
  const dist = join(next, 'package', 'dist');
  const bundled = `name: "heddle-host",\n  version: "${VERSION}"`;
  const files = readdirSync(dist).filter((f) => f.endsWith('.js'));
  const holding = files.filter((f) => readFileSync(join(dist, f), 'utf8').includes(bundled));
  expect(holding.length).toBe(1);
  for (const f of holding) {
    const file = join(dist, f);
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace(bundled, 'name: "heddle-host",\n  version: "99.0.0"'),
    );
  }
  execFileSync('tar', ['-czf', nextTarball, '-C', next, 'package']);
  return nextTarball;
}

describe('installable apps', () => {
  it('heddle-host and heddle-seed install offline from their tarballs: no dependency, no native addon', () => {
    for (const name of ['heddle-host', 'heddle-seed']) {
      const dir = join(installed, name);
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
      expect(manifest.dependencies, name).toBeUndefined();
      expect(manifest.private, name).toBeUndefined();
      const all = files(dir);
      expect(
        all.filter((f) => f.endsWith('.node') || f.startsWith('node_modules')),
        name,
      ).toEqual([]);
      const bundle = all.filter((f) => /\.m?js$/.test(f)).map((f) => readFileSync(join(dir, f), 'utf8'));
      expect(bundle.join('\n'), name).not.toMatch(/from ["']@heddle\/|better-sqlite3|bindings\(/);
      const bin = join(prefix, 'bin', name);
      expect(execFileSync(bin, ['--version'], { encoding: 'utf8' })).toBe(`${name} ${VERSION}\n`);
    }
  });

  it('the installed programs end quietly (exit 0) when their standard output is closed', async () => {
    const intoClosedPipe = (bin: string): Promise<{ code: number | null; stderr: string }> => {
      const child = spawn(bin, ['--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.destroy();
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => {
        stderr += c.toString();
      });
      return new Promise((r) => child.on('close', (code) => r({ code, stderr })));
    };
    for (const name of ['heddle-host', 'heddle-seed']) {
      expect(await intoClosedPipe(join(prefix, 'bin', name)), name).toEqual({ code: 0, stderr: '' });
    }
  });

  it('the heddle tarball bundles the libraries and depends only on better-sqlite3 (pg optional, for a PostgreSQL state)', () => {
    const manifest = JSON.parse(
      execFileSync('tar', ['-xzOf', tarballs.controller, 'package/package.json'], { encoding: 'utf8' }),
    ) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
      bin?: Record<string, string>;
      private?: boolean;
    };
    expect(Object.keys(manifest.dependencies ?? {})).toEqual(['better-sqlite3']);
    expect(Object.keys(manifest.optionalDependencies ?? {})).toContain('pg');
    expect(manifest.bin).toEqual({ heddle: './dist/bin.js' });
    expect(manifest.private).toBeUndefined();
  });

  it('the installed heddle-host runs as a real host the controller places a cog onto', async () => {
    const init = await runCaptured(['init', '--home', ctlHome, '--api-port', '0', '--json'], work);
    expect(init.code, init.err).toBe(0);
    const { public_key } = JSON.parse(init.out) as { public_key: string };
    writeFileSync(
      join(work, 'trust.json'),
      JSON.stringify({ schema: 'heddle.trust.v1', keys: [{ id: 'operator', role: 'operator', public_key }] }),
    );
    const hostDir = join(work, 'host');
    execFileSync(
      hostBin,
      [
        'init',
        '--dir',
        hostDir,
        '--listen',
        '127.0.0.1:0',
        '--controller',
        public_key,
        '--trust',
        'trust.json',
        '--routes',
        'wasi',
      ],
      { cwd: work, stdio: 'pipe' },
    );
    const { spawnLogged } = await import('@heddle/cli-kit/testing');
    host = spawnLogged(hostBin, ['run', '--config', join(hostDir, 'heddle-host.json')], { cwd: work });
    controller = spawnController(['controller', 'run', '--home', ctlHome], work);
    const [listening] = await Promise.all([
      waitFor(host, 'listening', 20_000),
      waitFor(controller, 'listening', 20_000),
    ]);
    expect(listening.version).toBe(VERSION);

    const client = ApiClient.fromHome(ctlHome);
    const added = await client.addNode(listening.url as string, { tier: 'paired' });
    expect(added.software).toEqual({ name: 'heddle-host', version: VERSION });
    const pkg = await wasiPackage(loadKeyFile(join(ctlHome, 'controller.key')));
    const placed = await client.place({ package_dir: pkg.dir, mode: { type: 'interval', secs: 30 } });
    expect(placed.status).toBe('placed');
    expect(placed.instance).toMatchObject({ node_id: added.node_id, workload: 'wasi-cog', state: 'running' });
    let lines: readonly string[] = [];
    for (let i = 0; i < 80 && lines.length === 0; i++) {
      lines = (await client.logs(placed.instance?.instance_id as string, 10)).lines;
      if (lines.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(lines.join('\n')).toContain('wasi-cog');

    const ls = await runCaptured(['node', 'ls', '--home', ctlHome], work);
    expect(ls.code, ls.err).toBe(0);
    const [header, row] = ls.out.split('\n');
    expect(header).toMatch(/^NODE +TIER +LIVENESS +VERSION /);
    expect(row?.split(/ +/)[3]).toBe(VERSION);
  }, 60_000);

  it('deploy/install.sh installs, upgrades and rolls back versioned prefixes; unit user and run_as_user agree', () => {
    const script = join(installed, 'heddle-host', 'deploy', 'install.sh');
    const key = 'ab'.repeat(32);
    const sh = (root: string, args: string[]): string =>
      execFileSync('sh', [script, ...args, '--root', root, '--no-users', '--no-systemd'], {
        cwd: work,
        encoding: 'utf8',
        env: cleanEnv(),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    const nextTarball = laterTarball();

    const root = join(work, 'root');
    const bin = join(root, 'usr/local/bin/heddle-host');
    const version = (): string => execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
    expect(sh(root, ['install', tarballs.host, '--controller', key])).toContain(
      `installed heddle-host ${VERSION}`,
    );
    expect(version()).toBe(`heddle-host ${VERSION}`);
    const config = JSON.parse(readFileSync(join(root, 'etc/heddle-host/heddle-host.json'), 'utf8')) as {
      data_dir: string;
      revocation_list: string;
      routes: string[];
      native: Record<string, unknown>;
      controllers: { public_key: string }[];
    };
    expect(config).toMatchObject({
      data_dir: join(root, 'var/lib/heddle-host'),
      routes: ['wasi'],
      native: {},
    });
    expect(config.controllers.map((c) => c.public_key)).toEqual([key]);
    const unit = readFileSync(join(root, 'etc/systemd/system/heddle-host.service'), 'utf8');
    expect(unit).toMatch(/^User=heddle$/m);
    // Under ProtectSystem=strict the host may write only below ReadWritePaths: its data directory and
    // the revocation list a controller pushes (workload.revoke writes it) must both be there.
    const writable = [...unit.matchAll(/^ReadWritePaths=(.+)$/gm)].flatMap((m) =>
      (m[1] as string).split(/\s+/).map((p) => join(root, p)),
    );
    expect(unit).toMatch(/^ProtectSystem=strict$/m);
    for (const path of [config.data_dir, resolve(join(root, 'etc/heddle-host'), config.revocation_list)]) {
      expect(
        writable.some((w) => path === w || path.startsWith(`${w}/`)),
        `${path} is outside ReadWritePaths`,
      ).toBe(true);
    }
    expect(existsSync(join(root, 'etc/systemd/system/heddle-host.service.d/native.conf'))).toBe(false);

    expect(sh(root, ['upgrade', nextTarball])).toContain(`upgraded heddle-host ${VERSION} -> 99.0.0`);
    expect(version()).toBe('heddle-host 99.0.0');
    expect(readlinkSync(join(root, 'opt/heddle-host/current'))).toBe('99.0.0');
    expect(sh(root, ['rollback'])).toContain(`rolled back heddle-host 99.0.0 -> ${VERSION}`);
    expect(version()).toBe(`heddle-host ${VERSION}`);
    expect(sh(root, ['status'])).toContain(`current: ${VERSION}`);

    // The native route: the drop-in runs the host as root and the config names the run-as user.
    const nativeRoot = join(work, 'native-root');
    sh(nativeRoot, ['install', tarballs.host, '--controller', key, '--native']);
    const nativeConfig = JSON.parse(
      readFileSync(join(nativeRoot, 'etc/heddle-host/heddle-host.json'), 'utf8'),
    );
    expect(nativeConfig).toMatchObject({
      routes: ['native', 'wasi'],
      native: { run_as_user: 'heddle-work' },
    });
    const dropIn = readFileSync(
      join(nativeRoot, 'etc/systemd/system/heddle-host.service.d/native.conf'),
      'utf8',
    );
    expect(dropIn).toMatch(/^User=root$/m);
    // Installing over it without --native would leave them disagreeing: refused.
    expect(() => sh(nativeRoot, ['install', tarballs.host])).toThrow(/disagree/);
  }, 60_000);

  it('install.sh works copied on its own, as docs/host.md "Install on a fleet" ships it', () => {
    // The fleet loop extracts only package/deploy/install.sh from the tarball and copies it over.
    const alone = join(work, 'alone');
    mkdirSync(alone);
    execFileSync('tar', ['-xzf', tarballs.host, '-C', alone, 'package/deploy/install.sh']);
    const root = join(work, 'alone-root');
    const r = spawnSync(
      'sh',
      [
        join(alone, 'package/deploy/install.sh'),
        'install',
        tarballs.host,
        '--controller',
        'cd'.repeat(32),
        '--native',
        '--root',
        root,
        '--no-users',
        '--no-systemd',
      ],
      { cwd: work, encoding: 'utf8', env: cleanEnv() },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(join(root, 'etc/systemd/system/heddle-host.service'), 'utf8')).toMatch(
      /^User=heddle$/m,
    );
    expect(readFileSync(join(root, 'etc/systemd/system/heddle-host.service.d/native.conf'), 'utf8')).toMatch(
      /^User=root$/m,
    );
  }, 60_000);

  it('install.sh upgrade rolls back by itself when the new version does not stay up, and forgets it', () => {
    const script = join(installed, 'heddle-host', 'deploy', 'install.sh');
    const root = join(work, 'rollback-root');
    const current = join(root, 'opt/heddle-host/current');
    // systemd as its documented contract says (`is-active` exits non-zero for a unit that is not
    // active): here 99.0.0 crashes at start, every other version stays up. `sleep` returns at once.
    const fake = join(work, 'fake-bin');
    mkdirSync(fake, { recursive: true });
    const calls = join(work, 'systemctl.calls');
    writeFileSync(
      join(fake, 'systemctl'),
      `#!/bin/sh\necho "$* $(readlink '${current}')" >> '${calls}'\n[ "$1" != is-active ] || [ "$(readlink '${current}')" != 99.0.0 ]\n`,
      { mode: 0o755 },
    );
    writeFileSync(join(fake, 'sleep'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const sh = (args: string[]) =>
      spawnSync('sh', [script, ...args, '--root', root, '--no-users'], {
        cwd: work,
        encoding: 'utf8',
        env: { ...cleanEnv(), PATH: `${fake}:${process.env.PATH ?? ''}` },
      });
    expect(sh(['install', tarballs.host, '--controller', 'ab'.repeat(32)]).status).toBe(0);
    writeFileSync(calls, '');
    const up = sh(['upgrade', laterTarball()]);
    expect(up.status, up.stdout).toBe(1);
    expect(up.stderr).toContain(`heddle-host 99.0.0 did not stay up: rolling back to ${VERSION}`);
    expect(readlinkSync(current)).toBe(VERSION);
    expect(readFileSync(calls, 'utf8').trim().split('\n')).toEqual([
      'restart heddle-host 99.0.0',
      'is-active --quiet heddle-host 99.0.0',
      `restart heddle-host ${VERSION}`,
      `is-active --quiet heddle-host ${VERSION}`,
    ]);
    // The failed version is not what `rollback` goes back to.
    expect(sh(['status']).stdout).toContain('previous: none');
    const back = sh(['rollback']);
    expect(back.status).toBe(1);
    expect(back.stderr).toContain('no previous version recorded');
    expect(readlinkSync(current)).toBe(VERSION);
  }, 60_000);
});
