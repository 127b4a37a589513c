/**
 * The `paylater` command as the tests start it: `node .test-build/cli/main.js`, the sources
 * transpiled once per run by test/support/build-sources.ts (the suites' global setup).
 */
import { join, resolve } from 'node:path';

export const REPOSITORY = resolve(import.meta.dirname, '../..');
/** The transpiled copy of src/ (the same depth below the repository as src/). */
export const CLI_BUILD = join(REPOSITORY, '.test-build');
/** The CLI's entry in it: spawn `process.execPath` with this file and the command's arguments. */
export const CLI_ENTRY = join(CLI_BUILD, 'cli', 'main.js');
