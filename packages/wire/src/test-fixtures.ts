// Shared helpers for this package's tests (not exported from the package).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type JsonValue, type KeyPair, keyPairFromSecret, nodeIdFromPublicKey } from '@heddle/envelope';
import { type BuildResult, buildCogPackage } from '@heddle/package';
import {
  AllowListPolicy,
  type CtlMethod,
  claimedRequest,
  createRequest,
  NonceGuard,
  okOutcome,
  Refusal,
  type SignedCtl,
  signRequest,
  signResponse,
  verifyRequest,
} from '@heddle/protocol';
import type { CallContext, CallHandler } from './server-session.js';

/** The controller's keys. */
export const controller: KeyPair = keyPairFromSecret(new Uint8Array(32).fill(0x11));
/** The host's keys. */
export const host: KeyPair = keyPairFromSecret(new Uint8Array(32).fill(0x22));
/** A stranger's keys. */
export const stranger: KeyPair = keyPairFromSecret(new Uint8Array(32).fill(0x33));
/** Node ids. */
export const CONTROLLER_ID: string = nodeIdFromPublicKey(controller.publicKey);
export const HOST_ID: string = nodeIdFromPublicKey(host.publicKey);
/** A decision id. */
export const DECISION: string = 'd1'.repeat(32);

/** A signed request from `keys` (the controller by default) to the host. */
export function signed(
  method: CtlMethod = 'workload.status',
  body: Record<string, JsonValue> = {},
  keys: KeyPair = controller,
): SignedCtl {
  const request = createRequest({
    method,
    requester: nodeIdFromPublicKey(keys.publicKey),
    target: HOST_ID,
    body,
    now: Date.now(),
    ...(method === 'workload.status' || method === 'workload.describe' || method === 'workload.logs'
      ? {}
      : { decisionId: DECISION }),
  });
  return signRequest(request, keys);
}

/** What the test host does with a verified request (default: echo the body). */
export type Act = (body: JsonValue, ctx: CallContext) => Promise<JsonValue>;

/**
 * A host handler doing what a real host does: `verifyRequest` (nonce guard, allow list of the
 * controller, the transport method), a signed refusal (and disconnect) for an unauthenticated request,
 * a signed answer otherwise; an `act` failure becomes an authenticated `fetch` refusal.
 */
export function hostHandler(act: Act = async (body) => body): CallHandler {
  const nonces = new NonceGuard();
  const policy = new AllowListPolicy({ nodeIds: [CONTROLLER_ID] });
  return async (signedCtl, ctx) => {
    let verified: ReturnType<typeof verifyRequest>;
    try {
      verified = verifyRequest(signedCtl, {
        nodeId: HOST_ID,
        now: Date.now(),
        policy,
        nonces,
        expectedMethod: ctx.method,
      });
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      ctx.closeAfterReply();
      return signResponse(claimedRequest(signedCtl, ctx.method), err, host);
    }
    const { request } = verified;
    ctx.authenticated();
    try {
      return signResponse(request, okOutcome(await act(request.body, ctx)), host);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      return signResponse(request, new Refusal('fetch', why, { authenticated: true }), host);
    }
  };
}

/** A fresh temporary directory. */
export function tempDir(prefix = 'heddle-wire-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Builds a signed cog package whose wasm file has `wasmBytes` bytes of pseudo-random content. */
export async function buildPackage(wasmBytes: number, keys: KeyPair = controller): Promise<BuildResult> {
  const src = tempDir('heddle-wire-src-');
  const source = {
    id: 'sample',
    version: '1.0.0',
    variants: { 'x86_64-native': 'bin/run.sh', 'wasm32-wasi': 'run.wasm' },
    config: {},
    console: [],
    resources: { cpu_pct: 10, ram_mb: 32 },
  };
  writeFileSync(join(src, 'cog.json'), JSON.stringify(source));
  const files: Record<string, Uint8Array | string> = {
    'bin/run.sh': '#!/bin/sh\necho hi\n',
    'run.wasm': noise(wasmBytes),
  };
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(src, path)), { recursive: true });
    writeFileSync(join(src, path), content);
  }
  return buildCogPackage(src, join(tempDir(), 'pkg'), { keys: [keys] });
}

/** Deterministic pseudo-random bytes. */
export function noise(n: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = 0x9e3779b9;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

/** A self-signed certificate for 127.0.0.1 made with openssl, or undefined when openssl is missing. */
export function selfSignedCert(): { cert: string; key: string } | undefined {
  const dir = tempDir('heddle-wire-tls-');
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    return {
      cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
      key: readFileSync(join(dir, 'key.pem'), 'utf8'),
    };
  } catch {
    return undefined;
  }
}
