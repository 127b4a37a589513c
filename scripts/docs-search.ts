/**
 * The site's search (one search over the guides and the four references), built by `npm run docs`:
 *
 * - the index: one entry per section of every guide (its heading's anchor), per section of each
 *   reference's overview, per tag and operation of a reference (Redoc's routes, `gateway.html#/
 *   transactions/createtransaction`), and per error code of a reference's "Errors" table (leading to
 *   that table), and per error code a guide's section names (leading to that section: the index
 *   keeps only the start of a section's text, where a code further down would not be found), with
 *   the fields to search and their weights;
 * - the script (scripts/docs-search-client.ts, bundled with Fuse.js by esbuild) and its style
 *   sheet, which put a search box on every page and fetch the index when it is first used.
 *
 * All three are assets named by their hash (scripts/docs-assets.ts): nothing leaves the site.
 * Fuse.js (Apache-2.0, no dependencies) does the matching: it tolerates typos and weighs a match
 * in a title above one in the text. A reference section's route is read from Redoc's prerendered
 * links, not computed, so that it is the route Redoc gives it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { Marked, type Token, type Tokens } from 'marked';
import { BROWSER_BUILD_OPTIONS } from './build-browser.js';
import { writeHashedAsset } from './docs-assets.js';
import { headingIds } from './docs-text.js';
import { familyInfo, type Family } from './families.js';

export interface SearchEntry {
  /** What is found: a heading, an operation's summary, an error code. */
  title: string;
  /** Where it is: the guide's or reference's name, and the section. */
  where: string;
  /** The text searched besides the title (shortened), and the start of it shown under a result. */
  text: string;
  /** The page and its place, relative to the site (`flows.html#web-flow`). */
  url: string;
  kind: 'guide' | 'reference' | 'operation' | 'error';
}

/** The fields Fuse.js searches, and their weights: a title counts most. */
export const SEARCH_KEYS = [
  { name: 'title', weight: 3 },
  { name: 'where', weight: 1 },
  { name: 'text', weight: 1 },
];

/** At most this much text of a section is searched (the index stays small). */
const TEXT_LIMIT = 800;
const ERROR_CODE = /^[A-Z][A-Z0-9_]{2,}$/;

function shorten(text: string, limit = TEXT_LIMIT): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > limit ? `${flat.slice(0, limit - 3)}...` : flat;
}

/**
 * Markdown as searchable text: without backticks, emphasis and HTML tags, but with the underscores
 * inside words (`NO_SUCH_TRANSACTION`), which the guides' `plain` drops as emphasis.
 */
export function searchText(markdown: string): string {
  return markdown
    .replace(/<[^>]+>/g, ' ')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .replace(/(^|[^A-Za-z0-9])_+|_+(?=[^A-Za-z0-9]|$)/g, '$1')
    .trim();
}

/** Markdown tokens as text (code blocks included: a reader searches for what they type). */
function tokensText(tokens: Token[]): string {
  return searchText(tokens.map((t) => ('text' in t && t.type !== 'table' ? String(t.text) : t.raw)).join(' '));
}

/** A Markdown text cut at its headings: each heading's text, its anchor and the text under it. */
export function markdownSections(markdown: string): { heading: string; id: string; depth: number; text: string }[] {
  const headingId = headingIds();
  const sections: { heading: string; id: string; depth: number; tokens: Token[] }[] = [];
  for (const token of new Marked({ gfm: true }).lexer(markdown)) {
    if (token.type === 'heading') {
      const heading = token as Tokens.Heading;
      sections.push({ heading: searchText(heading.text), id: headingId(heading.text), depth: heading.depth, tokens: [] });
    } else {
      sections.at(-1)?.tokens.push(token);
    }
  }
  return sections.map(({ tokens, ...section }) => ({ ...section, text: tokensText(tokens) }));
}

/** The entries of a guide: one per heading, the page's title for the first. */
export function guideEntries(guide: { file: string; title: string }, markdown: string): SearchEntry[] {
  return markdownSections(markdown).map((section, index) => ({
    title: section.heading,
    where: index === 0 ? 'Guide' : `Guide · ${guide.title}`,
    text: shorten(section.text),
    url: index === 0 ? guide.file : `${guide.file}#${section.id}`,
    kind: 'guide',
  }));
}

/** The characters of a guide's text shown around an error code it mentions. */
const MENTION_BEFORE = 60;
const MENTION_AFTER = 140;

/**
 * The error codes of the references' Errors tables (`codes`) that a guide's sections name: one
 * entry per section and code, titled by the code, with the words around its first mention. They
 * are listed after the references' own entries, so that a code's table comes first among equal
 * matches.
 */
export function guideMentions(guide: { file: string; title: string }, markdown: string, codes: ReadonlySet<string>): SearchEntry[] {
  const entries: SearchEntry[] = [];
  markdownSections(markdown).forEach((section, index) => {
    const named = new Set([...section.text.matchAll(/[A-Z][A-Z0-9_]{2,}/g)].map((m) => m[0]).filter((word) => codes.has(word)));
    for (const code of named) {
      const at = section.text.search(new RegExp(`(?<![A-Za-z0-9_])${code}(?![A-Za-z0-9_])`));
      if (at < 0) continue;
      // From the start of a word: the first space at most MENTION_BEFORE characters before.
      const start = at <= MENTION_BEFORE ? 0 : section.text.indexOf(' ', at - MENTION_BEFORE) + 1;
      const around = shorten(section.text.slice(start, at + MENTION_AFTER), MENTION_BEFORE + MENTION_AFTER);
      entries.push({
        title: code,
        where: `Guide · ${guide.title}${index === 0 ? '' : ` · ${section.heading}`}`,
        text: `${start > 0 ? '...' : ''}${around}`,
        url: index === 0 ? guide.file : `${guide.file}#${section.id}`,
        kind: 'guide',
      });
    }
  });
  return entries;
}

