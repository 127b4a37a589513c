/**
 * The `paylater` command as the tests start it: `node .test-build-<pid>/cli/main.js`, the sources
 * transpiled once per run by test/support/build-sources.ts (the suites' global setup).
 */
import { join } from 'node:path';
import { inject } from 'vitest';
import type {} from './build-sources.js';

/** The transpiled copy of src/ of this run (the same depth below the repository as src/). */
export const CLI_BUILD: string = inject('testBuild');
/** The CLI's entry in it: spawn `process.execPath` with this file and the command's arguments. */
export const CLI_ENTRY = join(CLI_BUILD, 'cli', 'main.js');
