/**
 * Writes the sandbox's settings tables into docs/sandbox.md from the settings table
 * (src/sandbox/settings.ts): the table of every flag and variable, between `<!-- settings table -->`
 * and `<!-- end of settings table -->`, and the memory budget's, between `<!-- budget table -->` and
 * `<!-- end of budget table -->`. `npm run docs:settings`; test/sandbox/settings.test.ts checks that
 * the file holds what this writes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { budgetTable, settingsTable } from '../src/sandbox/settings.js';

export const SANDBOX_DOC = resolve(import.meta.dirname, '..', 'docs', 'sandbox.md');

/** `markdown` with the text between each pair of markers replaced by its table. */
export function withSettingsTables(markdown: string): string {
  let text = markdown;
  for (const [name, table] of [
    ['settings table', settingsTable()],
    ['budget table', budgetTable()],
  ] as const) {
    const start = `<!-- ${name} -->\n`;
    const end = `\n<!-- end of ${name} -->`;
    const from = text.indexOf(start);
    const to = text.indexOf(end, from);
    if (from < 0 || to < 0) throw new Error(`docs/sandbox.md has no "${start.trim()}" ... "${end.trim()}" markers`);
    text = text.slice(0, from + start.length) + table + text.slice(to);
  }
  return text;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  writeFileSync(SANDBOX_DOC, withSettingsTables(readFileSync(SANDBOX_DOC, 'utf8')));
}
