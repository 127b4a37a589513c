/**
 * The one list of error codes (src/contract/error-codes.ts, D250, D251) and what must agree with
 * it: the error tables of the descriptions and of D02 (rendered from it), the codes each response
 * of the bundled documents lists, and the statuses the sandbox's sources write with each code.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, errorRows, isListedError, renderErrorTable, withErrorTables } from '../../src/contract/error-codes.js';
import { ERROR_TABLE_FILES } from '../../scripts/error-tables.js';
import { bundleOf, derefObject, FAMILIES, isObject, operationsOf, requireDocument, ROOT, type Family, type JsonObject } from '../support/documents.js';

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** Codes every family answers at the level of a route or of the connection, which no operation's responses list. */
const ROUTE_LEVEL = new Set(['NOT_FOUND', 'METHOD_NOT_ALLOWED', 'REQUEST_TIMEOUT', 'HEADERS_TOO_LARGE']);

/** The codes an error response lists: the `enum` of its `errorCode` (D02) or `message` (D03), `$ref`s and `allOf` followed. */
function listedCodes(document: JsonObject, schema: unknown, into = new Set<string>(), depth = 0): Set<string> {
  const node = derefObject(document, schema);
  if (node === undefined || depth > 20) return into;
  const properties = derefObject(document, node.properties);
  for (const field of ['errorCode', 'message']) {
    const property = properties === undefined ? undefined : derefObject(document, properties[field]);
    if (Array.isArray(property?.enum)) for (const code of property.enum) into.add(String(code));
  }
  for (const key of ['allOf', 'oneOf', 'anyOf'] as const) {
    const parts = node[key];
    if (Array.isArray(parts)) for (const part of parts) listedCodes(document, part, into, depth + 1);
  }
  return into;
}

/** Every error response of a family's paths: where it is, its status and the codes it lists. */
function errorResponses(family: Family): Array<{ at: string; status: number; codes: Set<string> }> {
  const document = requireDocument(bundleOf(family));
  const found: Array<{ at: string; status: number; codes: Set<string> }> = [];
  for (const entry of operationsOf(document)) {
    if (entry.kind !== 'path' || !isObject(entry.operation.responses)) continue;
    for (const [status, raw] of Object.entries(entry.operation.responses)) {
      if (!/^[45][0-9]{2}$/.test(status)) continue;
      const response = derefObject(document, raw);
      const content = derefObject(document, response?.content);
      const json = content === undefined ? undefined : derefObject(document, content['application/json']);
      if (json === undefined) continue;
      found.push({ at: `${family} ${entry.method.toUpperCase()} ${entry.key} ${status}`, status: Number(status), codes: listedCodes(document, json.schema) });
    }
  }
  return found;
}

describe('the list of error codes', () => {
  it('has one row per code and status, and one status per code but NO_SUCH_TRANSACTION (400 in the body, 404 in the address)', () => {
    const keys = ERROR_CODES.map((row) => `${row.status} ${row.code}`);
    expect(keys.filter((key, index) => keys.indexOf(key) !== index)).toEqual([]);
    const statuses = new Map<string, Set<number>>();
    for (const row of ERROR_CODES) statuses.set(row.code, (statuses.get(row.code) ?? new Set()).add(row.status));
    const several = [...statuses].filter(([, set]) => set.size > 1).map(([code]) => code);
    expect(several).toEqual(['NO_SUCH_TRANSACTION']);
  });

  it('gives every row a condition and a fix', () => {
    for (const row of ERROR_CODES) {
      expect(row.condition.length, row.code).toBeGreaterThan(10);
      expect(row.fix.length, row.code).toBeGreaterThan(3);
    }
  });
});

describe('the error tables of the documents are rendered from the list', () => {
  for (const { file, family } of ERROR_TABLE_FILES) {
    it(`${file} holds the ${family} table as the list renders it (npm run errors:tables)`, () => {
      const text = read(file);
      const rendered = withErrorTables(text, family);
      expect(rendered.ok ? '' : rendered.problem).toBe('');
      if (rendered.ok) expect(rendered.text === text, `${file} differs from the list: run npm run errors:tables`).toBe(true);
      expect(text).toContain(renderErrorTable(family, file === 'docs/decisions.md' ? '  ' : ''));
    });
  }

  it('renders the web and SDK tables with the code in message, the others in errorCode', () => {
    expect(renderErrorTable('sdk').split('\n')[0]).toBe('| HTTP | message | When | How to fix |');
    expect(renderErrorTable('extras').split('\n')[0]).toBe('| HTTP | errorCode | When | How to fix |');
  });
});

describe("each response of the documents lists only the list's codes, and each code is answered somewhere", () => {
  for (const family of FAMILIES) {
    it(`${family}: every listed code is a row of ${family} with the response's status`, () => {
      const wrong: string[] = [];
      for (const response of errorResponses(family)) {
        for (const code of response.codes) if (!isListedError(family, response.status, code)) wrong.push(`${response.at}: ${code}`);
      }
      expect(wrong).toEqual([]);
    });

    it(`${family}: every row of the list but the route-level ones is listed by some response`, () => {
      const listed = new Set(errorResponses(family).flatMap((response) => [...response.codes].map((code) => `${response.status} ${code}`)));
      const missing = errorRows(family)
        .filter((row) => !ROUTE_LEVEL.has(row.code) && !listed.has(`${row.status} ${row.code}`))
        .map((row) => `${row.status} ${row.code}`);
      expect(missing).toEqual([]);
    });
  }
});

describe('the sandbox answers each code with the status of the list', () => {
  const sources = readdirSync(join(ROOT, 'src/sandbox'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => ({ name, text: read(join('src/sandbox', name)) }));

  /** `(status, code)` pairs written in the sources: `error(409, 'X'`, `notFound(..., 'X')` and the refund rules' `fail('X'` (400). */
  const written: Array<{ at: string; status: number; code: string }> = [];
  for (const { name, text } of sources) {
    for (const match of text.matchAll(/\berror\(\s*(\d{3}),\s*'([A-Z_]+)'/g)) written.push({ at: name, status: Number(match[1]), code: match[2] as string });
    for (const match of text.matchAll(/\bnotFound\([^;]*?,\s*'([A-Z_]+)'\s*\)/g)) written.push({ at: name, status: 404, code: match[1] as string });
    for (const match of text.matchAll(/\bfail\(\s*'([A-Z_]+)'/g)) written.push({ at: name, status: 400, code: match[1] as string });
  }

  it('finds the codes the sources write (the patterns still match them)', () => {
    const codes = new Set(written.map((entry) => entry.code));
    for (const code of ['DUPLICATE_ID', 'TRANSACTION_NOT_REFUNDABLE', 'INVALID_OTP', 'NO_SUCH_TRANSACTION', 'INVALID_STATE', 'METHOD_NOT_ALLOWED']) {
      expect(codes, code).toContain(code);
    }
  });

  it('writes every code with a status the list gives it', () => {
    const rows = new Set(ERROR_CODES.map((row) => `${row.status} ${row.code}`));
    expect(written.filter((entry) => !rows.has(`${entry.status} ${entry.code}`)).map((entry) => `${entry.at}: ${entry.status} ${entry.code}`)).toEqual([]);
  });
});
