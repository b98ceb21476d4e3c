import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  type Daemon,
  HEDDLE,
  HEDDLE_HOST,
  powerOff,
  run,
  runJson,
  startDaemon,
  stopDaemon,
  waitFor,
} from './processes.js';

const tty = process.stdout.isTTY === true && process.env.NO_COLOR === undefined;
const paint = (code: string) => (s: string) => (tty ? `\x1b[${code}m${s}\x1b[0m` : s);
const bold = paint('1');
const dim = paint('2');
const green = paint('32');

/** The examples directory of the repository (the demo runs from apps/controller/dist). */
const EXAMPLES = resolve(import.meta.dirname, '..', '..', '..', 'examples');

/** The demo's policy, for the controller and the hosts: operator-approved cogs, native included. */
const POLICY = {
  version: 1,
  name: 'demo',
  description:
    'Cogs signed by a pinned publisher, on paired nodes, with any network (the native demo cog needs egress).',
  rules: [
    {
      id: 'demo-cogs',
      effect: 'permit',
      actions: ['workload.place', 'workload.load', 'workload.start', 'workload.stop', 'workload.unload'],
      kinds: ['cog'],
      min_package_trust: 'operator_attested',
      min_node_tier: 'paired',
      max_network: 'egress',
    },
  ],
};

let stepNo = 0;
const t0 = Date.now();
function step(title: string): void {
  stepNo++;
  console.log(`\n${bold(`${stepNo}. ${title}`)} ${dim(`(+${((Date.now() - t0) / 1000).toFixed(1)} s)`)}`);
}
function say(text: string): void {
  for (const line of text.split('\n')) console.log(`   ${line}`);
}
/** Runs `heddle <args>` and shows the command and its output. */
function show(cwd: string, args: readonly string[]): string {
  console.log(dim(`   $ heddle ${args.join(' ')}`));
  const r = run(HEDDLE, args, cwd);
  const text = (r.out + r.err).trimEnd();
  if (text.length > 0) say(text);
  if (r.code !== 0) say(dim(`(exit ${r.code})`));
  return r.out;
}

