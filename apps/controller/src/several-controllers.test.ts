import { join } from 'node:path';
import { Logger } from '@heddle/cli-kit';
import { postgresSkipReason, startPostgres, type TestPostgres } from '@heddle/control-plane/testing';
import { ApiClient } from '@heddle/operator-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadControllerConfig } from './controller-config.js';
import { controllerHome as sharedHome } from './controller-home.test-util.js';
import { type RunningController, startController } from './daemon.js';
import { runCaptured, tempDir } from './test-io.js';

const SKIP = postgresSkipReason();
let pg: TestPostgres | undefined;
beforeAll(async () => {
  if (SKIP === undefined) pg = await startPostgres();
}, 60_000);
afterAll(async () => {
  await pg?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const controllerHome = (cwd: string, name: string, url: string): Promise<string> =>
  sharedHome(cwd, name, { refresh_secs: 1, leader_database_url: url, leader_refresh_secs: 1 });

describe.skipIf(SKIP !== undefined)('several controllers (a real PostgreSQL server)', () => {
  it('one leads, both answer who; a stopped leader is replaced and the takeover names its term', async () => {
    const url = await (pg as TestPostgres).createDatabase('two_controllers');
    const cwd = tempDir();
    const homes = [await controllerHome(cwd, 'a', url), await controllerHome(cwd, 'b', url)];
    const running: RunningController[] = [];
    try {
      for (const h of homes)
        running.push(
          await startController(loadControllerConfig(join(h, 'controller.json')), new Logger(() => {})),
        );
      const clients = homes.map((h) => ApiClient.fromHome(h));
      const health = () => Promise.all(clients.map((c) => c.health()));
      let hs = await health();
      for (let i = 0; i < 100 && !hs.some((h) => h.leadership?.leading); i++) {
        await sleep(50);
        hs = await health();
      }
      await sleep(1_100); // a refresh period later: both know who leads
      hs = await health();
      const leaders = hs.filter((h) => h.leadership?.leading);
      expect(leaders).toHaveLength(1);
      const first = leaders[0]?.controller as string;
      // Both serve the API, and both name the same leader and term.
      expect(hs.map((h) => [h.leadership?.leader, h.leadership?.epoch])).toEqual([
        [first, 1],
        [first, 1],
      ]);
      const li = hs.findIndex((h) => h.controller === first);
      const other = 1 - li;
      // The leader stops (a clean shutdown gives the lease up): the other leads at once, in term 2.
      const stoppedAt = Date.now();
      await running[li]?.stop('test');
      let took = 0;
      for (;;) {
        const h = await clients[other]?.health();
        if (h?.leadership?.leading) {
          took = Date.now() - stoppedAt;
          expect(h.leadership).toMatchObject({ leader: h.controller, epoch: 2 });
          break;
        }
        if (Date.now() - stoppedAt > 5_000) throw new Error('no takeover within 5 s');
        await sleep(20);
      }
      expect(took).toBeLessThan(2_000); // within two refresh periods (1 s)
      await running[other]?.stop('test');
      // Each chain verifies; the takeover's reference into the first leader's chain resolves.
      const v = await runCaptured(
        [
          'chain',
          'verify',
          join(homes[0] ?? '', 'chain.jsonl'),
          join(homes[1] ?? '', 'chain.jsonl'),
          '--json',
        ],
        cwd,
      );
      expect(v.code).toBe(0);
      expect(JSON.parse(v.out)).toMatchObject({
        ok: true,
        cross_refs: { ok: true, references: 1, resolved: 1, unresolved: [] },
      });
    } finally {
      for (const r of running) await r.stop('test').catch(() => undefined);
    }
  }, 60_000);
});
