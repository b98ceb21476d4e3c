import type { Socket } from 'node:net';

/** Limits of an {@link Admission}. */
export interface AdmissionLimits {
  /** Most unauthenticated connections (raw or upgraded, before their first verified call) at once. */
  readonly maxUnauthenticated: number;
  /** Most unauthenticated connections one remote address may hold at once; one more is dropped. */
  readonly maxPerPeer: number;
}

interface Entry {
  readonly peer: string;
  /** Closes the connection (the session's close when upgraded, else a destroy). */
  evict: () => void;
}

/**
 * The address a connection is counted under: its remote IPv4 address (IPv4-mapped IPv6 spelled as
 * IPv4), or the /64 prefix of its remote IPv6 address (`2001:db8:0:1::/64`). One IPv6 machine usually
 * holds a whole /64 and can pick a new source address for every connection: counted one by one, such a
 * peer would never be "the address holding the most", and its newest connections would push out an
 * authorised controller's first one.
 */
export function peerOf(socket: Pick<Socket, 'remoteAddress'>): string {
  const a = socket.remoteAddress ?? 'unknown';
  if (a.startsWith('::ffff:') && a.includes('.')) return a.slice(7);
  return a.includes(':') ? ipv6Prefix64(a) : a;
}

/** The /64 prefix of an IPv6 address (`x:x:x:x::/64`, hextets without leading zeros); the input as is when it does not parse. */
function ipv6Prefix64(address: string): string {
  // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
  const bare = address.split('%')[0] as string; // a zone id (fe80::1%eth0) is not part of the address
  const halves = bare.split('::');
  if (halves.length > 2) return address;
  const part = (s: string | undefined): string[] => (s === undefined || s === '' ? [] : s.split(':'));
  const head = part(halves[0]);
  const tail = part(halves[1]);
  if (tail.some((h) => h.includes('.'))) tail.splice(-1, 1, '0', '0'); // embedded IPv4: two hextets
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  if (fill < 0 || (halves.length === 1 && head.length !== 8)) return address;
  const hextets = [...head, ...Array<string>(fill).fill('0'), ...tail];
  if (!hextets.every((h) => /^[0-9a-fA-F]{1,4}$/.test(h))) return address;
  return `${hextets
    .slice(0, 4)
    .map((h) => Number.parseInt(h, 16).toString(16))
    .join(':')}::/64`;
}

/**
 * Who gets a connection to a host (docs/protocol.md section 13.3). A connection is
 * **unauthenticated** from its TCP accept until a call on it passed the host's verification; only
 * unauthenticated connections are counted here, so an authorised controller's sessions never
 * compete with anyone's silent sockets. Two rules keep room for a controller:
 *
 * - per peer: one remote address holds at most `maxPerPeer` unauthenticated connections; one more
 *   closes that address's oldest unauthenticated connection (an address competes with itself only);
 * - overall: when `maxUnauthenticated` are held, a new connection is still admitted, and the oldest
 *   unauthenticated connection of the peer holding the most of them is closed to make room. A
 *   controller's fresh connection is therefore never refused for lack of room, and loses its place
 *   only if more than `maxUnauthenticated` newer unauthenticated connections arrive before its first
 *   call is verified.
 *
 * Entries are kept in arrival order (a Map), so "oldest" is the first of that peer.
 */
export class Admission {
  readonly #limits: AdmissionLimits;
  readonly #entries = new Map<object, Entry>();
  readonly #perPeer = new Map<string, number>();

  constructor(limits: AdmissionLimits) {
    if (!(limits.maxPerPeer >= 1 && limits.maxUnauthenticated >= 1)) {
      throw new RangeError('admission limits must be at least 1');
    }
    this.#limits = limits;
  }

  /** Unauthenticated connections held now. */
  get size(): number {
    return this.#entries.size;
  }

  /** Unauthenticated connections held by `peer` now. */
  heldBy(peer: string): number {
    return this.#perPeer.get(peer) ?? 0;
  }

  /**
   * Admits a new connection under `key` from `peer`, `evict` closing it when it must make room: first
   * the peer's own oldest when it holds `maxPerPeer`, then the heaviest peer's oldest while
   * `maxUnauthenticated` are held.
   */
  admit(key: object, peer: string, evict: () => void): void {
    while (this.heldBy(peer) >= this.#limits.maxPerPeer) this.#evict(this.#oldestOf(peer));
    while (this.#entries.size >= this.#limits.maxUnauthenticated) {
      const victim = this.#oldestOfHeaviest();
      if (victim === undefined) break;
      this.#evict(victim);
    }
    this.#entries.set(key, { peer, evict });
    this.#perPeer.set(peer, this.heldBy(peer) + 1);
  }

  #evict(key: object | undefined): void {
    if (key === undefined) return;
    const entry = this.#entries.get(key);
    this.release(key);
    entry?.evict();
  }

  #oldestOf(peer: string): object | undefined {
    for (const [key, e] of this.#entries) if (e.peer === peer) return key;
    return undefined;
  }

  /** Replaces how the connection under `key` is closed (once it became a session). */
  setEvict(key: object, evict: () => void): void {
    const e = this.#entries.get(key);
    if (e !== undefined) e.evict = evict;
  }

  /**
   * Closes the oldest unauthenticated connection of the heaviest peer that is an upgraded session
   * (`isSession`), to make room for a new session. False when there is none.
   */
  evictSession(isSession: (key: object) => boolean): boolean {
    const victim = this.#oldestOfHeaviest(isSession);
    if (victim === undefined) return false;
    this.#evict(victim);
    return true;
  }

  /** Stops counting `key` (authenticated, or closed). Idempotent. */
  release(key: object): void {
    const e = this.#entries.get(key);
    if (e === undefined) return;
    this.#entries.delete(key);
    const n = this.heldBy(e.peer) - 1;
    if (n <= 0) this.#perPeer.delete(e.peer);
    else this.#perPeer.set(e.peer, n);
  }

  #oldestOfHeaviest(filter: (key: object) => boolean = () => true): object | undefined {
    let heaviest: string | undefined;
    let most = 0;
    for (const [key, e] of this.#entries) {
      if (!filter(key)) continue;
      const n = this.heldBy(e.peer);
      if (n > most) {
        most = n;
        heaviest = e.peer;
      }
    }
    if (heaviest === undefined) return undefined;
    for (const [key, e] of this.#entries) if (e.peer === heaviest && filter(key)) return key;
    return undefined;
  }
}
