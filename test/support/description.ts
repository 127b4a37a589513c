/**
 * Reads the service's interface description (the single .txt under ../shared/seeds/ beside the
 * repository) so that the contract tests take what they check from the description itself, not
 * from a copy of it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { pathShape, ROOT, type Family } from './documents.js';

export interface Description {
  /** The file read, relative to the repository root (`../shared/seeds/....txt`). */
  file: string;
  text: string;
  /** Why the description could not be read; `text` is empty then. */
  problem: string | undefined;
}

function loadDescription(): Description {
  const folder = resolve(ROOT, '../shared/seeds');
  let names: string[];
  try {
    names = readdirSync(folder).filter((name) => name.endsWith('.txt'));
  } catch (error) {
    return { file: relative(ROOT, folder), text: '', problem: `cannot read ${folder}: ${String(error)}` };
  }
  if (names.length !== 1) {
    return {
      file: relative(ROOT, folder),
      text: '',
      problem: `expected exactly one interface description (.txt) in ${folder}, found ${names.length}: ${names.join(', ')}`,
    };
  }
  const path = join(folder, names[0] as string);
  return { file: relative(ROOT, path), text: readFileSync(path, 'utf8'), problem: undefined };
}

export const DESCRIPTION: Description = loadDescription();

/** The description's text; throws the reason it could not be read (inside a test, that fails it). */
export function requireDescription(): string {
  if (DESCRIPTION.problem !== undefined) throw new Error(DESCRIPTION.problem);
  return DESCRIPTION.text;
}

export type Placeholder = 'base_url' | 'web_url' | 'sdk_url';

/** One `METHOD {placeholder}/path?query` (or a bare `{placeholder}/path`) written in the description. */
export interface UrlOccurrence {
  /** Upper case; undefined when the URL is written without a method. */
  method: string | undefined;
  placeholder: Placeholder;
  /** The path after the placeholder, e.g. `/api/merchant/{id}`. */
  path: string;
  /** The query after `?`, e.g. `include=stage`; undefined when there is none. */
  query: string | undefined;
  /** 1-based line number in the description. */
  line: number;
  /** The text matched, for messages: `GET {base_url}/api/merchant/{id}`. */
  written: string;
}

const URL_PATTERN = /(?:\b(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+)?\{(base_url|web_url|sdk_url)\}(\/[^\s|`'"()<>,;]*)/g;

const HAS_URL = /\{(?:base_url|web_url|sdk_url)\}\//;

/** Every URL built on an address placeholder, with its method when one is written before it. */
export function urlOccurrences(text: string): UrlOccurrence[] {
  const occurrences: UrlOccurrence[] = [];
  text.split('\n').forEach((lineText, index) => {
    for (const match of lineText.matchAll(URL_PATTERN)) {
      const [, method, placeholder, rawTarget] = match;
      // A sentence may end right after the URL ("loaded from {web_url}/sdk.js.").
      const target = (rawTarget ?? '').replace(/[.:]+$/, '');
      const queryAt = target.indexOf('?');
      occurrences.push({
        method,
        placeholder: placeholder as Placeholder,
        path: queryAt === -1 ? target : target.slice(0, queryAt),
        query: queryAt === -1 ? undefined : target.slice(queryAt + 1),
        line: index + 1,
        written: `${method === undefined ? '' : `${method} `}{${placeholder}}${target}`,
      });
    }
  });
  return occurrences;
}

/**
 * The URLs written only without a method anywhere in the description (the browser script,
 * "loaded from {web_url}/sdk.js"): resources fetched with GET. A URL also written with a method
 * elsewhere is not one of them.
 */
export function urlsWithoutMethod(occurrences: readonly UrlOccurrence[]): UrlOccurrence[] {
  const withMethod = occurrences.filter((occurrence) => occurrence.method !== undefined);
  return occurrences.filter(
    (occurrence) =>
      occurrence.method === undefined &&
      !withMethod.some((other) => other.placeholder === occurrence.placeholder && pathShape(other.path) === pathShape(occurrence.path)),
  );
}

/**
 * The family whose document holds a URL: `{base_url}` the gateway, `{web_url}` the web flow,
 * `{sdk_url}` the SDK flow under `/merchant/credit/` and the extras under `/service/`.
 */
export function familyOfUrl(placeholder: Placeholder, path: string): Family | undefined {
  if (placeholder === 'base_url') return 'gateway';
  if (placeholder === 'web_url') return 'web';
  if (path.startsWith('/merchant/credit/')) return 'sdk';
  if (path.startsWith('/service/')) return 'extras';
  return undefined;
}

/** The cells of a Markdown table row, or undefined for any other line (and for `|---|` rows). */
export function markdownCells(line: string): string[] | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith('|')) return undefined;
  const cells = trimmed.replace(/^\|/, '').replace(/\|$/, '').split('|').map((cell) => cell.trim());
  if (cells.every((cell) => /^:?-+:?$/.test(cell))) return undefined;
  return cells;
}

export function normaliseSpace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * One key per "not shown" of the description: the first cell of a Markdown table row, else the
 * sentence holding it (from the previous `. `, `- ` or the line's start to the next `.`).
 */
export function notShownKeys(text: string): { key: string; line: number }[] {
  const keys: { key: string; line: number }[] = [];
  text.split('\n').forEach((lineText, index) => {
    if (!lineText.includes('not shown')) return;
    const cells = markdownCells(lineText);
    if (cells !== undefined) {
      keys.push({ key: normaliseSpace(cells[0] ?? ''), line: index + 1 });
      return;
    }
    let from = 0;
    for (;;) {
      const at = lineText.indexOf('not shown', from);
      if (at === -1) break;
      const before = lineText.slice(0, at);
      const boundaries = [before.lastIndexOf('. '), before.lastIndexOf('- ')].filter((found) => found !== -1);
      const start = boundaries.length === 0 ? 0 : Math.max(...boundaries) + 2;
      const endDot = lineText.indexOf('.', at);
      const end = endDot === -1 ? lineText.length : endDot + 1;
      keys.push({ key: normaliseSpace(lineText.slice(start, end)), line: index + 1 });
      from = end;
    }
  });
  return keys;
}

/**
 * The values listed for a field in a table row of the description: the row whose first cell is
 * `field` says "One of a, b, c." (or "a or b").
 */
export function valuesOfField(text: string, field: string): string[] {
  for (const line of text.split('\n')) {
    const cells = markdownCells(line);
    if (cells === undefined || cells[0] !== field) continue;
    const notes = cells.slice(1).join(' ');
    const listed = /One of ([^.]+)\./.exec(notes)?.[1];
    if (listed === undefined) continue;
    return listed.split(/,|\bor\b|\band\b/).map((value) => value.trim()).filter((value) => value.length > 0);
  }
  return [];
}

/**
 * The operations the description names only in words: first cells of table rows that carry no
 * URL and say "Method, path and payloads: not shown", split at commas.
 */
export function operationsNamedInWords(text: string): { phrase: string; line: number }[] {
  const named: { phrase: string; line: number }[] = [];
  text.split('\n').forEach((line, index) => {
    const cells = markdownCells(line);
    if (cells === undefined || cells.length < 2) return;
    const first = cells[0] ?? '';
    if (HAS_URL.test(first)) return;
    if (!cells.slice(1).some((cell) => cell.includes('Method, path and payloads'))) return;
    for (const phrase of first.split(',')) named.push({ phrase: normaliseSpace(phrase), line: index + 1 });
  });
  return named;
}
