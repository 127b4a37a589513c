/**
 * The Mermaid diagrams of the documents' descriptions (the "Transaction flow" sequence diagrams in
 * openapi/descriptions/*.md) and of the guides (docs/*.md: the flows' sequences, the states'
 * diagrams) as drawings in the reference and guide pages.
 *
 * Mermaid lays out text with the browser's font metrics, so a diagram is drawn by Mermaid itself
 * (the `mermaid` package's bundled script) in headless Chromium, by `npm run docs:diagrams`, and
 * the SVG is committed in one folder, openapi/descriptions/diagrams/<hash>.svg, named by the
 * SHA-256 of the diagram's source. `npm run docs` then needs no browser: it swaps each ```mermaid
 * block of the rendered copy of a document or guide for an image of its SVG (site/assets/diagrams/), and
 * stops with a message naming the command when a block has no drawing yet (its source changed).
 * The pure-JavaScript renderers tried (beautiful-mermaid 1.1.3) drew the long message labels of a
 * sequence diagram outside the picture; a stale drawing cannot go unnoticed, since its name is the
 * hash of its source.
 *
 *   npm run docs:diagrams    draw what is missing, remove drawings no block uses
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
/** Where the Markdown descriptions of the documents are. */
export const DESCRIPTIONS_DIR = join(root, 'openapi', 'descriptions');
/** Where the guides are. */
export const GUIDES_DIR = join(root, 'docs');
/** Where the drawings are committed. */
export const DIAGRAMS_DIR = join(DESCRIPTIONS_DIR, 'diagrams');

const BLOCK = /```mermaid\n([\s\S]*?)```/g;

export interface Diagram {
  /** The Mermaid source, as in the block. */
  source: string;
  /** The first 16 hex digits of its SHA-256: the drawing's file name without `.svg`. */
  hash: string;
}

/** A diagram has no drawing; the message says how to make it. */
export class DiagramMissingError extends Error {
  override readonly name = 'DiagramMissingError';
}

export function diagramHash(source: string): string {
  return createHash('sha256').update(source.trim()).digest('hex').slice(0, 16);
}

/** Every ```mermaid block of a Markdown text. */
export function findDiagrams(markdown: string): Diagram[] {
  return [...markdown.matchAll(BLOCK)].map((match) => ({ source: match[1] as string, hash: diagramHash(match[1] as string) }));
}

/** Every diagram of openapi/descriptions/*.md and docs/*.md, each once. */
export function listDiagrams(dirs: readonly string[] = [DESCRIPTIONS_DIR, GUIDES_DIR]): Diagram[] {
  const seen = new Map<string, Diagram>();
  for (const dir of dirs) {
    for (const name of readdirSync(dir).filter((n) => n.endsWith('.md')).sort()) {
      for (const diagram of findDiagrams(readFileSync(join(dir, name), 'utf8'))) seen.set(diagram.hash, diagram);
    }
  }
  return [...seen.values()];
}

/** What a diagram draws, for its image's text: a sequence or a state diagram. */
function diagramKind(source: string): string {
  return /^\s*stateDiagram/.test(source) ? 'state diagram' : 'sequence diagram';
}

/** The committed drawing of a diagram source; throws {@link DiagramMissingError} when there is none. */
export function diagramSvg(source: string, dir = DIAGRAMS_DIR): string {
  const file = join(dir, `${diagramHash(source)}.svg`);
  if (!existsSync(file)) {
    throw new DiagramMissingError(
      `The Mermaid diagram that starts "${source.trim().split('\n').slice(0, 2).join(' / ')}" has no drawing ` +
        `(${relative(process.cwd(), file)}); run \`npm run docs:diagrams\` (needs Chromium: \`bash .ci/e2e-setup.sh\`) and commit it.`,
    );
  }
  return readFileSync(file, 'utf8');
}

/**
 * Replaces, in every string of a document (descriptions), each ```mermaid block by a Markdown
 * image of its drawing, written to `assetsDir/diagrams/<hash>.svg` (`assets/diagrams/...` in the
 * page), linked to the drawing. The image's text names the heading above the block.
 */