/** Redoc's routes by their label, from the links of the prerendered page (`Errors` -> `#/section/errors`). */
export function redocRoutes(html: string): Map<string, string> {
  const routes = new Map<string, string>();
  for (const match of html.matchAll(/<a\b[^>]*\bhref="(#\/[^"]*)"[^>]*>([\s\S]*?)<\/a>/g)) {
    const label = (match[2] as string).replace(/<[^>]+>/g, '').replace(/&amp;/g, '&').replace(/&#x27;|&#39;/g, "'").trim();
    if (label !== '' && !routes.has(label)) routes.set(label, match[1] as string);
  }
  return routes;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/** The entries of a family's reference: its overview's sections, its error codes, its tags and operations. */
export function referenceEntries(family: Family, document: Record<string, unknown>, prerendered: string): SearchEntry[] {
  const page = `${family}.html`;
  const name = `${familyInfo(family).label} reference`;
  const routes = redocRoutes(prerendered);
  const info = (document.info ?? {}) as Record<string, unknown>;
  const entries: SearchEntry[] = [{ title: String(info.title ?? family), where: name, text: shorten(String(info.summary ?? '')), url: page, kind: 'reference' }];

  for (const section of markdownSections(String(info.description ?? ''))) {
    const route = routes.get(section.heading);
    if (route === undefined || !route.startsWith('#/section/')) continue;
    entries.push({ title: section.heading, where: name, text: shorten(section.text), url: `${page}${route}`, kind: 'reference' });
    if (section.heading !== 'Errors') continue;
    // Each error code of the table leads to the table, with the rows that name it.
    const rows = new Map<string, string[]>();
    for (const line of errorRows(String(info.description))) {
      for (const code of [...line.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string).filter((c) => ERROR_CODE.test(c))) {
        rows.set(code, [...(rows.get(code) ?? []), searchText(line).replace(/\|/g, ' ').replace(/\s+/g, ' ').trim()]);
      }
    }
    for (const [code, lines] of rows) {
      entries.push({ title: code, where: `${name} · Errors`, text: shorten(lines.join(' · '), 400), url: `${page}${route}`, kind: 'error' });
    }
  }

  const tagRoute = (tag: string) => routes.get(tag);
  for (const tag of (document.tags ?? []) as { name: string; description?: string }[]) {
    const route = tagRoute(tag.name);
    if (route) entries.push({ title: tag.name, where: name, text: shorten(searchText(tag.description ?? '')), url: `${page}${route}`, kind: 'reference' });
  }
  for (const [key, label] of [['paths', ''], ['webhooks', 'webhook ']] as const) {
    for (const [path, item] of Object.entries((document[key] ?? {}) as Record<string, Record<string, unknown>>)) {
      for (const method of METHODS.filter((m) => item[m] !== undefined)) {
        const operation = item[method] as { operationId?: string; summary?: string; description?: string; tags?: string[] };
        const route = operation.tags?.[0] === undefined ? undefined : tagRoute(operation.tags[0]);
        if (!operation.operationId || route === undefined) continue;
        entries.push({
          title: operation.summary ?? operation.operationId,
          where: `${name} · ${label}${method.toUpperCase()} ${path}`,
          text: shorten(`${operation.operationId} ${searchText(operation.description ?? '')}`, 600),
          url: `${page}${route}/${operation.operationId.toLowerCase()}`,
          kind: 'operation',
        });
      }
    }
  }
  return entries;
}

/** The table lines of the description's "Errors" section, as written (the codes in backticks). */
function errorRows(description: string): string[] {
  const start = description.search(/^#+ Errors\s*$/m);
  if (start < 0) return [];
  const rest = description.slice(start).split('\n').slice(1);
  const end = rest.findIndex((line) => /^#+ /.test(line));
  return (end < 0 ? rest : rest.slice(0, end)).filter((line) => line.startsWith('|'));
}

/** The links a page puts in its head for the search: the script (which names its index) and the style sheet. */
export interface SearchAssets {
  script: string;
  index: string;
  style: string;
}

/**
 * Writes the index (the entries), the script and the style sheet under siteDir/assets/ by their
 * hashed names. Fuse.js's own index of the entries is made in the browser when the box is first
 * used (a few milliseconds): sent ready-made, it would double the download, since it repeats the text.
 */
export async function writeSearch(siteDir: string, entries: SearchEntry[]): Promise<SearchAssets> {
  const indexLink = writeHashedAsset(siteDir, 'search-index.json', JSON.stringify({ keys: SEARCH_KEYS, entries }));
  const bundled = await build({ ...BROWSER_BUILD_OPTIONS, entryPoints: [join(import.meta.dirname, 'docs-search-client.ts')], write: false, logLevel: 'silent' });
  const script = writeHashedAsset(siteDir, 'search.js', bundled.outputFiles[0]?.contents ?? new Uint8Array());
  const style = writeHashedAsset(siteDir, 'search.css', readFileSync(join(import.meta.dirname, 'docs-search.css'), 'utf8'));
  return { script, index: indexLink, style };
}

/** The tags of a page's head that give it the search box. */
export function searchHead(assets: SearchAssets): string {
  return `<link rel="stylesheet" href="${assets.style}">\n  <script src="${assets.script}" data-index="${assets.index}" defer></script>`;
}
