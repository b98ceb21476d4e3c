import { RuntimeError } from '../errors.js';

/** The highest uid or gid the engines accept (runc refuses ids above 2^31 - 1). */
export const MAX_CONTAINER_ID: number = 2 ** 31 - 1;

/** A container user as the engine will run it: numeric uid and gid. */
export interface ContainerUser {
  readonly uid: number;
  readonly gid: number;
  /** The canonical `uid:gid` passed to `--user` (decimal, no sign, no leading zeros). */
  readonly spec: string;
}

function refuse(spec: string, why: string): never {
  throw new RuntimeError('invalid_config', `user: ${why} (${JSON.stringify(spec)})`, { field: 'user' });
}

/**
 * One side of `uid:gid` the way the engine reads it: runc's `GetExecUser` takes a part that Go's
 * `strconv.Atoi` parses (an optional `+` or `-`, then decimal digits, leading zeros allowed) as a
 * numeric id, so `0000`, `+0` and `-0` are all id 0. Anything else is a name, which the engine looks up
 * in the image's own `/etc/passwd` or `/etc/group`: the host cannot know what it maps to, so names are
 * refused.
 */
function parseId(spec: string, part: string, what: 'uid' | 'gid'): number {
  if (part === '') refuse(spec, `the ${what} is empty (the engine then uses 0, root)`);
  const m = /^([+-]?)(\d+)$/.exec(part);
  if (m === null) {
    refuse(
      spec,
      `the ${what} must be a decimal number: a name is resolved in the image's own files and may be root`,
    );
  }
  const [, sign, digitText = ''] = m;
  const digits = digitText.replace(/^0+(?=\d)/, '');
  if (digits.length > 10) refuse(spec, `the ${what} is out of range`);
  const value = Number(digits) * (sign === '-' ? -1 : 1);
  if (value === 0) refuse(spec, `containers never run as ${what === 'uid' ? 'root' : 'the root group'}`);
  if (value < 0 || value > MAX_CONTAINER_ID) refuse(spec, `the ${what} is out of range`);
  return value;
}

/**
 * Parses the adapter's `user` option as the engine would (`--user uid:gid`) and refuses root: the uid
 * and the gid must both be given, as decimal numbers (`+`, `-` and leading zeros are read as the
 * engine's `strconv.Atoi` reads them, so `0000`, `+0` and `00:0` are root), neither 0, at most
 * 2^31 - 1. A user without a gid is refused because the engine then uses the user's group from the
 * image's `/etc/passwd`, or gid 0 when it has none. Throws `invalid_config`, field `user`.
 */
export function parseContainerUser(spec: string): ContainerUser {
  const parts = spec.split(':');
  if (parts.length !== 2) {
    refuse(spec, 'must be "<uid>:<gid>" (without a gid the engine may use group 0)');
  }
  const [uidText = '', gidText = ''] = parts;
  const uid = parseId(spec, uidText, 'uid');
  const gid = parseId(spec, gidText, 'gid');
  return { uid, gid, spec: `${uid}:${gid}` };
}
