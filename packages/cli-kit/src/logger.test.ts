import { HeddleError } from '@heddle/envelope';
import { describe, expect, it } from 'vitest';
import { errorFields, isLogLevel, LOG_LEVELS, Logger } from './logger.js';

const T = Date.UTC(2026, 0, 2, 3, 4, 5, 678);

function capture(): { lines: string[]; log: Logger } {
  const lines: string[] = [];
  return {
    lines,
    log: new Logger(
      (l) => lines.push(l),
      () => T,
    ),
  };
}

describe('Logger', () => {
  it('writes one JSON object per line: ts, level, msg, then the fields', () => {
    const { lines, log } = capture();
    log.info('started', { node_id: 'abc', port: 7100 });
    log.warn('slow');
    log.error('failed', { attempt: 2 });
    log.log('debug', 'detail', {});
    expect(lines).toEqual([
      '{"ts":"2026-01-02T03:04:05.678Z","level":"info","msg":"started","node_id":"abc","port":7100}',
      '{"ts":"2026-01-02T03:04:05.678Z","level":"warn","msg":"slow"}',
      '{"ts":"2026-01-02T03:04:05.678Z","level":"error","msg":"failed","attempt":2}',
      '{"ts":"2026-01-02T03:04:05.678Z","level":"debug","msg":"detail"}',
    ]);
  });

  it('drops undefined fields and ignores fields named ts, level or msg', () => {
    const { lines, log } = capture();
    log.info('x', { ts: 'forged', level: 'error', msg: 'forged', gone: undefined, kept: null });
    expect(lines).toEqual(['{"ts":"2026-01-02T03:04:05.678Z","level":"info","msg":"x","kept":null}']);
  });

  it('writes a line without the fields when they cannot be serialised, leaking none of them', () => {
    const { lines, log } = capture();
    const circular: Record<string, unknown> = { token: 'sekrit-token-value' };
    circular.self = circular;
    log.error('bad fields', { circular });
    log.error('bigint', { n: 10n, token: 'sekrit-token-value' });
    expect(lines).toEqual([
      '{"ts":"2026-01-02T03:04:05.678Z","level":"error","msg":"bad fields","note":"fields could not be serialised"}',
      '{"ts":"2026-01-02T03:04:05.678Z","level":"error","msg":"bigint","note":"fields could not be serialised"}',
    ]);
    for (const line of lines) expect(line).not.toContain('sekrit');
  });
});

describe('errorFields', () => {
  it('gives a HeddleError its code, field and message, without a stack', () => {
    expect(errorFields(new HeddleError('bad_config', 'listen: not host:port', { field: 'listen' }))).toEqual({
      error_code: 'bad_config',
      error_field: 'listen',
      error: 'listen: not host:port',
    });
  });

  it('gives another Error its errno code, message and stack', () => {
    const err = Object.assign(new Error('no such file'), { code: 'ENOENT' });
    const f = errorFields(err);
    expect(f.error_code).toBe('ENOENT');
    expect(f.error).toBe('no such file');
    expect(String(f.stack)).toContain('no such file');
    expect(errorFields(Object.assign(new Error('x'), { code: 42 })).error_code).toBeUndefined();
  });

  it('prints a thrown non-error as text, never its properties', () => {
    expect(errorFields({ token: 'sekrit-token-value' })).toEqual({ error: '[object Object]' });
    expect(errorFields('plain')).toEqual({ error: 'plain' });
    const { lines, log } = capture();
    log.error('thrown', errorFields({ key: new Uint8Array([1, 2, 3]) }));
    expect(lines).toEqual([
      '{"ts":"2026-01-02T03:04:05.678Z","level":"error","msg":"thrown","error":"[object Object]"}',
    ]);
  });
});

describe('Logger levels and children', () => {
  it('drops lines below its level, and a level set later applies to its children too', () => {
    const lines: string[] = [];
    const log = new Logger(
      (l) => lines.push(l),
      () => T,
      'info',
    );
    const child = log.child({ request_id: 'r-1' });
    log.debug('hidden');
    child.debug('hidden too');
    child.info('shown', { n: 1 });
    log.level = 'error';
    log.warn('now hidden');
    child.warn('now hidden too');
    child.error('kept');
    log.level = 'debug';
    child.debug('visible again');
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      { ts: '2026-01-02T03:04:05.678Z', level: 'info', msg: 'shown', request_id: 'r-1', n: 1 },
      { ts: '2026-01-02T03:04:05.678Z', level: 'error', msg: 'kept', request_id: 'r-1' },
      { ts: '2026-01-02T03:04:05.678Z', level: 'debug', msg: 'visible again', request_id: 'r-1' },
    ]);
    expect(log.enabled('info')).toBe(true);
    expect(child.level).toBe('debug');
  });

  it('fields given to a line win over bound ones; ts, level and msg cannot be bound', () => {
    const lines: string[] = [];
    const log = new Logger(
      (l) => lines.push(l),
      () => T,
    ).child({ a: 1, level: 'x', msg: 'y' });
    log.info('m', { a: 2 });
    expect(JSON.parse(lines[0] ?? '')).toEqual({
      ts: '2026-01-02T03:04:05.678Z',
      level: 'info',
      msg: 'm',
      a: 2,
    });
  });

  it('isLogLevel accepts exactly the four levels', () => {
    expect(LOG_LEVELS.filter(isLogLevel)).toEqual(['debug', 'info', 'warn', 'error']);
    for (const bad of ['trace', 'INFO', '', 3, null]) expect(isLogLevel(bad)).toBe(false);
  });
});
