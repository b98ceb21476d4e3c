import { errorMessage, isHex } from '@heddle/envelope';
import { canonicalPayload } from './canonical.js';
import { eventShapeProblem } from './event.js';
import {
  equalsHex,
  eventHashBytes,
  GENESIS_PREV_HASH,
  PAYLOAD_HASH_TAG,
  taggedHashOfText,
} from './hashing.js';
import { merkleRoot } from './merkle-verify.js';
import type {
  CheckpointAnchor,
  VerifyFailure,
  VerifyOptions,
  VerifyReason,
  VerifyResult,
} from './verify-types.js';

/** Where a record sits in a file, for messages. */
export interface RecordLocation {
  readonly line: number;
  readonly offset: number;
}

/** Builds a failure whose message names the event (and, for files, the line and byte offset). */
export function failure(
  reason: VerifyReason,
  seq: number,
  what: string,
  location?: RecordLocation,
  field?: string,
): VerifyFailure {
  const where =
    location === undefined ? `event ${seq}` : `event ${seq} (line ${location.line}, byte ${location.offset})`;
  return {
    reason,
    seq,
    message: `${where}: ${what}`,
    ...(field === undefined ? {} : { field }),
    ...(location === undefined ? {} : { line: location.line, offset: location.offset }),
  };
}

/** The failure for an event whose seq is not `expected`: `reordered` or `dropped`. */
export function seqFailure(
  expected: number,
  found: number,
  expectedOccursLater: boolean,
  location?: RecordLocation,
): VerifyFailure {
  if (found < expected || expectedOccursLater) {
    return failure(
      'reordered',
      expected,
      `found seq ${found} where seq ${expected} belongs (events moved, swapped or duplicated)`,
      location,
    );
  }
  const missing = found - expected === 1 ? `event ${expected} is` : `events ${expected}..${found - 1} are`;
  return failure(
    'dropped',
    expected,
    `found seq ${found} where seq ${expected} belongs: ${missing} missing`,
    location,
  );
}

/** The failure for a broken hash link. */
export function linkFailure(seq: number, location?: RecordLocation): VerifyFailure {
  const prev = seq === 0 ? 'the genesis value (64 zeros)' : `the hash of event ${seq - 1}`;
  return failure(
    'broken_link',
    seq,
    `prev_hash is not ${prev} (an earlier event was rewritten or replaced)`,
    location,
  );
}

/**
 * Checks the anchor (checkpoint) against a chain whose first `verified` events verified. `headAt(i)`
 * gives the hash of event i, `rootAt(n)` the Merkle root (hex) of the first n events. Returns the
 * failure to report, or null. A failure inside the covered range (`firstFailure`) wins over
 * `truncated`.
 */
export function anchorFailure(
  anchor: CheckpointAnchor,
  verified: number,
  firstFailure: VerifyFailure | null,
  headAt: (index: number) => string,
  rootAt: (size: number) => string,
): VerifyFailure | null {
  const { size } = anchor;
  if (!Number.isSafeInteger(size) || size < 0 || !isHex(anchor.head, 32)) {
    return failure('checkpoint_mismatch', 0, 'the checkpoint is malformed (size or head)');
  }
  if (size > verified) {
    if (firstFailure !== null) return firstFailure;
    return failure(
      'truncated',
      verified,
      `the chain ends after ${verified} events but the checkpoint covers ${size}: events ${verified}..${size - 1} are missing`,
    );
  }
  const head = size === 0 ? GENESIS_PREV_HASH : headAt(size - 1);
  if (head !== anchor.head) {
    return failure(
      'checkpoint_mismatch',
      Math.max(0, size - 1),
      `hash differs from the checkpoint's head at size ${size} (history rewritten)`,
    );
  }
  if (anchor.root !== undefined && rootAt(size) !== anchor.root) {
    return failure(
      'checkpoint_mismatch',
      Math.max(0, size - 1),
      `the Merkle root at size ${size} differs from the checkpoint's (history rewritten)`,
    );
  }
  return null;
}

/**
 * Verifies a list of events as plain objects (for example received from elsewhere, or a chain's own
 * events): shape, payload hash, event hash, seq order and hash links from the genesis, and optionally
 * a checkpoint. Returns the first failure, naming the event and the reason; never throws for bad
 * events.
 */
export function verifyEvents(events: readonly unknown[], options: VerifyOptions = {}): VerifyResult {
  let prev = GENESIS_PREV_HASH;
  let first: VerifyFailure | null = null;
  let i = 0;
  for (; i < events.length; i++) {
    first = checkEvent(events, i, prev);
    if (first !== null) break;
    // cast: checkEvent accepted events[i], so it is an event with a string hash
    prev = (events[i] as { hash: string }).hash;
  }
  const verified = i;
  const anchor = options.checkpoint;
  const bad =
    anchor === undefined
      ? first
      : anchorFailure(
          anchor,
          verified,
          first,
          // cast: n <= verified: those events passed checkEvent, so each has a string hash
          (n) => (events[n] as { hash: string }).hash,
          // cast: as above
          (n) => merkleRoot(events.slice(0, n).map((e) => (e as { hash: string }).hash)),
        );
  return { ok: bad === null, size: verified, head: prev, failure: bad };
}

function checkEvent(events: readonly unknown[], i: number, prev: string): VerifyFailure | null {
  const ev = events[i];
  const shape = eventShapeProblem(ev);
  if (shape !== null) return failure('malformed', i, shape.message, undefined, shape.field);
  // cast: eventShapeProblem found nothing wrong: every field is present and typed
  const e = ev as Record<string, unknown> & {
    seq: number;
    ts: number;
    source: string;
    kind: string;
    payload_hash: string;
    prev_hash: string;
    hash: string;
  };
  let payloadText: string;
  try {
    payloadText = canonicalPayload(e.payload);
  } catch (err) {
    return failure('malformed', i, errorMessage(err), undefined, 'payload');
  }
  if (!equalsHex(taggedHashOfText(PAYLOAD_HASH_TAG, payloadText), e.payload_hash)) {
    return failure('payload_hash_mismatch', i, 'payload does not match payload_hash (payload edited)');
  }
  if (!equalsHex(eventHashBytes(e), e.hash)) {
    return failure('hash_mismatch', i, 'fields do not hash to hash (event edited)');
  }
  if (e.seq !== i) {
    // cast: x is untrusted: only an optional seq is read, through ?.
    const later = events.some((x, j) => j > i && (x as { seq?: unknown } | null)?.seq === i);
    return seqFailure(i, e.seq, later);
  }
  if (e.prev_hash !== prev) return linkFailure(i);
  return null;
}
