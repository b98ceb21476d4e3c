import { createInterface } from 'node:readline';
import { badInput, errorFields, errorMessage, Logger, parseArgv, runUntilSignal } from '@heddle/cli-kit';
import { DEFAULT_POLICY, loadPolicyFile, type Policy } from '@heddle/gate';
import { ApiClient } from '@heddle/operator-api';
import { loadTrustFile, type TrustAnchors } from '@heddle/package';
import { AllowListPolicy } from '@heddle/protocol';
import { RUN } from '../command-defs.js';
import { parseControlLine, runControl } from '../control.js';
import { enrolHosts } from '../enrol.js';
import { HOSTS_FILE, HollowFleet } from '../fleet.js';
import type { CliIo } from '../io.js';
import { runOptions, seededRandom } from '../run-options.js';

function loadAnchors(path: string): TrustAnchors {
  try {
    return loadTrustFile(path);
  } catch (err) {
    throw badInput('trust_invalid', `--trust: ${path}: ${errorMessage(err)}`, 'trust', err);
  }
}

function loadPolicy(path: string | undefined): Policy {
  if (path === undefined) return DEFAULT_POLICY;
  try {
    return loadPolicyFile(path);
  } catch (err) {
    throw badInput('policy_invalid', `--policy: ${path}: ${errorMessage(err)}`, 'policy', err);
  }
}

/**
 * `heddle-hollow run`: starts the fleet, writes `<dir>/hosts.json`, logs `listening` (one JSON line),
 * enrols the hosts with a controller when `--enrol` names its home, then reads control lines (JSON,
 * docs/hollow.md) on standard input and answers each with one JSON line, until SIGTERM, SIGINT or a
 * `stop` line (the hosts then stop gracefully).
 */
export async function run(args: readonly string[], io: CliIo): Promise<number> {
  const a = parseArgv('heddle-hollow', RUN, args);
  const opts = runOptions(a, io.cwd);
  const log = new Logger((line) => io.out(line));
  const random = opts.seed === undefined ? Math.random : seededRandom(opts.seed);
  let errors = 0;
  const t0 = performance.now();
  const fleet = await HollowFleet.start({
    dir: opts.dir,
    count: opts.count,
    controllers: new AllowListPolicy({ publicKeys: [...opts.controllers] }),
    anchors: loadAnchors(opts.trust),
    policy: loadPolicy(opts.policy),
    tier: opts.tier,
    routes: opts.routes,
    runtime: { startLatencyMs: opts.startLatencyMs, failureRate: opts.failureRate, random },
    chain: opts.chain,
    listenHost: opts.listen,
    ...(opts.leaseSecs === undefined ? {} : { leaseMs: opts.leaseSecs * 1000 }),
    onError: (err) => {
      // Bounded: a fleet of thousands must not flood its log.
      if (errors++ < 100) log.error('host error', errorFields(err));
    },
  });
  log.info('listening', {
    hosts: opts.count,
    hosts_file: `${opts.dir}/${HOSTS_FILE}`,
    first_url: fleet.hosts[0]?.url ?? null,
    routes: opts.routes,
    start_latency_ms: opts.startLatencyMs,
    failure_rate: opts.failureRate,
    chain: opts.chain,
    ms: Math.round(performance.now() - t0),
  });
  if (opts.enrol !== undefined) {
    try {
      const r = await enrolHosts(ApiClient.fromHome(opts.enrol), fleet.entries(), { tier: opts.tier });
      log.info('enrolled', { hosts: r.added, ms: Math.round(r.ms) });
    } catch (err) {
      // The hosts would keep the process alive: a fleet that could not be enrolled stops and exits.
      log.error('enrolment failed', errorFields(err));
      await fleet.kill(fleet.hosts.map((h) => h.index));
      throw err;
    }
  }
  const lines = createInterface({ input: process.stdin });
  let queue = Promise.resolve();
  lines.on('line', (line) => {
    if (line.trim() === '') return;
    queue = queue.then(async () => {
      try {
        const c = parseControlLine(line);
        io.out(JSON.stringify(await runControl(fleet, c)));
        if (c.cmd === 'stop') process.kill(process.pid, 'SIGTERM');
      } catch (err) {
        io.out(JSON.stringify({ ok: false, error: errorFields(err) }));
      }
    });
  });
  try {
    return await runUntilSignal(async () => {
      lines.close();
      await fleet.stop();
    }, log);
  } finally {
    lines.close();
  }
}
