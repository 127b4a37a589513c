#!/usr/bin/env node
/**
 * The `paylater` command line: runs the program of `commands.ts` and turns errors into messages and
 * exit codes: 0 success, 1 an invalid signature or a command that failed (the sandbox cannot be
 * reached, a triggered flow went wrong), 2 a usage or input error (a missing key, an unreadable
 * file), 70 a fault of the program itself.
 */
import { reportError } from './command-line.js';
import { buildProgram } from './commands.js';

process.exitCode = await buildProgram().run(process.argv.slice(2)).catch(reportError);
