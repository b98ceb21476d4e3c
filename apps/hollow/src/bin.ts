import { exitQuietlyOnClosedPipe } from '@heddle/cli-kit';
import { runCli } from './cli.js';

exitQuietlyOnClosedPipe();
process.exitCode = await runCli(process.argv.slice(2));
