import { exitQuietlyOnClosedPipe } from '@heddle/cli-kit';
import { runCli } from './cli.js';

// `heddle-seed ... | head -1`: a reader that went away ends the program quietly (exit 0).
exitQuietlyOnClosedPipe();
process.exitCode = await runCli(process.argv.slice(2));
