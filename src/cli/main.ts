#!/usr/bin/env node
/**
 * The `paylater` command line: dispatches to the commands of `commands.ts` and turns errors into
 * messages and exit codes: 0 success, 1 an invalid signature, 2 a usage or input error (a
 * missing key, an unreadable file), 70 a fault of the program itself.
 */
import { commandGroup, reportError } from './command-line.js';
import { commands } from './commands.js';

const program = commandGroup({
  command: 'paylater',
  summary: 'tools for the pay-later service',
  noun: 'command',
  description: 'Tools for the pay-later service.',
  subcommands: commands,
});

process.exitCode = await program.run(process.argv.slice(2)).catch(reportError);
