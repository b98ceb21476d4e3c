import { NETWORK_LEVELS, NODE_TIERS } from '@heddle/model';
import { type GateContext, MAX_CONTEXT_REFS } from './context.js';
import { PACKAGE_TRUST_LEVELS } from './levels.js';
import { normalisePackageId } from './package-id.js';

// A hand-written validator for the common case: a plain, well-formed context. It accepts a strict
// subset of what `GateContextSchema` accepts and returns exactly what the schema would (a property
// test holds it to that); anything it does not accept goes to the schema, which produces the
// field-level error. It exists because the schema costs tens of microseconds on varied input.

const REF = /^[\x21-\x7e]{1,256}$/;
const TRUST: ReadonlySet<unknown> = new Set(PACKAGE_TRUST_LEVELS);
const TIERS: ReadonlySet<unknown> = new Set(NODE_TIERS);
const NETS: ReadonlySet<unknown> = new Set(NETWORK_LEVELS);
const KNOWN: ReadonlySet<string> = new Set([
  'kind',
  'package_trust',
  'node_tier',
  'network',
  'secrets',
  'emulated',
  'accelerator',
  'resource_cost',
  'package_id',
  'signer_keys',
  'artifact_hashes',
]);

function isRef(v: unknown): v is string {
  return typeof v === 'string' && REF.test(v);
}

function refs(v: unknown): string[] | undefined {
  if (v === undefined) return [];
  if (!Array.isArray(v) || v.length > MAX_CONTEXT_REFS || Object.getPrototypeOf(v) !== Array.prototype)
    return undefined;
  const out = new Array<string>(v.length);
  for (let i = 0; i < v.length; i++) {
    const s: unknown = v[i];
    if (!isRef(s)) return undefined;
    out[i] = s.toLowerCase();
  }
  return out;
}

/**
 * The context, when `input` is a plain well-formed context; `undefined` when it is not (or when it is
 * unusual in a way the schema should judge). Never throws on plain data; may throw from a getter.
 */
export function fastParseContext(input: unknown): GateContext | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const proto: unknown = Object.getPrototypeOf(input);
  if (proto !== Object.prototype && proto !== null) return undefined;
  // cast: a plain object (prototype checked just above): its fields are checked one by one below
  const o = input as Record<string, unknown>;
  const keys = Object.keys(o);
  for (const k of keys) if (!KNOWN.has(k)) return undefined;
  if (Object.getOwnPropertySymbols(o).length !== 0) return undefined;
  const {
    kind,
    package_trust,
    node_tier,
    network,
    secrets,
    emulated,
    accelerator,
    resource_cost,
    package_id,
  } = o;
  if (!isRef(kind) || !TRUST.has(package_trust) || !TIERS.has(node_tier) || !NETS.has(network))
    return undefined;
  if (typeof secrets !== 'boolean' || typeof emulated !== 'boolean') return undefined;
  if (typeof resource_cost !== 'number' || !(resource_cost >= 0 && resource_cost <= 1)) return undefined;
  if (!isRef(package_id)) return undefined;
  if (accelerator !== undefined && accelerator !== null && !isRef(accelerator)) return undefined;
  if (accelerator === undefined && keys.includes('accelerator')) return undefined;
  const signer_keys = refs(o.signer_keys);
  const artifact_hashes = refs(o.artifact_hashes);
  if (signer_keys === undefined || artifact_hashes === undefined) return undefined;
  const base = {
    kind,
    // cast: checked against TRUST above
    package_trust: package_trust as GateContext['package_trust'],
    // cast: checked against TIERS above
    node_tier: node_tier as GateContext['node_tier'],
    // cast: checked against NETS above
    network: network as GateContext['network'],
    secrets,
    emulated,
    resource_cost,
    package_id: normalisePackageId(package_id),
    signer_keys,
    artifact_hashes,
  };
  return accelerator === undefined || accelerator === null ? base : { ...base, accelerator };
}
