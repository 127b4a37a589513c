#!/usr/bin/env node
/**
 * The `paylater` command line: runs the program of `commands.ts` and turns errors into messages and
 * exit codes: 0 success, 1 an invalid signature or a command that failed (the sandbox cannot be
 * reached, a triggered flow went wrong), 2 a usage or input error (a missing key, an unreadable
 * file), 70 a fault of the program itself. `paylater sandbox` started without its heap flags runs
 * this file again with them (heap.ts, relaunch.ts). Output into a closed pipe ends the command
 * quietly.
 */
import { reportError } from './command-line.js';
import { buildProgram } from './commands.js';

// Output piped into a reader that stops early (`paylater trigger ... | head`): the reader has what
// it wanted, so the command ends quietly instead of with an unhandled EPIPE.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

const argv = process.argv.slice(2);
process.exitCode = await buildProgram({ entry: { script: process.argv[1]!, argv } }).run(argv).catch(reportError);
