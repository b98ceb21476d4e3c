import { describe, expect, it } from 'vitest';
import { errnoCode, errnoPath, errorMessage } from './error-text.js';

describe('error text', () => {
  it('reads the message, errno code and path of anything thrown', () => {
    const e = Object.assign(new Error('no such file'), { code: 'ENOENT', path: '/x' });
    expect([errorMessage(e), errnoCode(e), errnoPath(e)]).toEqual(['no such file', 'ENOENT', '/x']);
    expect([errorMessage('boom'), errnoCode('boom'), errnoPath(null)]).toEqual([
      'boom',
      undefined,
      undefined,
    ]);
    expect(errnoCode({ code: 7 })).toBeUndefined();
    expect(errorMessage(undefined)).toBe('undefined');
  });
});
