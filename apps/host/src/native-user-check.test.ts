import { describe, expect, it } from 'vitest';
import { nativeUserMismatch } from './native-user-check.js';

describe('nativeUserMismatch (the unit user and run_as_user agree)', () => {
  it('flags run_as_user on a host that is not root, with the native route', () => {
    const why = nativeUserMismatch({ routes: ['native', 'wasi'], runAsUser: 'heddle-work', uid: 998 });
    expect(why).toContain('"heddle-work" but the host runs as uid 998, not root');
  });

  it('accepts root with run_as_user, a non-root host without it, and hosts without the native route', () => {
    expect(nativeUserMismatch({ routes: ['native'], runAsUser: 'heddle-work', uid: 0 })).toBeUndefined();
    expect(nativeUserMismatch({ routes: ['wasi'], runAsUser: undefined, uid: 998 })).toBeUndefined();
    expect(nativeUserMismatch({ routes: ['wasi'], runAsUser: 'heddle-work', uid: 998 })).toBeUndefined();
    expect(nativeUserMismatch({ routes: ['native'], runAsUser: 'x', uid: undefined })).toBeUndefined();
  });
});