export function replaceDiagrams<T>(value: T, assetsDir: string, dir = DIAGRAMS_DIR): T {
  if (typeof value === 'string') {
    if (!value.includes('```mermaid')) return value;
    return value.replace(BLOCK, (_block, source: string, offset: number, text: string) => {
      const hash = diagramHash(source);
      mkdirSync(join(assetsDir, 'diagrams'), { recursive: true });
      writeFileSync(join(assetsDir, 'diagrams', `${hash}.svg`), diagramSvg(source, dir));
      const heading = [...text.slice(0, offset).matchAll(/^#+\s+(.+)$/gm)].at(-1)?.[1]?.trim() ?? 'Flow';
      // Linked to itself: a click opens the drawing at its full size.
      return `[![${heading.replace(/[[\]]/g, '')}: ${diagramKind(source)}](assets/diagrams/${hash}.svg)](assets/diagrams/${hash}.svg)`;
    }) as T;
  }
  if (Array.isArray(value)) return value.map((item) => replaceDiagrams(item, assetsDir, dir)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, replaceDiagrams(item, assetsDir, dir)])) as T;
  }
  return value;
}

/** The Mermaid settings of every drawing: text labels (no HTML inside the SVG), the site's font. */
const MERMAID_CONFIG = {
  startOnLoad: false,
  securityLevel: 'strict',
  theme: 'neutral',
  fontFamily: "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif",
  htmlLabels: false,
  sequence: { useMaxWidth: false, mirrorActors: false, wrap: false },
  state: { useMaxWidth: false },
};

/** Draws every diagram that has no drawing in headless Chromium; removes drawings no block uses. */
export async function drawDiagrams(options: { executablePath?: string; log?: (line: string) => void } = {}): Promise<{ drawn: string[]; removed: string[] }> {
  const log = options.log ?? (() => {});
  const diagrams = listDiagrams();
  mkdirSync(DIAGRAMS_DIR, { recursive: true });
  const wanted = new Set(diagrams.map((d) => `${d.hash}.svg`));
  const removed = readdirSync(DIAGRAMS_DIR).filter((name) => name.endsWith('.svg') && !wanted.has(name));
  for (const name of removed) rmSync(join(DIAGRAMS_DIR, name));
  const missing = diagrams.filter((d) => !existsSync(join(DIAGRAMS_DIR, `${d.hash}.svg`)));
  if (missing.length === 0) return { drawn: [], removed };

  const executablePath = options.executablePath ?? process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (!existsSync(executablePath)) {
    throw new DiagramMissingError(`Chromium is not installed at ${executablePath}; run \`bash .ci/e2e-setup.sh\` (or set CHROMIUM_PATH).`);
  }
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  try {
    const page = await browser.newPage();
    // Nothing leaves the machine: every request but the page's own is refused.
    await page.route(/^https?:/, (route) => route.abort());
    await page.setContent('<!DOCTYPE html><html><body></body></html>');
    await page.addScriptTag({ path: createRequire(import.meta.url).resolve('mermaid/dist/mermaid.min.js') });
    const drawn: string[] = [];
    for (const diagram of missing) {
      const svg = await page.evaluate(
        async ({ id, source, config }) => {
          const mermaid = (globalThis as unknown as { mermaid: { initialize(c: unknown): void; render(id: string, text: string): Promise<{ svg: string }> } }).mermaid;
          mermaid.initialize(config);
          return (await mermaid.render(id, source)).svg;
        },
        { id: `d${diagram.hash}`, source: diagram.source, config: MERMAID_CONFIG },
      );
      if (/\b(?:href|src)="https?:|@import/.test(svg)) throw new Error(`the drawing of diagram ${diagram.hash} refers to a remote resource`);
      writeFileSync(join(DIAGRAMS_DIR, `${diagram.hash}.svg`), `${svg}\n`);
      drawn.push(diagram.hash);
      log(`openapi/descriptions/diagrams/${diagram.hash}.svg`);
    }
    return { drawn, removed };
  } finally {
    await browser.close();
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  drawDiagrams({ log: (line) => console.log(`  drew ${line}`) }).then(
    ({ drawn, removed }) => {
      for (const name of removed) console.log(`  removed openapi/descriptions/diagrams/${name} (no block uses it)`);
      console.log(drawn.length === 0 && removed.length === 0 ? 'Every diagram has its drawing.' : `Drew ${drawn.length}, removed ${removed.length}.`);
    },
    (error: unknown) => {
      console.error(`docs:diagrams: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    },
  );
}
