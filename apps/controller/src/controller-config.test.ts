import { describe, expect, it } from 'vitest';
import { parseControllerConfig } from './controller-config.js';

const base = {
  schema: 'heddle.controller.v1',
  api: { host: '127.0.0.1', port: 0 },
  key_file: 'k',
  trust_file: 't',
  policy_file: 'p',
  revocation_list: 'r',
  state_db: 's',
  chain_file: 'c',
  data_dir: 'd',
};

describe('controller.json lifecycle section', () => {
  it('maps the lifecycle timers to control-plane tunables in milliseconds', () => {
    const c = parseControllerConfig(
      {
        ...base,
        lifecycle: {
          dead_after_secs: 3,
          reschedule_timeout_secs: 20,
          reschedule_backoff_secs: 2,
          reschedule_backoff_max_secs: 60,
          max_reschedules: 4,
          clock_skew_warn_secs: 5,
        },
      },
      '/h/controller.json',
    );
    expect(c.lifecycle).toEqual({
      deadAfterMs: 3_000,
      suspectAfterMs: 3_000,
      rescheduleTimeoutMs: 20_000,
      rescheduleBackoffMs: 2_000,
      rescheduleBackoffMaxMs: 60_000,
      maxReschedules: 4,
      clockSkewWarnMs: 5_000,
    });
  });

  it('keeps the defaults when the section is absent, and the default suspect time below a long dead_after', () => {
    expect(parseControllerConfig(base, '/h/controller.json').lifecycle).toEqual({});
    expect(parseControllerConfig(base, '/h/controller.json').reconcileTimeoutMs).toBeUndefined();
    expect(
      parseControllerConfig({ ...base, reconcile_timeout_secs: 3 }, '/h/controller.json').reconcileTimeoutMs,
    ).toBe(3_000);
    const c = parseControllerConfig({ ...base, lifecycle: { dead_after_secs: 120 } }, '/h/controller.json');
    expect(c.lifecycle).toEqual({ deadAfterMs: 120_000, suspectAfterMs: 15_000 });
  });

  it.each([
    [{ dead_after_secs: 0 }, 'lifecycle.dead_after_secs'],
    [{ reschedule_timeout_secs: 300 }, 'lifecycle.reschedule_timeout_secs'],
    [{ max_reschedules: -1 }, 'lifecycle.max_reschedules'],
    [{ clock_skew_warn_secs: 30 }, 'lifecycle.clock_skew_warn_secs'],
    [{ typo: 1 }, 'lifecycle.typo'],
  ])('refuses %o naming %s', (lifecycle, field) => {
    expect(() => parseControllerConfig({ ...base, lifecycle }, '/h/controller.json')).toThrow(
      expect.objectContaining({ code: 'config_invalid', field }),
    );
  });
});

describe('controller.json log_level and metrics_listen', () => {
  it('default to info and no metrics listener, and read as written', () => {
    const d = parseControllerConfig(base, '/h/controller.json');
    expect([d.logLevel, d.metricsListen]).toEqual(['info', undefined]);
    const c = parseControllerConfig(
      { ...base, log_level: 'warn', metrics_listen: { host: '127.0.0.1', port: 9463 } },
      '/h/controller.json',
    );
    expect([c.logLevel, c.metricsListen]).toEqual(['warn', { host: '127.0.0.1', port: 9463 }]);
  });

  it('refuse a level that is not one, naming log_level, and a bad port naming metrics_listen.port', () => {
    expect(() => parseControllerConfig({ ...base, log_level: 'verbose' }, '/h/c.json')).toThrow(
      expect.objectContaining({ code: 'config_invalid', field: 'log_level' }),
    );
    expect(() =>
      parseControllerConfig({ ...base, metrics_listen: { host: '127.0.0.1', port: -1 } }, '/h/c.json'),
    ).toThrow(expect.objectContaining({ code: 'config_invalid', field: 'metrics_listen.port' }));
  });
});

describe('controller.json api.remote', () => {
  const failure = (v: unknown): { code?: string; field?: string } => {
    try {
      parseControllerConfig(v, '/h/controller.json');
    } catch (err) {
      return err as { code?: string; field?: string };
    }
    throw new Error('accepted');
  };

  it('resolves the certificate files against the home; none means self-signed', () => {
    const c = parseControllerConfig(
      {
        ...base,
        api: {
          ...base.api,
          remote: { host: '0.0.0.0', port: 7443, tls_cert_file: 'c.pem', tls_key_file: '/k.pem' },
        },
      },
      '/h/controller.json',
    );
    expect(c.api.remote).toEqual({
      host: '0.0.0.0',
      port: 7443,
      tls: { certFile: '/h/c.pem', keyFile: '/k.pem' },
    });
    const s = parseControllerConfig(
      { ...base, api: { ...base.api, remote: { host: '::', port: 0 } } },
      '/h/controller.json',
    );
    expect(s.api.remote).toEqual({ host: '::', port: 0, tls: undefined });
    expect(parseControllerConfig(base, '/h/controller.json').api.remote).toBeUndefined();
  });

  it('refuses a bad remote section naming the field', () => {
    const remote = (r: unknown) => failure({ ...base, api: { ...base.api, remote: r } });
    expect(remote({ host: 'example.com', port: 1 })).toMatchObject({
      code: 'config_invalid',
      field: 'api.remote.host',
    });
    expect(remote({ host: '127.0.0.2', port: 70000 })).toMatchObject({ field: 'api.remote.port' });
    expect(remote({ host: '127.0.0.2', port: 1, tls_cert_file: 'c.pem' })).toMatchObject({
      field: 'api.remote.tls_cert_file',
    });
    expect(remote({ host: '127.0.0.2', port: 1, tls: true })).toMatchObject({ field: 'api.remote.tls' });
    // The plain listener stays on loopback.
    expect(failure({ ...base, api: { host: '0.0.0.0', port: 1 } })).toMatchObject({ field: 'api.host' });
  });
});

