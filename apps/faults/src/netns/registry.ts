// Ownership of what the namespace harness creates: every name carries a run tag that encodes the pid
// of the process that made it, so that (a) a process cleans up its own on exit, SIGINT, SIGTERM and
// SIGHUP (a registry of synchronous cleanups), and (b) a run that was killed outright (SIGKILL) is
// cleaned up by the next run: the reaper removes every namespace, link and subnet claim whose tag
// names a process that no longer runs, and kills every process still inside those namespaces.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { shSync } from './sys.js';

/** Prefix of every namespace name the harness makes (`hdl-<tag>-<role>`). */
export const NS_PREFIX = 'hdl-';
/** Prefix of the bridge (`hb<tag>`) and of the veth ends in the root namespace (`hv<tag><role>`). */
export const LINK_PREFIXES = ['hb', 'hv'] as const;
/** Where subnet claims are kept (one file per claimed /24, holding the owner's tag). */
export const CLAIM_DIR = '/run/heddle-netns';

const PID_CHARS = 5;
let seq = 0;

/** A fresh run tag for this process: its pid (5 base-36 chars) and a sequence number (2 chars). */
export function newRunTag(): string {
  const n = seq++;
  if (n >= 36 * 36) throw new Error('too many fabrics in one process');
  return `${process.pid.toString(36).padStart(PID_CHARS, '0')}${n.toString(36).padStart(2, '0')}`;
}

/** The pid a run tag was made by (NaN when `tag` is not one). */
export function pidOfTag(tag: string): number {
  if (!/^[0-9a-z]{7}$/.test(tag)) return Number.NaN;
  return Number.parseInt(tag.slice(0, PID_CHARS), 36);
}

/** True when process `pid` runs (or exists and is not ours to signal). */
export function pidAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // cast: a Node system error from kill
  }
}

/** The tag inside a harness name (namespace or link), or undefined when it is not one of ours. */
export function tagOfName(name: string): string | undefined {
  if (name.startsWith(NS_PREFIX)) return /^hdl-([0-9a-z]{7})-/.exec(name)?.[1];
  if (LINK_PREFIXES.some((p) => name.startsWith(p))) {
    const tag = name.slice(2, 9);
    return /^[0-9a-z]{7}$/.test(tag) ? tag : undefined;
  }
  return undefined;
}

/** Every network namespace name on the machine. */
export function listNamespaces(): string[] {
  return (shSync(['ip', 'netns', 'list']) ?? '')
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0] ?? '')
    .filter((n) => n !== '');
}

/** Every link name in the root namespace. */
export function listLinks(): string[] {
  return (shSync(['ip', '-o', 'link', 'show']) ?? '')
    .split('\n')
    .map((l) => /^\d+:\s+([^:@\s]+)/.exec(l)?.[1] ?? '')
    .filter((n) => n !== '');
}

/** Kills (SIGKILL) every process inside namespace `ns`; returns how many. */
export function killNamespaceProcesses(ns: string): number {
  let n = 0;
  for (const line of (shSync(['ip', 'netns', 'pids', ns]) ?? '').split('\n')) {
    const pid = Number(line.trim());
    if (!Number.isSafeInteger(pid) || pid <= 1 || pid === process.pid) continue;
    try {
      process.kill(pid, 'SIGKILL');
      n++;
    } catch {
      // gone meanwhile
    }
  }
  return n;
}

/** Removes everything of run `tag`: processes in its namespaces, the namespaces, its links, its claims. */
export function removeRun(tag: string): { namespaces: number; links: number; processes: number } {
  let processes = 0;
  const namespaces = listNamespaces().filter((n) => tagOfName(n) === tag);
  for (const ns of namespaces) processes += killNamespaceProcesses(ns);
  for (const ns of namespaces) shSync(['ip', 'netns', 'del', ns]);
  const links = listLinks().filter((l) => tagOfName(l) === tag);
  // The bridge last: deleting a veth end deletes its peer, deleting the bridge detaches the rest.
  for (const l of links.sort((a, b) => (a.startsWith('hb') ? 1 : 0) - (b.startsWith('hb') ? 1 : 0)))
    shSync(['ip', 'link', 'del', l]);
  for (const f of claimFiles()) if (f.tag === tag) rmSync(f.path, { force: true });
  return { namespaces: namespaces.length, links: links.length, processes };
}

function claimFiles(): { path: string; subnet: number; tag: string }[] {
  let names: string[];
  try {
    names = readdirSync(CLAIM_DIR);
  } catch {
    return [];
  }
  const out: { path: string; subnet: number; tag: string }[] = [];
  for (const name of names) {
    const subnet = Number(name);
    if (!Number.isSafeInteger(subnet)) continue;
    const path = join(CLAIM_DIR, name);
    let tag = '';
    try {
      tag = readFileSync(path, 'utf8').trim();
    } catch {
      // removed meanwhile
    }
    out.push({ path, subnet, tag });
  }
  return out;
}

/**
 * Claims a free /24 (its third octet, 1..250) for run `tag`: a claim file created exclusively, so
 * that two runs at once never share a subnet. A claim of a dead run is taken over.
 */
export function claimSubnet(tag: string): number {
  mkdirSync(CLAIM_DIR, { recursive: true, mode: 0o700 });
  for (let subnet = 1; subnet <= 250; subnet++) {
    const path = join(CLAIM_DIR, String(subnet));
    try {
      writeFileSync(path, tag, { flag: 'wx' });
      return subnet;
    } catch {
      let owner = '';
      try {
        owner = readFileSync(path, 'utf8').trim();
      } catch {
        continue;
      }
      if (owner !== '' && !pidAlive(pidOfTag(owner))) {
        removeRun(owner);
        try {
          writeFileSync(path, tag, { flag: 'wx' });
          return subnet;
        } catch {
          // another run took it first
        }
      }
    }
  }
  throw new Error(`no free subnet left under ${CLAIM_DIR} (250 runs at once?)`);
}

/**
 * Removes everything left by runs whose process is gone (killed with SIGKILL, or crashed): matched by
 * the run tag in each name, its owner's pid checked. Returns the tags reaped.
 */
export function reapStale(): string[] {
  const tags = new Set<string>();
  for (const n of [...listNamespaces(), ...listLinks()]) {
    const t = tagOfName(n);
    if (t !== undefined) tags.add(t);
  }
  for (const f of claimFiles()) if (f.tag !== '') tags.add(f.tag);
  const reaped: string[] = [];
  for (const t of tags) {
    if (pidAlive(pidOfTag(t))) continue;
    removeRun(t);
    reaped.push(t);
  }
  return reaped;
}

const live = new Set<string>();
let hooked = false;

/**
 * Registers run `tag` for cleanup when this process ends (exit, SIGINT, SIGTERM, SIGHUP): its
 * processes, namespaces, links and claims are removed synchronously. {@link release} it after a
 * normal teardown.
 */
export function register(tag: string): void {
  live.add(tag);
  if (hooked) return;
  hooked = true;
  const cleanup = (): void => {
    for (const t of live) removeRun(t);
    live.clear();
  };
  process.on('exit', cleanup);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      cleanup();
      process.kill(process.pid, sig);
    });
  }
}

/** Forgets run `tag` (it was torn down normally). */
export function release(tag: string): void {
  live.delete(tag);
}
