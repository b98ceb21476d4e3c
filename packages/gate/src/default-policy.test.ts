import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY } from './default-policy.js';
import { loadPolicyFile } from './policy.js';

describe('DEFAULT_POLICY', () => {
  it('is the same policy as examples/policies/default.json', () => {
    const file = fileURLToPath(new URL('../../../examples/policies/default.json', import.meta.url));
    expect(loadPolicyFile(file)).toEqual(DEFAULT_POLICY);
  });
});
