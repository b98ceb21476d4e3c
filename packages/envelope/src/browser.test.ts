// The portable entry (`@heddle/envelope/browser`) bundles for the browser, where esbuild refuses any
// `node:` import, and the bundle runs in a realm that has only what a browser gives (no Buffer, no
// process, no require): digests, canonical JSON, signatures and node ids there equal the Node entry's.
import { runInNewContext } from 'node:vm';
import { build } from 'esbuild';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  blake3Hex,
  canonicalJson,
  generateKeyPair,
  nodeIdFromPublicKey,
  sha256Hex,
  sign,
  toHex,
  utf8,
} from './index.js';

const entry = new URL('./browser.ts', import.meta.url).pathname;

async function bundle(): Promise<{ code: string; inputs: string[] }> {
  const out = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    globalName: 'heddleEnvelope',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  return { code: out.outputFiles[0]?.text ?? '', inputs: Object.keys(out.metafile.inputs) };
}

/** Runs the bundle in a fresh realm with only web globals, and returns what `probe` computes there. */
function inBrowserRealm<T>(code: string, probe: string): T {
  // The web APIs the package may use, built inside the realm so that their Uint8Arrays are the
  // realm's own (as a browser's are), backed by this process's implementations.
  const encoder = new TextEncoder();
  const sandbox: Record<string, unknown> = {
    hostEncode: (s: string) => Array.from(encoder.encode(s)),
    hostDecode: (bytes: number[], fatal: boolean) =>
      new TextDecoder('utf-8', { fatal }).decode(new Uint8Array(bytes)),
    hostRandom: (n: number) => Array.from(globalThis.crypto.getRandomValues(new Uint8Array(n))),
    result: undefined,
  };
  const webApis = `
    globalThis.TextEncoder = class { encode(s = '') { return new Uint8Array(hostEncode(String(s))); } };
    globalThis.TextDecoder = class {
      constructor(label, options) { this.fatal = !!(options && options.fatal); }
      decode(b) { return hostDecode(Array.from(b), this.fatal); }
    };
    globalThis.crypto = { getRandomValues(a) { a.set(hostRandom(a.length)); return a; } };`;
  runInNewContext(`${webApis}\n${code}\nresult = (${probe})(heddleEnvelope);`, sandbox);
  return sandbox.result as T;
}

// RFC 8032 section 7.1, test 1 (empty message).
const RFC_PUBLIC = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';
const RFC_SIGNATURE =
  'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b';

describe('@heddle/envelope/browser', () => {
  it('bundles for the browser with no node: import, no WebAssembly loader and no Node entry module', async () => {
    const { code, inputs } = await bundle();
    expect(inputs.filter((i) => i.startsWith('node:'))).toEqual([]);
    expect(inputs.some((i) => i.includes('hash-wasm'))).toBe(false);
    for (const nodeOnly of [
      'ed25519/native.ts',
      'src/digest.ts',
      'src/keys.ts',
      'atomic-file.ts',
      'key-file.ts',
    ]) {
      expect(inputs.some((i) => i.endsWith(nodeOnly))).toBe(false);
    }
    expect(code.length).toBeLessThan(120_000);
  });

  it('computes in a realm without Buffer exactly what the Node entry computes', async () => {
    const { code } = await bundle();
    const keys = generateKeyPair();
    const message = utf8('{"a":1}');
    const signature = sign(keys.secretKey, message);
    const odd = 'ascii é € 😀 \ud800 end';
    const got = inBrowserRealm<Record<string, unknown>>(
      code,
      `(e) => {
        const hex = (s) => e.fromHex(s);
        const kp = e.generateKeyPair();
        const mine = e.sign(kp.secretKey, e.utf8('x'));
        return {
          hasBuffer: typeof Buffer !== 'undefined',
          blake3: e.blake3Hex(e.utf8('abc')),
          sha256: e.sha256Hex(e.utf8('abc')),
          canonical: e.canonicalJson({ b: [1, 'é'], a: { z: null, y: true } }),
          parsed: e.parseJson('{"k":[1,2]}'),
          rfc: e.verify(hex('${RFC_PUBLIC}'), new Uint8Array(0), hex('${RFC_SIGNATURE}')),
          rfcTampered: e.verify(hex('${RFC_PUBLIC}'), new Uint8Array([0]), hex('${RFC_SIGNATURE}')),
          nodeSigned: e.verify(hex('${toHex(keys.publicKey)}'), e.utf8('{"a":1}'), hex('${toHex(signature)}')),
          own: e.verify(kp.publicKey, e.utf8('x'), mine),
          nodeId: e.nodeIdFromPublicKey(hex('${toHex(keys.publicKey)}')),
          utf8Length: e.utf8Length(${JSON.stringify(odd)}),
          hexRoundTrip: e.toHex(e.fromHex('00ff10ab')),
          badHex: (() => { try { e.fromHex('0G'); return 'accepted'; } catch (err) { return err.name; } })(),
        };
      }`,
    );
    expect(got).toEqual({
      hasBuffer: false,
      blake3: blake3Hex(utf8('abc')),
      sha256: sha256Hex(utf8('abc')),
      canonical: canonicalJson({ b: [1, 'é'], a: { z: null, y: true } }),
      parsed: { k: [1, 2] },
      rfc: true,
      rfcTampered: false,
      nodeSigned: true,
      own: true,
      nodeId: nodeIdFromPublicKey(keys.publicKey),
      utf8Length: Buffer.byteLength(odd, 'utf8'),
      hexRoundTrip: '00ff10ab',
      badHex: 'TypeError',
    });
    // The published BLAKE3 and SHA-256 digests of "abc".
    expect(got.blake3).toBe('6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85');
    expect(got.sha256).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('without Buffer, utf8Length and hex agree with Buffer on random UTF-16 strings and bytes', async () => {
    const { code } = await bundle();
    const strings = fc.sample(
      fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
      300,
    );
    const bytes = fc.sample(fc.uint8Array({ maxLength: 64 }), 300).map((b) => Array.from(b));
    const got = inBrowserRealm<{ lengths: number[]; hex: string[]; back: number[][] }>(
      code,
      `(e) => {
        const strings = ${JSON.stringify(strings)};
        const bytes = ${JSON.stringify(bytes)};
        const hex = bytes.map((b) => e.toHex(new Uint8Array(b)));
        return { lengths: strings.map((s) => e.utf8Length(s)), hex, back: hex.map((h) => Array.from(e.fromHex(h))) };
      }`,
    );
    expect(got.lengths).toEqual(strings.map((s) => Buffer.byteLength(s, 'utf8')));
    expect(got.hex).toEqual(bytes.map((b) => Buffer.from(b).toString('hex')));
    expect(got.back).toEqual(bytes);
  });
});
