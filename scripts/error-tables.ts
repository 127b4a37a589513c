/**
 * Writes the error tables of the contract from its one list (src/contract/error-codes.ts): the
 * Errors table of each family's description (openapi/descriptions/<family>.md) and D02's table in
 * docs/decisions.md, each between `<!-- error-codes:<family> -->` and `<!-- /error-codes -->`.
 * `npm run errors:tables`, then `npm run generate` (the descriptions are bundled into the
 * documents); test/contract/error-codes.test.ts checks that the files hold what this writes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { withErrorTables } from '../src/contract/error-codes.js';
import type { Family } from '../src/contract/families.js';

const ROOT = resolve(import.meta.dirname, '..');

/** Each file with a rendered table, and the family whose rows it shows. */
export const ERROR_TABLE_FILES: ReadonlyArray<{ file: string; family: Family }> = [
  { file: 'openapi/descriptions/gateway.md', family: 'gateway' },
  { file: 'openapi/descriptions/extras.md', family: 'extras' },
  { file: 'openapi/descriptions/web.md', family: 'web' },
  { file: 'openapi/descriptions/sdk.md', family: 'sdk' },
  { file: 'docs/decisions.md', family: 'gateway' },
];

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  for (const { file, family } of ERROR_TABLE_FILES) {
    const path = resolve(ROOT, file);
    const rendered = withErrorTables(readFileSync(path, 'utf8'), family);
    if (!rendered.ok) throw new Error(`${file}: ${rendered.problem}`);
    writeFileSync(path, rendered.text);
  }
}
