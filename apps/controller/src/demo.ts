// `pnpm demo` (the README's first command): a controller and three hosts on loopback, in a temporary
// directory, driven through the real `heddle` CLI and daemons. See demo/story.ts.
import { runDemo } from './demo/story.js';

process.exitCode = await runDemo();
