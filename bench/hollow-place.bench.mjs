// Benchmark (b) of issue 19: places per second end to end over real signed WebSockets, with
// `--hosts` hollow hosts (default 2,000) in another process (apps/hollow), a real controller daemon
// (SQLite state, file chain, gate) and placements through its operator API (`--concurrency` in flight,
// default 16, for `--seconds`, default 30). Baseline measured in the same run with the same library
// (@heddle/envelope): the Ed25519 bound, one core doing the two signs and two verifies every place
// costs (the controller signs the request and verifies the answer; the host verifies the request and
// signs the answer). Goal: places/s >= 0.5x that bound. Built CLIs: `pnpm build` first.
import { generateKeyPair, sign, verify } from '@heddle/envelope';
import { opsPerSecond, report } from './harness.mjs';
import { cpuMs, inFlight, startCluster } from './hollow-cluster.mjs';

const arg = (name, dflt) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt);
const HOSTS = arg('hosts', 2000);
const SECONDS = arg('seconds', 30);
const CONCURRENCY = arg('concurrency', 16);
const IDLE = arg('idle', 10);

// The bound: two signs and two verifies of a control message's size (a signed place request's
// canonical payload is about 600 bytes), with two keys, as one call does.
const ctlKeys = generateKeyPair();
const hostKeys = generateKeyPair();
const msg = new Uint8Array(600).fill(0x61);
const pair = () => {
  const s1 = sign(ctlKeys.secretKey, msg);
  verify(ctlKeys.publicKey, msg, s1);
  const s2 = sign(hostKeys.secretKey, msg);
  verify(hostKeys.publicKey, msg, s2);
};
const bound = opsPerSecond(pair, 2000);

const cluster = await startCluster({ hosts: HOSTS });
try {
  const { api } = cluster;
  const first = await api.place({
    package_dir: cluster.packageDir,
    mode: { type: 'listener' },
    values: { label: 'first' },
  });
  if (first.status !== 'placed') throw new Error(`first place: ${JSON.stringify(first)}`);
  const hash = first.instance.manifest_hash;
  const lat = [];
  let i = 0;
  // The background: the controller's health rounds (a describe and a listing of every host each
  // refresh) cost CPU on both sides whether or not anything is placed. Measured idle first, for
  // `--idle` seconds, and taken out of the CPU per place below.
  const idle0 = [cpuMs(cluster.controllerPid), cpuMs(cluster.hollowPid)];
  const ti = performance.now();
  await new Promise((r) => setTimeout(r, IDLE * 1000));
  const idleSecs = (performance.now() - ti) / 1000;
  const idle1 = [cpuMs(cluster.controllerPid), cpuMs(cluster.hollowPid)];
  const idleRate = [0, 1].map((k) =>
    idle0[k] === undefined || idle1[k] === undefined ? 0 : (idle1[k] - idle0[k]) / idleSecs,
  );
  const cpu0 = [cpuMs(cluster.controllerPid), cpuMs(cluster.hollowPid)];
  const t0 = performance.now();
  const end = t0 + SECONDS * 1000;
  const r = await inFlight(Number.MAX_SAFE_INTEGER, CONCURRENCY, async () => {
    if (performance.now() > end) return false;
    const n = i++;
    const t = performance.now();
    const a = await api.place({
      manifest_hash: hash,
      mode: { type: 'listener' },
      values: { label: `p${n}` },
    });
    if (a.status !== 'placed') throw new Error(`place ${n}: ${a.status}`);
    lat.push(performance.now() - t);
  });
  const elapsed = (performance.now() - t0) / 1000;
  const cpu1 = [cpuMs(cluster.controllerPid), cpuMs(cluster.hollowPid)];
  const perPlace = (k) =>
    cpu0[k] === undefined || cpu1[k] === undefined || lat.length === 0 ? 0 : (cpu1[k] - cpu0[k]) / lat.length;
  const netPerPlace = (k) =>
    lat.length === 0 ? 0 : Math.max(0, perPlace(k) - (idleRate[k] * elapsed) / lat.length);
  if (r.errors.length > 0) console.log(`  ${r.errors.length} places failed, first: ${r.errors[0].message}`);
  const rate = lat.length / elapsed;
  lat.sort((a, b) => a - b);
  const running = (await api.instances()).filter((p) => p.state === 'running').length;
  report(
    `hollow hosts, places end to end: ${HOSTS} hosts in another process, ${CONCURRENCY} in flight, ${SECONDS} s`,
    [
      ['Ed25519 bound (2 signs + 2 verifies)', bound, 'places/s'],
      ['places end to end', rate, 'places/s', rate / bound, 0.5],
      ['place p50', lat[Math.floor(lat.length / 2)] ?? 0, 'ms'],
      ['place p99', lat[Math.floor(lat.length * 0.99)] ?? 0, 'ms'],
      ['controller CPU per place (all)', perPlace(0), 'ms'],
      ['hollow hosts CPU per place (all)', perPlace(1), 'ms'],
      [`controller CPU idle (health rounds, ${IDLE} s)`, idleRate[0], 'ms per s'],
      [`hollow hosts CPU idle (${IDLE} s)`, idleRate[1], 'ms per s'],
      ['controller CPU per place (net of idle)', netPerPlace(0), 'ms'],
      ['hollow hosts CPU per place (net of idle)', netPerPlace(1), 'ms'],
      [
        'places per controller CPU second (net)',
        netPerPlace(0) > 0 ? 1000 / netPerPlace(0) : 0,
        'places/s',
        netPerPlace(0) > 0 ? 1000 / netPerPlace(0) / bound : 0,
        0.5,
      ],
      ['instances running', running, 'instances'],
      [`start ${HOSTS} hollow hosts`, cluster.startMs, 'ms'],
      [`enrol ${HOSTS} hosts (POST /v1/nodes)`, cluster.enrolMs, 'ms'],
    ],
  );
} finally {
  await cluster.close();
}
