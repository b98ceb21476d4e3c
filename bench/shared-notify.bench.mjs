// How fast a controller sharing a PostgreSQL state hears another's write (docs/state.md, "Several
// controllers: what each one sees of the others' writes"): two PostgresStateStores on one real server
// (from the machine's binaries, 127.0.0.1); store A writes a node record, store B's `watchShared`
// is told. Baseline: one synchronous store round trip (a read) in the same run. Then B's listener
// connection is killed (pg_terminate_backend) and the time to the re-read that follows its
// reconnect is measured, against `listenRetryMs` (the pause before it connects again).
//
// node bench/shared-notify.bench.mjs [--rounds=N]   (after a build of @heddle/control-plane)
import { PostgresStateStore } from '@heddle/control-plane/postgres';
import { startPostgres } from '@heddle/control-plane/testing';
import { report } from './harness.mjs';

const arg = (name, dflt) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a === undefined ? dflt : Number(a.slice(name.length + 3));
};
const ROUNDS = arg('rounds', 200);
const RETRY_MS = 500;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const p95 = (xs) => [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))];

const pg = await startPostgres({ durable: true });
try {
  const url = await pg.createDatabase('shared_notify');
  const a = PostgresStateStore.open(url, { resyncMs: 0 });
  const b = PostgresStateStore.open(url, { resyncMs: 0, listenRetryMs: RETRY_MS });
  let onMeta;
  let onResync;
  b.watchShared((c) => {
    if (c.kind === 'meta') onMeta?.(performance.now());
    if (c.kind === 'resync') onResync?.(performance.now());
  });
  while (!b.sharedStatus().listening) await sleep(10);
  await sleep(100);
  const roundTrip = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    b.getNodeMeta('none');
    roundTrip.push(performance.now() - t0);
  }
  const notice = [];
  for (let i = 0; i < ROUNDS; i++) {
    const told = new Promise((r) => {
      onMeta = r;
    });
    const t0 = performance.now();
    a.putNodeMeta({ node_id: `n${i}`, cordoned: true, labels: {}, updated_at_ms: i });
    notice.push((await told) - t0);
    await sleep(5);
  }
  const back = [];
  for (let i = 0; i < 10; i++) {
    const resynced = new Promise((r) => {
      onResync = r;
    });
    const t0 = performance.now();
    a.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE '%-listen' AND pid <> pg_backend_pid()",
    );
    back.push((await resynced) - t0);
  }
  a.close();
  b.close();
  report(`shared state: another controller's write told through LISTEN/NOTIFY (${ROUNDS} writes, fsync on)`, [
    ['store round trip, a read (baseline), median', median(roundTrip), 'ms'],
    ['write to notice told, median', median(notice), 'ms', median(notice) / median(roundTrip)],
    ['write to notice told, p95', p95(notice), 'ms', p95(notice) / median(roundTrip)],
    [`listenRetryMs (baseline)`, RETRY_MS, 'ms'],
    [
      'listener killed to the re-read after its reconnect, median of 10',
      median(back),
      'ms',
      median(back) / RETRY_MS,
    ],
  ]);
} finally {
  await pg.stop();
}
