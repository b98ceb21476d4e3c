// Child process for the crash-safety test in revocation-list.test.ts (run through tsx): appends one
// revocation after another to the list at argv[2], printing each saved generation, until it is killed.
import { fromHex, keyPairFromSecret, toHex } from '@heddle/envelope';
import { RevocationList } from './revocation-list.js';

const [path, secretHex] = process.argv.slice(2) as [string, string];
const keys = keyPairFromSecret(fromHex(secretHex, 32));
const trustedKeys = [toHex(keys.publicKey)];
for (let n = 0; ; n++) {
  const list = RevocationList.load(path, { trustedKeys });
  const ref = (list.generation + 1).toString(16).padStart(64, '0');
  // Pad the list so that each write takes long enough to be interrupted part-way.
  const next = list.add({ kind: 'artifact', ref, revokedAtMs: n, reason: 'x'.repeat(200) }, keys);
  next.save(path);
  process.stdout.write(`${next.generation}\n`);
}
