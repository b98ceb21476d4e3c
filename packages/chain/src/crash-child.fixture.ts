// Child process of crash.test.ts: appends to the chain file named on the command line, several appends
// in flight at a time, and prints "seq hash" for each append after it resolved (acknowledged). The
// parent kills it with SIGKILL at a random moment. (Pipes are written synchronously on Linux, so
// whatever was printed reaches the parent.)
import { openChainFile } from './index.js';

const path = process.argv[2] as string;
const chain = await openChainFile(path);
process.stdout.write(`ready ${chain.size}\n`);
let next = 0;
async function worker(): Promise<void> {
  for (;;) {
    const i = next++;
    const e = await chain.append('workload.runtime', 'workload.start', {
      i,
      pad: 'x'.repeat((i * 997) % 5000),
    });
    process.stdout.write(`${e.seq} ${e.hash}\n`);
  }
}
for (let w = 0; w < 16; w++) void worker();
