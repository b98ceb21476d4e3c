import { StateError } from '@heddle/control-plane/contract';
import { describe, expect, it } from 'vitest';
import { mapError, STATUS_OF_CODE } from './errors.js';

describe('mapError: state store failures', () => {
  it('answers a server database that is down or conflicting with its own code, 503, as a refusal to retry', () => {
    for (const code of ['store_unavailable', 'store_conflict'] as const) {
      const m = mapError(new StateError(code, 'the connection was lost'));
      expect(m.status).toBe(503);
      expect(m.error.code).toBe(code);
      expect(m.error.message).toContain('the connection was lost');
      expect(m.unexpected).toBe(false);
      expect(STATUS_OF_CODE[code]).toBe(503);
    }
  });

  it('answers any other StateError as state, 500, unexpected', () => {
    const m = mapError(new StateError('corrupt', 'bad row'));
    expect([m.status, m.error.code, m.unexpected]).toEqual([500, 'state', true]);
  });
});
