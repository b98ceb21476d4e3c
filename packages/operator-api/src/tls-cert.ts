import { createHash, generateKeyPairSync, randomBytes, sign, X509Certificate } from 'node:crypto';

/** A PEM certificate and its PEM private key. */
export interface TlsMaterial {
  readonly cert: string;
  readonly key: string;
}

// A minimal DER writer: enough for one self-signed X.509 v3 certificate.
function der(tag: number, body: Uint8Array): Buffer {
  const n = body.length;
  const len =
    n < 0x80
      ? [n]
      : n < 0x100
        ? [0x81, n]
        : n < 0x10000
          ? [0x82, n >> 8, n & 0xff]
          : [0x83, n >> 16, (n >> 8) & 0xff, n & 0xff];
  return Buffer.concat([Buffer.from([tag, ...len]), body]);
}
const seq = (...parts: Uint8Array[]): Buffer => der(0x30, Buffer.concat(parts));
const set = (...parts: Uint8Array[]): Buffer => der(0x31, Buffer.concat(parts));
function oid(dotted: string): Buffer {
  const [a = 0, b = 0, ...rest] = dotted.split('.').map(Number);
  const out = [a * 40 + b];
  for (const v of rest) {
    const bytes = [v & 0x7f];
    for (let x = v >>> 7; x > 0; x >>>= 7) bytes.unshift((x & 0x7f) | 0x80);
    out.push(...bytes);
  }
  return der(0x06, Buffer.from(out));
}
function time(ms: number): Buffer {
  // GeneralizedTime YYYYMMDDHHMMSSZ (valid for every year; RFC 5280 allows it after 2049 only, but
  // every TLS stack reads it).
  const d = new Date(ms);
  const p = (v: number, w = 2): string => String(v).padStart(w, '0');
  const s = `${p(d.getUTCFullYear(), 4)}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}Z`;
  const year = d.getUTCFullYear();
  return year < 2050 ? der(0x17, Buffer.from(s.slice(2), 'ascii')) : der(0x18, Buffer.from(s, 'ascii'));
}
const name = (cn: string): Buffer => seq(set(seq(oid('2.5.4.3'), der(0x0c, Buffer.from(cn, 'utf8')))));
const ECDSA_SHA256 = seq(oid('1.2.840.10045.4.3.2'));

/**
 * A new self-signed ECDSA P-256 certificate for the operator API's TLS listener, valid from a day
 * before `now` for `days` days, naming `commonName` and carrying `altIps` as IP subject alternative
 * names. Clients pin its SHA-256 fingerprint ({@link certFingerprint}) rather than trusting a CA.
 */
export function selfSignedCert(options: {
  readonly commonName: string;
  readonly altIps?: readonly string[];
  readonly days?: number;
  readonly now?: number;
}): TlsMaterial {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const now = options.now ?? Date.now();
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  const ips = (options.altIps ?? []).flatMap((ip) => {
    const bytes = ipBytes(ip);
    return bytes === undefined ? [] : [der(0x87, bytes)];
  });
  const extensions = ips.length === 0 ? [] : [der(0xa3, seq(seq(oid('2.5.29.17'), der(0x04, seq(...ips)))))];
  const tbs = seq(
    der(0xa0, der(0x02, Buffer.from([2]))),
    der(0x02, serial),
    ECDSA_SHA256,
    name(options.commonName),
    seq(time(now - 86_400_000), time(now + (options.days ?? 3650) * 86_400_000)),
    name(options.commonName),
    publicKey.export({ type: 'spki', format: 'der' }),
    ...extensions,
  );
  const signature = sign('sha256', tbs, privateKey);
  const cert = seq(tbs, ECDSA_SHA256, der(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const b64 = cert.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '');
  return {
    cert: `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`,
    // cast: export with format 'pem' answers a string.
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
  };
}

function ipBytes(ip: string): Buffer | undefined {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (v4 !== null) return Buffer.from(v4.slice(1).map(Number));
  return undefined;
}

/** A pinned certificate fingerprint as Heddle writes it: `sha256:` and 64 lower-case hex characters. */
export const FINGERPRINT_RE: RegExp = /^sha256:[0-9a-f]{64}$/;

/** The SHA-256 fingerprint of a certificate's DER bytes (`sha256:<hex>`). */
export function fingerprintOfDer(raw: Uint8Array): string {
  return `sha256:${createHash('sha256').update(raw).digest('hex')}`;
}

/** The SHA-256 fingerprint of the first certificate of a PEM text (`sha256:<hex>`). */
export function certFingerprint(pem: string): string {
  return fingerprintOfDer(new X509Certificate(pem).raw);
}

/**
 * A fingerprint as typed by an operator (`sha256:` prefix optional, colons and upper case allowed:
 * `AB:CD:...` as openssl prints it) in the form Heddle compares (`sha256:<64 lower hex>`); undefined
 * when it is not one.
 */
export function normaliseFingerprint(text: string): string | undefined {
  const hex = text
    .trim()
    .replace(/^sha256:/i, '')
    .replace(/:/g, '')
    .toLowerCase();
  return /^[0-9a-f]{64}$/.test(hex) ? `sha256:${hex}` : undefined;
}
