import { toHex } from '@heddle/envelope';
import { describe, expect, it } from 'vitest';
import { AllowListPolicy } from './controller-policy.js';
import { CONTROLLER_ID, controller, STRANGER_ID, stranger } from './test-fixtures.js';

const ask = (requester: string, publicKey: Uint8Array, method: 'workload.place' | 'workload.describe') => ({
  requester,
  publicKey,
  method,
});

describe('AllowListPolicy', () => {
  it('admits nobody when empty', () => {
    expect(
      new AllowListPolicy().isAuthorized(ask(CONTROLLER_ID, controller.publicKey, 'workload.place')),
    ).toBe(false);
  });

  it('admits listed node ids', () => {
    const p = new AllowListPolicy({ nodeIds: [CONTROLLER_ID] });
    expect(p.isAuthorized(ask(CONTROLLER_ID, controller.publicKey, 'workload.place'))).toBe(true);
    expect(p.isAuthorized(ask(STRANGER_ID, stranger.publicKey, 'workload.place'))).toBe(false);
  });

  it('admits listed keys, as bytes or hex', () => {
    for (const key of [controller.publicKey, toHex(controller.publicKey)]) {
      const p = new AllowListPolicy({ publicKeys: [key] });
      expect(p.isAuthorized(ask(CONTROLLER_ID, controller.publicKey, 'workload.place'))).toBe(true);
      expect(p.isAuthorized(ask(STRANGER_ID, stranger.publicKey, 'workload.place'))).toBe(false);
    }
  });

  it('restricts methods when asked', () => {
    const p = new AllowListPolicy({ nodeIds: [CONTROLLER_ID], methods: ['workload.describe'] });
    expect(p.isAuthorized(ask(CONTROLLER_ID, controller.publicKey, 'workload.describe'))).toBe(true);
    expect(p.isAuthorized(ask(CONTROLLER_ID, controller.publicKey, 'workload.place'))).toBe(false);
  });

  it('refuses malformed configuration', () => {
    expect(() => new AllowListPolicy({ nodeIds: ['ABC'] })).toThrow(TypeError);
    expect(() => new AllowListPolicy({ publicKeys: ['00'] })).toThrow(TypeError);
    expect(() => new AllowListPolicy({ publicKeys: [new Uint8Array(31)] })).toThrow(TypeError);
    // @ts-expect-error: not a method
    expect(() => new AllowListPolicy({ methods: ['workload.fly'] })).toThrow(TypeError);
  });
});
