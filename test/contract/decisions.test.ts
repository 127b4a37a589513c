/**
 * The decision record and the documents agree: every `x-decision` of openapi/ names a decision of
 * docs/decisions.md, every decision is used, every decided element says so in its description,
 * and every "not shown" of the interface description has a row in the record's coverage table.
 * Decisions about the code are in docs/code-decisions.md: no x-decision names one, and the two
 * files share one numbering.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { FAMILIES, isObject, ROOT } from '../support/documents.js';
import { DESCRIPTION, DESCRIPTION_DATA_FILE, markdownCells, normaliseSpace } from '../support/description.js';

const RECORD_FILE = 'docs/decisions.md';
const MARK = 'Decided by this contract';

const CODE_RECORD_FILE = 'docs/code-decisions.md';
const record = readFileSync(join(ROOT, RECORD_FILE), 'utf8');
const codeRecord = readFileSync(join(ROOT, CODE_RECORD_FILE), 'utf8');
const headings = (text: string) => [...text.matchAll(/^## (D[0-9]{2,3})\b/gm)].map((match) => match[1] as string);
/** Decisions of a record whose scope is the code (`- **Scope:** the code`). */
const codeScoped = (text: string) => [...text.matchAll(/^## (D[0-9]{2,3})\b[^\n]*\n- \*\*Scope:\*\* the code\b/gm)].map((match) => match[1] as string);
const decisions = new Set(headings(record));
/** Decisions about the code rather than the contract: no x-decision carries them. */
const CODE_DECISIONS = new Set(headings(codeRecord));

interface Carrier {
  /** `openapi/paths/sdk/x.yaml#/post/responses/400` */
  at: string;
  file: string;
  value: unknown;
  node: Record<string, unknown>;
}

/** Every object of every YAML file under openapi/ that carries `x-decision`. */
function carriers(): { carriers: Carrier[]; unreadable: string[] } {
  const found: Carrier[] = [];
  const unreadable: string[] = [];
  const files = readdirSync(join(ROOT, 'openapi'), { recursive: true, encoding: 'utf8' })
    .filter((name) => /\.ya?ml$/.test(name))
    .map((name) => join('openapi', name))
    .sort();
  for (const file of files) {
    let content: unknown;
    try {
      content = parse(readFileSync(join(ROOT, file), 'utf8'));
    } catch (error) {
      unreadable.push(`${file}: ${String(error)}`);
      continue;
    }
    const walk = (node: unknown, path: string): void => {
      if (Array.isArray(node)) node.forEach((child, index) => walk(child, `${path}/${index}`));
      if (!isObject(node)) return;
      if ('x-decision' in node) found.push({ at: `${file}#${path}`, file, value: node['x-decision'], node });
      for (const [key, child] of Object.entries(node)) walk(child, `${path}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`);
    };
    walk(content, '');
  }
  return { carriers: found, unreadable };
}

const { carriers: CARRIERS, unreadable: UNREADABLE } = carriers();

/** The text of a description: inline, or a `$ref` to a Markdown file beside the YAML file. */
function descriptionText(carrier: Carrier): string | undefined {
  const description = carrier.node.description;
  if (typeof description === 'string') return description;
  if (isObject(description) && typeof description.$ref === 'string') {
    const path = join(ROOT, dirname(carrier.file), description.$ref);
    return existsSync(path) ? readFileSync(path, 'utf8') : `(unreadable ${description.$ref})`;
  }
  return undefined;
}

/** The rows (first cell, second cell) of the first table after the heading "## Coverage of every". */
function coverageRows(): { quote: string; decisions: string }[] {
  const lines = record.split('\n');
  const heading = lines.findIndex((line) => /^##\s+Coverage of every/.test(line));
  if (heading === -1) return [];
  const rows: { quote: string; decisions: string }[] = [];
  let inTable = false;
  let header = true;
  for (const line of lines.slice(heading + 1)) {
    const isRow = line.trim().startsWith('|');
    if (!isRow && inTable) break;
    if (!isRow) continue;
    inTable = true;
    const cells = markdownCells(line);
    if (cells === undefined) continue;
    if (header) {
      header = false;
      continue;
    }
    rows.push({ quote: normaliseSpace(cells[0] ?? ''), decisions: cells[1] ?? '' });
  }
  return rows;
}

const COVERAGE = coverageRows();

/**
 * Whether a coverage row quotes a key: it contains the key, or it shortens the start of a long
 * quote with "..." and the key ends with the row's text after the ellipsis.
 */
function covers(quote: string, key: string): boolean {
  if (quote.includes(key)) return true;
  const ellipsis = Math.max(quote.lastIndexOf('...') + 3, quote.lastIndexOf('…') + 1);
  if (ellipsis <= 0) return false;
  const tail = quote.slice(ellipsis).trim();
  return tail.length > 0 && key.endsWith(tail);
}

describe(`x-decision in openapi/ and ${RECORD_FILE}`, () => {
  it('the decision record has decisions and the YAML files parse', () => {
    expect(decisions.size, `no "## Dnn" heading in ${RECORD_FILE}`).toBeGreaterThan(0);
    expect(UNREADABLE, `YAML files that do not parse:\n${UNREADABLE.join('\n')}`).toEqual([]);
    expect(CARRIERS.length, 'no x-decision anywhere under openapi/').toBeGreaterThan(0);
  });

  it(`the contract's decisions are in ${RECORD_FILE}, the code's in ${CODE_RECORD_FILE}, each number once`, () => {
    expect(codeScoped(record), `decisions about the code belong in ${CODE_RECORD_FILE}`).toEqual([]);
    expect(codeScoped(codeRecord).sort()).toEqual([...CODE_DECISIONS].sort());
    expect(CODE_DECISIONS.size).toBeGreaterThan(0);
    const all = [...headings(record), ...headings(codeRecord)];
    expect(all.filter((id, index) => all.indexOf(id) !== index), 'numbers used twice').toEqual([]);
  });

  it(`(a) every x-decision names a "## Dnn" decision of ${RECORD_FILE}`, () => {
    const unknown = CARRIERS.filter((carrier) => typeof carrier.value !== 'string' || !decisions.has(carrier.value)).map(
      (carrier) => `${carrier.at}: ${JSON.stringify(carrier.value)}`,
    );
    expect(unknown, `x-decision values that name no decision:\n  ${unknown.join('\n  ')}`).toEqual([]);
  });

  it('(b) every decision is used by at least one x-decision', () => {
    const used = new Set(CARRIERS.map((carrier) => carrier.value));
    const unused = [...decisions].filter((decision) => !used.has(decision) && !CODE_DECISIONS.has(decision));
    const missingRoots = FAMILIES.map((family) => `openapi/${family}.yaml`).filter((file) => !existsSync(join(ROOT, file)));
    const note = missingRoots.length === 0 ? '' : ` (documents not written yet: ${missingRoots.join(', ')})`;
    expect(unused, `decisions no x-decision uses${note}: ${unused.join(', ')}`).toEqual([]);
  });

  it(`(c) every decided element with a description says "${MARK}"`, () => {
    const unmarked = CARRIERS.filter((carrier) => {
      const text = descriptionText(carrier);
      return text !== undefined && !text.includes(MARK);
    }).map((carrier) => `${carrier.at} (${String(carrier.value)}): ${JSON.stringify(descriptionText(carrier)?.slice(0, 120))}`);
    expect(unmarked, `descriptions of x-decision elements without "${MARK} (Dnn)":\n  ${unmarked.join('\n  ')}`).toEqual([]);
  });
});

describe(`coverage of every "not shown" in ${RECORD_FILE}`, () => {
  const keys = DESCRIPTION.notShown;

  it(`${DESCRIPTION_DATA_FILE} records the description's 33 "not shown" elements, each with a key`, () => {
    expect(keys).toHaveLength(33);
    expect(keys.filter((key) => normaliseSpace(key.key).length === 0 || key.section.length === 0)).toEqual([]);
  });

  it('the coverage table exists', () => {
    expect(COVERAGE.length, `no table after a "## Coverage of every" heading in ${RECORD_FILE}`).toBeGreaterThan(0);
  });

  it('(d) every "not shown" has a row in the coverage table', () => {
    const uncovered = keys.filter(({ key }) => !COVERAGE.some((row) => covers(row.quote, key))).map(({ key, section }) => `${section}: ${key}`);
    expect(uncovered, `"not shown" without a row in the coverage table of ${RECORD_FILE}:\n  ${uncovered.join('\n  ')}`).toEqual([]);
  });

  it('(e) the coverage table names existing decisions only', () => {
    const wrong = COVERAGE.flatMap((row) => {
      const named = row.decisions.match(/D[0-9]{2,3}/g) ?? [];
      if (named.length === 0) return [`${row.quote}: names no decision`];
      return named.filter((decision) => !decisions.has(decision)).map((decision) => `${row.quote}: ${decision} is not a decision`);
    });
    expect(wrong, wrong.join('\n')).toEqual([]);
  });
});

