/**
 * What each page of the built site costs on the wire: the bytes the docs server sends to a browser
 * that accepts Brotli (the `.br` copy written by scripts/docs-compress.ts, or the file itself when
 * it has none), for the page alone and for a first visit (the page and every script, style sheet,
 * icon and picture of the site it loads, each counted once). A later page of the site costs less
 * than its first visit: the shared assets are named by their hash and kept by the browser.
 * `npm run docs` prints the figures; the browser tests hold the references under a bound.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';

export interface PageWeight {
  /** The page's file under the site, e.g. `gateway.html`. */
  file: string;
  /** The page's own size, uncompressed. */
  raw: number;
  /** What the page alone costs on the wire. */
  wire: number;
  /** The page and every local asset it loads, each once. */
  firstVisit: number;
  /** Those assets, as the page names them (`assets/redoc.<hash>.js`, ...). */
  assets: string[];
}

/** The local files a page loads: scripts, style sheets, preloads, icons, pictures, module imports. */
const LOADS = [
  /<script\b[^>]*\bsrc="([^"]+)"/g,
  /<link\b[^>]*\bhref="([^"]+)"/g,
  /<img\b[^>]*\bsrc="([^"]+)"/g,
  /\bimport\s*(?:[^"';]*\bfrom\s*)?["'](\.{0,2}\/?assets\/[^"']+)["']/g,
];

/** Bytes on the wire for a file of the site: its Brotli copy when it has one. */
function wireBytes(file: string): number {
  return existsSync(`${file}.br`) ? statSync(`${file}.br`).size : statSync(file).size;
}

/** The local assets a page's HTML loads, normalized (`./assets/x` -> `assets/x`), each once. */
export function pageAssets(html: string): string[] {
  const found = new Set<string>();
  for (const pattern of LOADS) {
    for (const match of html.matchAll(pattern)) {
      const target = (match[1] as string).split(/[?#]/)[0] as string;
      if (/^(?:[a-z]+:|\/\/)/i.test(target) || target === '') continue;
      found.add(posix.normalize(target).replace(/^\.\//, ''));
    }
  }
  return [...found].sort();
}

/** The weight of every top-level page of a built site, largest first. */
export function measureSite(dir: string): PageWeight[] {
  const pages = readdirSync(dir).filter((name) => name.endsWith('.html'));
  return pages
    .map((file) => {
      const path = join(dir, file);
      const assets = pageAssets(readFileSync(path, 'utf8')).filter((asset) => existsSync(join(dir, asset)));
      const wire = wireBytes(path);
      const firstVisit = assets.reduce((sum, asset) => sum + wireBytes(join(dir, asset)), wire);
      return { file, raw: statSync(path).size, wire, firstVisit, assets };
    })
    .sort((a, b) => b.wire - a.wire || a.file.localeCompare(b.file));
}

/** `651.4 KB`: kilobytes of 1000 bytes, as network tools show them. */
export function kilobytes(bytes: number): string {
  return `${(bytes / 1000).toFixed(1)} KB`;
}
