// Host daemons under Debian's libfaketime (package `faketime`), for the clock fault kinds: the
// library is preloaded into the daemon (LD_PRELOAD) and reads the offset it applies to the wall clock
// from a file of the host's (`FAKETIME_TIMESTAMP_FILE`: `+0`, `-45s`, `+12s`), at most a second old
// (`FAKETIME_CACHE_DURATION=1`), so a fault changes a running daemon's clock by writing that file.
// The monotonic clock is left alone (`FAKETIME_DONT_FAKE_MONOTONIC=1`): node's timers (libuv) keep
// real time when the wall clock steps, as they do when NTP steps a real machine's clock.
import { existsSync, writeFileSync } from 'node:fs';

const CANDIDATES = [
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/faketime/libfaketime.so.1',
];

/** The path of libfaketime, or undefined when it is not installed (`apt-get install faketime`). */
export function faketimeLibrary(): string | undefined {
  return CANDIDATES.find((p) => existsSync(p));
}

/**
 * Why the clock kinds cannot run here, or undefined when they can. In CI (`CI=true`) a machine without
 * libfaketime is a failure (.ci/run installs it), so this throws there.
 */
export function faketimeSkipReason(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (faketimeLibrary() !== undefined) return undefined;
  const why = 'libfaketime is not installed (apt-get install faketime; .ci/run installs it)';
  if (env.CI === 'true' || env.CI === '1')
    throw new Error(`the clock fault kinds must run in CI, but cannot: ${why}`);
  return why;
}

/** The environment of a daemon whose wall clock follows `clockFile` (written with {@link setClock}). */
export function faketimeEnv(clockFile: string): NodeJS.ProcessEnv {
  const lib = faketimeLibrary();
  if (lib === undefined) throw new Error(faketimeSkipReason());
  if (!existsSync(clockFile)) setClock(clockFile, 0);
  return {
    ...process.env,
    LD_PRELOAD: lib,
    FAKETIME_TIMESTAMP_FILE: clockFile,
    FAKETIME_CACHE_DURATION: '1',
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
  };
}

/** Sets the offset of the clock read from `clockFile` to `offsetMs` (whole seconds are written). */
export function setClock(clockFile: string, offsetMs: number): void {
  const s = Math.round(offsetMs / 1000);
  writeFileSync(clockFile, `${s >= 0 ? '+' : ''}${s}s\n`);
}
