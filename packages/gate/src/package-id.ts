const HEX_ID = /^[0-9a-fA-F]{64}$/;

/**
 * A package id as the gate compares it: one that is 64 hex characters (a BLAKE3 package id) is
 * lower-cased, so that it matches a revocation however it was written; any other id is kept as given.
 */
export function normalisePackageId(id: string): string {
  return id.length === 64 && HEX_ID.test(id) ? id.toLowerCase() : id;
}
