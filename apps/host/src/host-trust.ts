import { badInput, errorMessage } from '@heddle/cli-kit';
import { loadTrustFile, TRUST_SCHEMA, type TrustAnchors } from '@heddle/package';

/** The trust file `init` writes when no anchors are given: valid, and trusting nobody. */
export const EMPTY_TRUST_FILE: string = `${JSON.stringify({ schema: TRUST_SCHEMA, keys: [] }, null, 2)}\n`;

/**
 * Loads the host's own trust anchors (`loadTrustFile`). An empty key list (what `init` writes
 * without `--trust`) is valid: the host runs but verifies no package, and no revocation list, until
 * the operator pins a key. Throws `CliError` `trust_invalid` (exit 3, field `trust_file`).
 */
export function loadHostAnchors(path: string): TrustAnchors {
  try {
    return loadTrustFile(path);
  } catch (err) {
    throw badInput('trust_invalid', `trust_file: ${path}: ${errorMessage(err)}`, 'trust_file', err);
  }
}
