import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  findPostgresBin,
  killedServerLingers,
  postgresSkipReason,
  startPostgres,
  type TestPostgres,
} from './test-postgres.js';

const skip = postgresSkipReason();

/** Runs one SQL statement through psql against the server (as the test superuser, over TCP). */
function psql(pg: TestPostgres, sql: string, url = pg.url): string {
  const bin = findPostgresBin();
  const exe = bin !== undefined && existsSync(join(bin, 'psql')) ? join(bin, 'psql') : 'psql';
  return execFileSync(exe, ['-XAtq', url, '-c', sql], {
    encoding: 'utf8',
    stdio: 'pipe',
  }).trim();
}

describe('killedServerLingers: a restart right after a kill is tried again', () => {
  it("knows PostgreSQL's own words for a killed server whose backends still hold the data directory", () => {
    // PostgreSQL 15's message, as a restart under load met it (the key and id vary).
    expect(
      killedServerLingers(
        'FATAL:  pre-existing shared memory block (key 4925493, ID 426026) is still in use\nHINT:  Terminate any old server processes',
      ),
    ).toBe(true);
    expect(killedServerLingers('FATAL:  lock file "postmaster.pid" already exists')).toBe(true);
    expect(killedServerLingers('FATAL:  password authentication failed for user "heddle"')).toBe(false);
    expect(killedServerLingers('LOG:  database system is ready to accept connections')).toBe(false);
  });
});

describe.skipIf(skip !== undefined)('startPostgres: a real PostgreSQL server for tests', () => {
  let pg: TestPostgres;
  beforeAll(async () => {
    pg = await startPostgres();
  }, 120_000);
  afterAll(async () => {
    await pg?.stop();
  });

  it('serves its database on 127.0.0.1 with password auth, as an unprivileged user', () => {
    expect(pg.url).toMatch(/^postgres:\/\/heddle:[^@]+@127\.0\.0\.1:\d+\/heddle_test$/);
    expect(psql(pg, 'select current_database()')).toBe('heddle_test');
    // The server process runs as a non-root account (PostgreSQL refuses root).
    const uid = statSync(`/proc/${pg.pid}`).uid;
    if (process.getuid?.() === 0) expect(uid).not.toBe(0);
    // A wrong password is refused (the URL's password is what lets us in).
    expect(() =>
      execFileSync('psql', ['-XAtqw', pg.url.replace(`:${pg.password}@`, ':wrong@'), '-c', 'select 1'], {
        stdio: 'pipe',
        env: { ...process.env, PGPASSWORD: '' },
      }),
    ).toThrow(/password authentication failed/);
  });

  it('creates further empty databases', async () => {
    const other = await pg.createDatabase('second_db');
    expect(psql(pg, 'select current_database()', other)).toBe('second_db');
  });

  it('restarts with its data kept (a fast shutdown, then a crash restart after SIGKILL)', async () => {
    psql(pg, 'create table if not exists t (v int); insert into t values (1)');
    const before = pg.pid;
    await pg.restart();
    expect(pg.pid).not.toBe(before);
    expect(psql(pg, 'select count(*) from t')).toBe('1');
    psql(pg, 'insert into t values (2)');
    await pg.restart({ crash: true });
    expect(psql(pg, 'select count(*) from t')).toBe('2');
  }, 120_000);

  it('kill() makes the server unreachable until restart()', async () => {
    const pid = pg.pid;
    await pg.kill();
    expect(existsSync(`/proc/${pid}`)).toBe(false);
    expect(() => psql(pg, 'select 1')).toThrow();
    await pg.restart();
    expect(psql(pg, 'select 1')).toBe('1');
  }, 120_000);

  it('stop() ends the server and removes its directory', async () => {
    const other = await startPostgres({ database: 'other' });
    const { dir, pid } = other;
    expect(existsSync(dir)).toBe(true);
    await other.stop();
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(`/proc/${pid}`)).toBe(false);
  }, 120_000);
});
