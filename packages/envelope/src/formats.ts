/** Field formats shared by Heddle schemas: lower-case hex of fixed lengths, JSON objects. */

import type { JsonValue } from './json-limits.js';

/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/** 64 lower-case hex characters (a decision id, a public key). */
export const HEX64_RE: RegExp = /^[0-9a-f]{64}$/;

/** 32 lower-case hex characters (a node id, a nonce). */
export const HEX32_RE: RegExp = /^[0-9a-f]{32}$/;

/** True for a plain JSON object (not an array, not null, not a class instance). */
export function isJsonObject(value: unknown): value is JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** 128 lower-case hex characters (a signature). */
export const HEX128_RE: RegExp = /^[0-9a-f]{128}$/;
