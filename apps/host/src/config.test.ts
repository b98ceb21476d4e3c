import { CliError } from '@heddle/cli-kit';
import { describe, expect, it } from 'vitest';
import { HOST_CONFIG_SCHEMA, parseHostConfig } from './config.js';

const BASE = {
  schema: HOST_CONFIG_SCHEMA,
  listen: { host: '127.0.0.1', port: 0 },
  key_file: 'node.key',
  controllers: [],
  trust_file: 'trust.json',
  revocation_list: 'revocations.json',
  routes: ['native'],
  tier: 'paired',
  data_dir: 'data',
};

const refusal = (value: unknown): CliError => {
  try {
    parseHostConfig(value, '/etc/heddle-host.json');
  } catch (err) {
    expect(err).toBeInstanceOf(CliError);
    return err as CliError;
  }
  throw new Error('accepted');
};

describe('supervisor and controller lease configuration', () => {
  it('defaults: the lease off; checks every 1 s, 3 restarts per 10 minutes, 1 s doubling to 30 s', () => {
    const c = parseHostConfig(BASE, '/etc/heddle-host.json');
    expect(c.controllerLeaseSecs).toBeUndefined();
    expect(c.supervisor).toEqual({
      intervalMs: 1000,
      maxRestarts: 3,
      windowSecs: 600,
      backoffInitialMs: 1000,
      backoffMaxMs: 30_000,
    });
  });

  it('reads the fields as written', () => {
    const c = parseHostConfig(
      {
        ...BASE,
        controller_lease_secs: 90,
        supervisor: {
          interval_ms: 250,
          max_restarts: 0,
          window_secs: 60,
          backoff_initial_ms: 50,
          backoff_max_ms: 50,
        },
      },
      '/etc/heddle-host.json',
    );
    expect(c.controllerLeaseSecs).toBe(90);
    expect(c.supervisor).toEqual({
      intervalMs: 250,
      maxRestarts: 0,
      windowSecs: 60,
      backoffInitialMs: 50,
      backoffMaxMs: 50,
    });
  });

  it.each([
    [{ controller_lease_secs: 0 }, 'controller_lease_secs', 'expected 1 to 86400 seconds'],
    [{ controller_lease_secs: 1.5 }, 'controller_lease_secs', 'expected an integer number of seconds'],
    [{ supervisor: { interval_ms: 5 } }, 'supervisor.interval_ms', 'expected 10 to 3600000 ms'],
    [{ supervisor: { max_restarts: -1 } }, 'supervisor.max_restarts', 'expected 0 to 1000 restarts'],
    [{ supervisor: { window_secs: 0 } }, 'supervisor.window_secs', 'expected 1 to 604800 seconds'],
    [{ supervisor: { backoff_initial_ms: 1 } }, 'supervisor.backoff_initial_ms', 'expected 10 to 3600000 ms'],
    [{ supervisor: { restarts: 3 } }, 'supervisor', ''],
    [{ supervisor: { backoff_initial_ms: 60_000 } }, 'supervisor.backoff_max_ms', 'must not be below'],
  ])('refuses %j naming %s', (extra, field, message) => {
    const err = refusal({ ...BASE, ...extra });
    expect(err.code).toBe('config_invalid');
    expect(err.field).toBe(field);
    expect(err.message).toContain(`${field}: ${message}`);
  });
});

describe('log_level and metrics_listen', () => {
  it('default to info and no metrics listener', () => {
    const c = parseHostConfig(BASE, '/etc/heddle-host.json');
    expect([c.logLevel, c.metricsListen]).toEqual(['info', undefined]);
  });

  it('read as written', () => {
    const c = parseHostConfig(
      { ...BASE, log_level: 'debug', metrics_listen: { host: '127.0.0.1', port: 9464 } },
      '/etc/heddle-host.json',
    );
    expect([c.logLevel, c.metricsListen]).toEqual(['debug', { host: '127.0.0.1', port: 9464 }]);
  });

  it.each([
    [{ log_level: 'trace' }, 'log_level'],
    [{ metrics_listen: { host: '127.0.0.1' } }, 'metrics_listen.port'],
    [{ metrics_listen: { host: '127.0.0.1', port: 70000 } }, 'metrics_listen.port'],
    [{ metrics_listen: { host: '', port: 1 } }, 'metrics_listen.host'],
  ])('refuse %j naming %s', (patch, field) => {
    const e = refusal({ ...BASE, ...patch });
    expect([e.code, e.field]).toEqual(['config_invalid', field]);
  });
});
