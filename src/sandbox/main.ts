#!/usr/bin/env node
/** Runs the sandbox on its own: `node --import tsx src/sandbox/main.ts [--port 4000]`. */
import { reportError } from '../cli/command-line.js';
import { runSandbox } from './cli.js';

process.exitCode = await runSandbox(process.argv.slice(2)).catch(reportError);
