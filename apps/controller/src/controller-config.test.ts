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
