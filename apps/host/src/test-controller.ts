// Test helpers (not part of the app): a controller built from @heddle/wire and @heddle/envelope that
// talks to a real daemon, and the packages it places.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  CallFailure,
  type CtlMethod,
  canonicalJson,
  createRequest,
  DomainTag,
  type JsonValue,
  type KeyPair,
  nodeIdFromPublicKey,
  type SignedCtl,
  signRequest,
  signWithDomain,
  toHex,
  utf8,
} from '@heddle/envelope';
import { buildCogPackage } from '@heddle/package';
import { hostCogArch } from '@heddle/runtime';
import { type CallResult, type PackageSource, WireSession } from '@heddle/wire';
import { expect } from 'vitest';
import { tempDir } from './test-io.js';

/** This machine's native variant. */
export const NATIVE = `${hostCogArch() ?? 'x86_64'}-native`;
/** The example cogs. */
export const HELLO: string = resolve(import.meta.dirname, '../../../examples/hello-cog');
export const WASI: string = resolve(import.meta.dirname, '../../../examples/wasi-cog');

/** A controller with `keys`, talking to the host at `url` whose key is `hostKey`. */
export class TestController {
  readonly keys: KeyPair;
  url = '';
  hostId = '';
  hostKey: Uint8Array = new Uint8Array();
  #decisions = 0;

  constructor(keys: KeyPair) {
    this.keys = keys;
  }

  /** A signed request (by `o.keys`, default this controller's) with a fresh decision id when it mutates. */
  request(
    method: CtlMethod,
    body: { [key: string]: JsonValue } = {},
    o: { keys?: KeyPair; target?: string; now?: number } = {},
  ): SignedCtl {
    const keys = o.keys ?? this.keys;
    const mutating = !['workload.status', 'workload.describe', 'workload.logs'].includes(method);
    return signRequest(
      createRequest({
        method,
        requester: nodeIdFromPublicKey(keys.publicKey),
        target: o.target ?? this.hostId,
        body,
        now: o.now ?? Date.now(),
        ...(mutating ? { decisionId: (++this.#decisions).toString(16).padStart(64, 'a') } : {}),
      }),
      keys,
    );
  }

  /** A hand-made request payload signed by `keys` (to send what `createRequest` would refuse to make). */
  crafted(fields: Record<string, JsonValue>, keys: KeyPair = this.keys): SignedCtl {
    const now = Date.now();
    const text = canonicalJson({
      version: 1,
      method: 'workload.status',
      requester: nodeIdFromPublicKey(this.keys.publicKey),
      target: this.hostId,
      nonce: toHex(crypto.getRandomValues(new Uint8Array(16))),
      issued_at_ms: now,
      expires_at_ms: now + 60_000,
      body: {},
      ...fields,
    });
    return {
      payload: text,
      public_key: toHex(keys.publicKey),
      signature: toHex(signWithDomain(DomainTag.ctlRequest, keys.secretKey, utf8(text))),
    };
  }

  /** Sends `signed` on a fresh connection, serving `source` when given; the verified answer. */
  async send(signed: SignedCtl, source?: PackageSource): Promise<CallResult> {
    const session = await WireSession.connect(this.url);
    // Judge the answer by the request's own clock, so that a refusal of a stale request is readable.
    // cast: the payload was signed by this test controller a line above
    const issued = (JSON.parse(signed.payload) as { issued_at_ms?: number }).issued_at_ms ?? Date.now();
    try {
      return await session.call(signed, {
        expectedPublicKey: this.hostKey,
        timeoutMs: 30_000,
        now: () => Math.min(Date.now(), issued),
        ...(source === undefined ? {} : { source }),
      });
    } finally {
      await session.close();
    }
  }

  /** The result of an `ok` answer. */
  async ok(signed: SignedCtl, source?: PackageSource): Promise<Record<string, unknown>> {
    // cast: a test reads the host's answer loosely; the tests assert its fields
    return (await this.send(signed, source)).result as Record<string, unknown>;
  }

  /** The signed refusal `signed` gets (fails the test otherwise); its reason must say why. */
  async refused(signed: SignedCtl, source?: PackageSource): Promise<{ code: string; reason: string }> {
    const err = await this.send(signed, source).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CallFailure);
    if (!(err instanceof CallFailure)) throw new Error('not a call failure');
    expect(err.refusal, err.message).toBeDefined();
    // cast: a refusal the assertion above found (the wire's refusal shape)
    const r = err.refusal as { code: string; reason: string };
    expect(r.reason.length).toBeGreaterThan(10);
    return r;
  }
}

let versions = 0;
/** The cog in `src` with a version of its own (a new manifest hash), built and signed by `keys`. */
export async function uniquePackage(
  keys: KeyPair,
  src = HELLO,
): Promise<{ dir: string; manifestHash: string }> {
  const copy = join(tempDir(), 'src');
  cpSync(src, copy, { recursive: true });
  // cast: a test fixture's own cog.json
  const cog = JSON.parse(readFileSync(join(copy, 'cog.json'), 'utf8')) as { version: string };
  cog.version = `0.9.${++versions}`;
  writeFileSync(join(copy, 'cog.json'), JSON.stringify(cog));
  const out = join(tempDir(), 'pkg');
  const built = await buildCogPackage(copy, out, { keys: [keys] });
  return { dir: out, manifestHash: built.package.manifestHash };
}

/** A place body for the example cogs (hello-cog, or wasi-cog for the WASI variant). */
export function placeBody(
  manifestHash: string,
  variant = NATIVE,
  extra: Record<string, JsonValue> = {},
): { [key: string]: JsonValue } {
  return {
    name: variant === 'wasm32-wasi' ? 'wasi-cog' : 'hello-cog',
    manifest_hash: manifestHash,
    variant,
    config: { mode: { type: 'once' } },
    ...extra,
  };
}