describe('controller.json state section', () => {
  const refusal = (state: unknown): { code: string; field: string | undefined; message: string } => {
    try {
      parseControllerConfig({ ...base, state }, '/h/controller.json');
    } catch (err) {
      // cast: parseControllerConfig throws CliError, which has these fields
      return err as { code: string; field: string | undefined; message: string };
    }
    throw new Error('expected a refusal');
  };

  it('defaults to SQLite at state_db; kind sqlite says the same', () => {
    expect(parseControllerConfig(base, '/h/controller.json').state).toEqual({ kind: 'sqlite', path: '/h/s' });
    expect(parseControllerConfig({ ...base, state: { kind: 'sqlite' } }, '/h/controller.json').state).toEqual(
      {
        kind: 'sqlite',
        path: '/h/s',
      },
    );
  });

  it('takes PostgreSQL by URL or by parts, the password file relative to the config', () => {
    const byUrl = parseControllerConfig(
      {
        ...base,
        state: {
          kind: 'postgres',
          url: 'postgres://heddle@db:5432/heddle',
          password_file: 'pg.pw',
          max_retries: 3,
        },
      },
      '/h/controller.json',
    ).state;
    expect(byUrl).toMatchObject({
      kind: 'postgres',
      url: 'postgres://heddle@db:5432/heddle',
      passwordFile: '/h/pg.pw',
      maxRetries: 3,
    });
    const byParts = parseControllerConfig(
      {
        ...base,
        state: { kind: 'postgres', host: 'db', database: 'heddle', user: 'heddle', call_timeout_ms: 5000 },
      },
      '/h/controller.json',
    ).state;
    expect(byParts).toMatchObject({
      kind: 'postgres',
      host: 'db',
      port: undefined,
      database: 'heddle',
      callTimeoutMs: 5000,
    });
  });

  it('joins the leadership lease with a PostgreSQL state or a leader_database_url, alone otherwise', () => {
    expect(parseControllerConfig(base, '/h/controller.json').leader).toBeUndefined();
    const pgState = { kind: 'postgres', url: 'postgres://heddle@db:5432/heddle' };
    expect(parseControllerConfig({ ...base, state: pgState }, '/h/controller.json').leader).toEqual({
      databaseUrl: undefined,
      refreshMs: 5_000,
    });
    expect(
      parseControllerConfig(
        { ...base, leader_database_url: 'postgres://l@db/lease', leader_refresh_secs: 2 },
        '/h/controller.json',
      ).leader,
    ).toEqual({ databaseUrl: 'postgres://l@db/lease', refreshMs: 2_000 });
    expect(() =>
      parseControllerConfig({ ...base, leader_database_url: 'http://db' }, '/h/controller.json'),
    ).toThrow(/leader_database_url/);
    expect(() =>
      parseControllerConfig(
        { ...base, leader_database_url: 'postgres://db/x', leader_refresh_secs: 0 },
        '/h/c.json',
      ),
    ).toThrow(/leader_refresh_secs/);
  });

  it('refuses a bad state section with config_invalid, naming the field', () => {
    expect(refusal({ kind: 'mysql' })).toMatchObject({ code: 'config_invalid', field: 'state.kind' });
    expect(refusal({ kind: 'postgres' })).toMatchObject({ code: 'config_invalid', field: 'state.host' });
    expect(refusal({ kind: 'postgres', host: 'db', user: 'u' })).toMatchObject({ field: 'state.database' });
    expect(refusal({ kind: 'postgres', url: 'postgres://db/x', host: 'db' })).toMatchObject({
      field: 'state.host',
    });
    expect(refusal({ kind: 'postgres', url: 'http://db/x' })).toMatchObject({ field: 'state.url' });
    expect(refusal({ kind: 'postgres', url: 'postgres://db/x', port: 99999 })).toMatchObject({
      field: 'state.port',
    });
    expect(refusal({ kind: 'postgres', url: 'postgres://db/x', pasword_file: 'x' })).toMatchObject({
      field: 'state.pasword_file',
      message: expect.stringContaining('unknown field'),
    });
    expect(refusal({ kind: 'sqlite', url: 'postgres://db/x' })).toMatchObject({ field: 'state.url' });
  });
});
