// The README's first command: the demo runs from the BUILT CLIs (`pnpm build` first; `npm test` and CI
// build before testing), starts a controller and three hosts, places, operates and verifies.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const dist = join(import.meta.dirname, '..', 'dist', 'demo.js');

describe('the demo', () => {
  it('runs end to end in under a minute and says what happened', () => {
    expect(existsSync(dist), `${dist} is missing: run pnpm build first`).toBe(true);
    const t0 = Date.now();
    const r = spawnSync(process.execPath, [dist], {
      encoding: 'utf8',
      timeout: 90_000,
      env: { ...process.env, NO_COLOR: '1' },
    });
    const out = r.stdout ?? '';
    expect(r.status, `${out}\n${r.stderr}`).toBe(0);
    expect(Date.now() - t0).toBeLessThan(60_000);
    for (const expected of [
      /placed wasi-cog@0\.1\.0 as wasi-cog-[0-9a-f]{16}/,
      /placed native-cog@0\.1\.0 as native-cog-[0-9a-f]{16} on [0-9a-f]{32} \(x86_64-native|aarch64-native/,
      /pin to [0-9a-f]{32} refused/,
      /"label":"kitchen"/,
      /running elsewhere \d+\.\d s after the kill/,
      /native-cog-[0-9a-f]{16}\s+native-cog@0\.1\.0\s+[0-9a-f]{8}\s+rescheduled/,
      /ok: \d+ events verified/,
      /^done in /m,
    ]) {
      expect(out).toMatch(expected);
    }
    expect(out).not.toMatch(/Permission denied|demo failed/);
  }, 120_000);
});