/** The whole demo; returns the exit code. */
export async function runDemo(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'heddle-demo-'));
  // Native workloads run as another user (`nobody` when the demo runs as root): it must be able to
  // pass through to its own directories.
  chmodSync(dir, 0o711);
  const daemons: Daemon[] = [];
  try {
    console.log(bold('Heddle demo: a controller and three hosts on loopback, placing signed cogs'));
    say(dim(`working in ${dir}`));

    step('Keys, trust and policy');
    runJson(HEDDLE, ['keygen', '--out', 'publisher.key'], dir);
    // cast: JSON this program (or the daemon it started) wrote itself, in the shape named
    const publisher = JSON.parse(readFileSync(join(dir, 'publisher.key'), 'utf8')) as { public_key: string };
    writeFileSync(
      join(dir, 'trust.json'),
      JSON.stringify({
        schema: 'heddle.trust.v1',
        keys: [{ id: 'publisher', role: 'publisher', public_key: publisher.public_key }],
      }),
    );
    writeFileSync(join(dir, 'policy.json'), JSON.stringify(POLICY, null, 2));
    const ctl = runJson<{ node_id: string; public_key: string }>(
      HEDDLE,
      ['init', '--home', 'controller', '--trust', 'trust.json', '--policy', 'policy.json', '--api-port', '0'],
      dir,
    );
    say(
      `a publisher key signs the cogs; the controller (${ctl.node_id}) and every host pin it in trust.json`,
    );
    say('the policy permits cogs from that publisher on paired nodes; everything else is denied');

    step('Three hosts: two with native and WASI routes, one WASI only');
    const hosts: { name: string; url: string; nodeId: string }[] = [];
    const specs = [
      ['laptop', 'native,wasi'],
      ['pi-5', 'native,wasi'],
      ['sensor-box', 'wasi'],
    ] as const;
    for (const [name, routes] of specs) {
      const home = join(dir, name);
      runJson(
        HEDDLE_HOST,
        [
          'init',
          '--dir',
          home,
          '--listen',
          '127.0.0.1:0',
          '--controller',
          ctl.public_key,
          '--trust',
          'trust.json',
          '--routes',
          routes,
        ],
        dir,
      );
      const configPath = join(home, 'heddle-host.json');
      // cast: JSON this program (or the daemon it started) wrote itself, in the shape named
      const config = JSON.parse(readFileSync(configPath, 'utf8')) as Record<string, unknown>;
      writeFileSync(join(home, 'policy.json'), JSON.stringify(POLICY));
      config.policy_file = 'policy.json';
      config.native = process.getuid?.() === 0 ? { run_as_user: 'nobody' } : { allow_host_user: true };
      writeFileSync(configPath, JSON.stringify(config, null, 2));
    }
    const started = await Promise.all(
      specs.map(([name]) =>
        startDaemon(
          name,
          HEDDLE_HOST,
          ['run', '--config', join(dir, name, 'heddle-host.json')],
          dir,
          'listening',
        ),
      ),
    );
    for (const [i, s] of started.entries()) {
      daemons.push(s.daemon);
      const name = specs[i]?.[0] ?? '?';
      hosts.push({ name, url: String(s.line.url), nodeId: String(s.line.node_id) });
      say(`${name.padEnd(10)} ${String(s.line.node_id)}  ${String(s.line.url)}  routes ${specs[i]?.[1]}`);
    }

    // Short lifecycle timers so the failover below takes seconds (defaults: refresh 10 s, dead 30 s).
    const ctlConfig = join(dir, 'controller', 'controller.json');
    writeFileSync(
      ctlConfig,
      JSON.stringify({
        // cast: JSON this program (or the daemon it started) wrote itself, in the shape named
        ...(JSON.parse(readFileSync(ctlConfig, 'utf8')) as Record<string, unknown>),
        refresh_secs: 1,
        lifecycle: { dead_after_secs: 3, reschedule_backoff_secs: 1 },
      }),
    );

    step('The controller daemon');
    const c = await startDaemon(
      'controller',
      HEDDLE,
      ['controller', 'run', '--home', 'controller'],
      dir,
      'listening',
    );
    daemons.push(c.daemon);
    say(`operator API on ${String(c.line.url ?? 'loopback')} (token in controller/api.token)`);

    step('Add the hosts: each is learned by a signed describe, its key trusted on first use');
    for (const h of hosts) show(dir, ['node', 'add', h.url, '--tier', 'paired', '--home', 'controller']);
    show(dir, ['node', 'ls', '--home', 'controller']);

    step('Build and sign the example cogs');
    for (const cog of ['wasi-cog', 'native-cog']) {
      runJson(HEDDLE, ['pkg', 'build', join(EXAMPLES, cog), '-o', cog, '--key', 'publisher.key'], dir);
      say(`${cog}: built and signed by the publisher key`);
    }

    step('Place the WASI cog, and explain why it went where it went');
    const wasi = show(dir, [
      'place',
      'wasi-cog',
      '--mode',
      'interval:5',
      '--explain',
      '--home',
      'controller',
    ]);
    step('Place the native cog (a sensor script): only the hosts with a native route qualify');
    show(dir, [
      'place',
      'native-cog',
      '--mode',
      'interval:2',
      '--set',
      'label=kitchen',
      '--home',
      'controller',
    ]);
    step('An order that cannot be placed says why, node by node');
    say(`native-cog pinned to ${hosts[2]?.name} (WASI only), as a dry run:`);
    show(dir, ['place', 'native-cog', '--node', hosts[2]?.nodeId ?? '', '--dry-run', '--home', 'controller']);
    void wasi;

    step('What runs where');
    await new Promise((r) => setTimeout(r, 1500));
    show(dir, ['ps', '--home', 'controller']);
    const instances = runJson<{ instances: { instance_id: string; workload: string; node_id: string }[] }>(
      HEDDLE,
      ['ps', '--home', 'controller'],
      dir,
    ).instances;
    for (const i of instances) show(dir, ['logs', i.instance_id, '--lines', '3', '--home', 'controller']);

    step('A host loses power: after dead_after its instances are placed again elsewhere');
    const native = instances.find((i) => i.workload === 'native-cog');
    const victim = hosts.find((h) => h.nodeId === native?.node_id);
    const victimDaemon = daemons.find((d) => d.name === victim?.name);
    if (victim === undefined || victimDaemon === undefined) throw new Error('no host runs the native cog');
    say(`kill -9 of ${victim.name} and of the workloads it started (a power loss); dead_after is 3 s here`);
    powerOff(victimDaemon, join(dir, victim.name, 'data'));
    const t = Date.now();
    const moved = await waitFor(() => {
      const now = runJson<{ instances: { state: string; node_id: string; workload: string }[] }>(
        HEDDLE,
        ['ps', '--home', 'controller'],
        dir,
      ).instances;
      return now.some(
        (i) => i.workload === 'native-cog' && i.state === 'running' && i.node_id !== victim.nodeId,
      );
    }, 60_000);
    if (!moved) throw new Error('the native cog was not placed again within 60 s');
    say(`running elsewhere ${((Date.now() - t) / 1000).toFixed(1)} s after the kill:`);
    show(dir, ['ps', '--home', 'controller']);

    step(`${victim.name} comes back: the instance it lost was replaced, so its copy is unloaded`);
    // It comes back where the controller knows it (it had asked for any free port at first).
    const victimConfig = join(dir, victim.name, 'heddle-host.json');
    // cast: JSON this program (or the daemon it started) wrote itself, in the shape named
    const vc = JSON.parse(readFileSync(victimConfig, 'utf8')) as { listen: { host: string; port: number } };
    vc.listen.port = Number(new URL(victim.url).port);
    writeFileSync(victimConfig, JSON.stringify(vc, null, 2));
    const back = await startDaemon(
      victim.name,
      HEDDLE_HOST,
      ['run', '--config', join(dir, victim.name, 'heddle-host.json')],
      dir,
      'listening',
    );
    daemons.splice(daemons.indexOf(victimDaemon), 1, back.daemon);
    const cleaned = await waitFor(
      () =>
        runJson<{ instances: { state: string; node_id: string }[] }>(
          HEDDLE,
          ['ps', '--home', 'controller'],
          dir,
        ).instances.every((i) => i.node_id !== victim.nodeId || i.state !== 'rescheduled'),
      30_000,
    );
    if (!cleaned) throw new Error(`the orphan on ${victim.name} was not unloaded within 30 s`);
    show(dir, ['ps', '--all', '--home', 'controller']);
    const live = runJson<{ instances: { instance_id: string; workload: string }[] }>(
      HEDDLE,
      ['ps', '--home', 'controller'],
      dir,
    ).instances;

    step('Stop and unload');
    for (const i of live) {
      show(dir, ['stop', i.instance_id, '--home', 'controller']);
      show(dir, ['unload', i.instance_id, '--home', 'controller']);
    }
    show(dir, ['ps', '--all', '--home', 'controller']);

    step('The audit chains verify');
    show(dir, ['chain', 'verify', join('controller', 'chain.jsonl')]);
    for (const h of specs) show(dir, ['chain', 'verify', join(h[0], 'data', 'chain.jsonl')]);

    step('Shut down');
    for (const d of daemons.splice(0).reverse()) say(`${d.name}: exit ${await stopDaemon(d)}`);
    console.log(
      `\n${green(bold('done'))} in ${((Date.now() - t0) / 1000).toFixed(1)} s: every request signed and verified, every decision governed and chained.`,
    );
    return 0;
  } catch (err) {
    console.error(`\ndemo failed: ${err instanceof Error ? err.message : String(err)}`);
    for (const d of daemons) if (d.stderr.length > 0) console.error(`${d.name} stderr:\n${d.stderr}`);
    return 1;
  } finally {
    await Promise.all(daemons.map((d) => stopDaemon(d)));
    rmSync(dir, { recursive: true, force: true });
  }
}
