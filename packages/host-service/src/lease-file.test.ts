import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LeaseFile } from './lease-file.js';
import { tempDir } from './test-fixtures.js';

describe('LeaseFile', () => {
  it('remembers the time at most once a second, never later than it was heard', () => {
    const path = join(tempDir(), 'lease.json');
    const f = new LeaseFile(path);
    expect(f.read(5_000)).toBeUndefined();
    f.write(1_000);
    f.heard(1_500); // less than a second on: not written
    expect(new LeaseFile(path).read(5_000)).toBe(1_000);
    f.heard(2_000);
    expect(new LeaseFile(path).read(5_000)).toBe(2_000);
    expect(new LeaseFile(path).read(1_200)).toBe(1_200); // a clock that went back: capped at now
  });

  it('reads junk, a wrong shape or a huge file as nothing remembered', () => {
    const path = join(tempDir(), 'lease.json');
    for (const text of ['{', '{"heard_ms":-1}', '{"heard_ms":"1"}', '[]', 'x'.repeat(10_000)]) {
      writeFileSync(path, text);
      expect(new LeaseFile(path).read(5_000)).toBeUndefined();
    }
    const errors: unknown[] = [];
    const f = new LeaseFile(join(path, 'not-a-dir', 'lease.json'), (e) => errors.push(e));
    f.write(1);
    expect(errors).toHaveLength(1);
    expect(readFileSync(path, 'utf8')).toHaveLength(10_000);
  });
});
