/**
 * Builds the published documentation into site/ (used by `npm run docs` and the browser tests):
 *
 *   site/index.html              the landing page: the service, the four references, every guide
 *   site/<family>.html           the API reference of each family, rendered by Redocly (Redoc)
 *   site/<guide>.html            every docs/*.md, rendered from Markdown
 *   site/changelog.html, ...     the pages of scripts/docs-pages/index.ts (changelog, contract changes)
 *   site/openapi/<family>.json   the bundled documents, to download
 *   site/images/                 the guides' pictures (docs/images/)
 *   site/assets/                 the style sheet, the favicon and the logos; the shared scripts and
 *                                the style sheet named by their hash (scripts/docs-assets.ts)
 *   site/assets/search*          the site's search: its script, style sheet and index (scripts/docs-search.ts)
 *   site/<file>.br, <file>.gz    Brotli and gzip copies of each text file, for the docs server
 *
 * Every page works without a network: the Redoc script is a local asset (assets/redoc.<hash>.js), Redoc's
 * telemetry is switched off (REDOCLY_TELEMETRY=off sets `disableTelemetry` in the page), the
 * "API docs by Redocly" logo that Redoc loads from Redocly's CDN is served from site/assets, and a
 * Content-Security-Policy limits every page to its own origin, so nothing can leave the machine.
 *
 * The head of a reference page (the policy, the favicon, the title) comes from our own Handlebars
 * template, given to `redocly build-docs --template`; Redocly fills in its styles and the
 * prerendered page (scripts/docs-reference.ts). Two things stay a replacement of text, because they are inside Redoc's
 * prerendered body and script, which no template reaches: the CDN address of the attribution logo
 * (a fixed string, swapped for the local copy) and the prerendered links written as paths instead
 * of the hash routes the page uses (`hashRoutes`). Both fail the build loudly when Redoc changes.
 *
 * The guides are found, not listed: every docs/*.md becomes a page, titled by its first heading.
 * The navigation serves integrators first: their guides lead the side navigation and the landing
 * page; the guides for the service's implementers (IMPLEMENTER_GUIDES) follow under their own
 * heading. A new guide is for integrators unless listed there.
 */
import type { BuildInputs } from './stale.js';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { Marked, type Tokens } from 'marked';
import { hashedName, writeHashedAsset } from './docs-assets.js';
import { precompress } from './docs-compress.js';
import { guideEntries, guideMentions, referenceEntries, searchHead, writeSearch } from './docs-search.js';
import { headingIds, plain } from './docs-text.js';
import { DiagramMissingError, replaceDiagrams } from './docs-diagrams.js';
import { EXTRA_PAGES } from './docs-pages/index.js';
import { withShortCalls } from './samples/short.js';
import { FAMILIES, familyInfo, MOCK_PORTS, type Family } from './families.js';
import { expandWorkflows } from './docs-workflows.js';
import { CSP, DocsBuildError } from './docs-policy.js';
import { localRedocBundle, renderReference } from './docs-reference.js';

const root = resolve(import.meta.dirname, '..');

export interface DocsOptions {
  /** Where to write the site; default site/ of this repository. Replaced as a whole. */
  outDir?: string;
  /** The families to render; default all four. */
  families?: readonly Family[];
  /** Where the guides are; default docs/. */
  docsDir?: string;
  /** Where the bundled documents are; default generated/openapi/. */
  documentsDir?: string;
  /** Called with a line of progress for each page. */
  log?: (line: string) => void;
}

export interface SitePage {
  /** The file under the site, e.g. `sdk.html`. */
  file: string;
  title: string;
  kind: 'home' | 'reference' | 'guide' | 'page';
  family?: Family;
  /** For a guide: its Markdown file name under docs/. */
  source?: string;
}

export interface Guide {
  /** The Markdown file name, e.g. `getting-started.md`. */
  source: string;
  /** The page it becomes, e.g. `getting-started.html`. */
  file: string;
  /** The text of its first heading. */
  title: string;
  /** Its first paragraph as plain text, shortened. */
  summary: string;
  /** Who it is for: the integrators of the service (the default) or its implementers. */
  audience: Audience;
}

export type Audience = 'integrators' | 'implementers';

/** What `npm run docs` reads, and its record in site/ (scripts/stale.ts), so that docs:serve builds a stale site. */
export const SITE_INPUTS: BuildInputs = {
  inputs: ['docs', 'generated/openapi', 'openapi', 'scripts', 'CHANGELOG.md', 'package.json', 'package-lock.json', 'redocly.yaml'],
  record: 'site/.build-inputs',
  made: 'site/index.html',
};

/** The integrators' guides that come first, in this order; any other follows by title. */
const GUIDE_ORDER = [
  'getting-started.md',
  'web-checkout.md',
  'walkthrough.md',
  'authentication.md',
  'flows.md',
  'states.md',
  'webhooks.md',
  'refunds.md',
  'sandbox.md',
  'mock.md',
];

/** The guides for the service's implementers, in this order, under their own heading. */
export const IMPLEMENTER_GUIDES = [
  'contributing.md',
  'architecture.md',
  'contract-kit.md',
  'compatibility.md',
  'code-samples.md',
  'linting.md',
  'e2e.md',
  'testing.md',
  'toolchain.md',
  'decisions.md',
  'code-decisions.md',
];

export const AUDIENCE_HEADINGS: Record<Audience, string> = {
  integrators: 'Guides',
  implementers: "For the service's implementers",
};

/** The integrators' guides linked from the top navigation, with their short labels. */
const FEATURED_GUIDES: [string, string][] = [
  ['getting-started.md', 'Get started'],
  ['web-checkout.md', 'Web checkout'],
];

/** A link to a family's document (`openapi/sdk.yaml`, `../generated/openapi/sdk.json`): its page instead. */
const FAMILY_DOCUMENT_LINK = new RegExp(`^(?:\\.\\./)?(?:generated/)?openapi/(${FAMILIES.join('|')})\\.(?:ya?ml|json)$`);

/** Every docs/*.md, in landing-page order, with its title and summary. */
export function listGuides(docsDir = join(root, 'docs')): Guide[] {
  if (!existsSync(docsDir)) return [];
  const guides = readdirSync(docsDir)
    .filter((name) => name.endsWith('.md') && !name.startsWith('.'))
    .map((source) => {
      const markdown = readFileSync(join(docsDir, source), 'utf8');
      const audience: Audience = IMPLEMENTER_GUIDES.includes(source) ? 'implementers' : 'integrators';
      return { source, file: `${source.slice(0, -3)}.html`, ...describeMarkdown(markdown, source), audience };
    });
  const rank = (g: Guide) => {
    if (g.audience === 'implementers') return 2000 + IMPLEMENTER_GUIDES.indexOf(g.source);
    const first = GUIDE_ORDER.indexOf(g.source);
    return first >= 0 ? first : 500;
  };
  return guides.sort((a, b) => rank(a) - rank(b) || a.title.localeCompare(b.title));
}

/** The title (first heading) and the first paragraph of a Markdown text, as plain text. */
export function describeMarkdown(markdown: string, source: string): { title: string; summary: string } {
  const tokens = new Marked().lexer(markdown);
  const heading = tokens.find((t): t is Tokens.Heading => t.type === 'heading');
  const paragraph = tokens.find((t): t is Tokens.Paragraph => t.type === 'paragraph');
  const title = heading ? plain(heading.text) : basename(source, '.md');
  let summary = paragraph ? plain(paragraph.text).replace(/\s+/g, ' ').trim() : '';
  if (summary.length > 220) summary = `${summary.slice(0, 217).replace(/\s+\S*$/, '')}...`;
  return { title, summary };
}


/** Where the site is built unless told otherwise: site/ at the repository's root. */
export const SITE_DIR = join(root, 'site');

/** Builds the whole site and returns its pages (landing page first). */
export async function buildDocs(options: DocsOptions = {}): Promise<SitePage[]> {
  const outDir = resolve(options.outDir ?? SITE_DIR);
  const families = options.families ?? FAMILIES;
  const docsDir = options.docsDir ?? join(root, 'docs');
  const documentsDir = options.documentsDir ?? join(root, 'generated', 'openapi');
  const log = options.log ?? (() => {});

  const documents = new Map<Family, Record<string, unknown>>();
  for (const family of families) {
    const path = join(documentsDir, `${family}.json`);
    if (!existsSync(path)) {
      throw new DocsBuildError(`The bundled document of ${family} (${relative(process.cwd(), path)}) is missing; run \`npm run generate\` first.`);
    }
    try {
      documents.set(family, JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>);
    } catch (error) {
      throw new DocsBuildError(`${relative(process.cwd(), path)} is not valid JSON (${(error as Error).message}); run \`npm run generate\`.`);
    }
  }
  const guides = listGuides(docsDir);

  // Build in a temporary folder, then replace the site, so that a failed build leaves the old one.
  const work = mkdtempSync(join(tmpdir(), 'paylater-site-'));
  try {
    mkdirSync(join(work, 'assets'));
    mkdirSync(join(work, 'openapi'));
    writeAssets(join(work, 'assets'));
    // The guides' pictures (the checkout's screenshots), at the same relative path as beside the Markdown.
    if (existsSync(join(docsDir, 'images'))) cpSync(join(docsDir, 'images'), join(work, 'images'), { recursive: true });

    const pages: SitePage[] = [{ file: 'index.html', title: 'Pay-later API documentation', kind: 'home' }];
    // Redoc's script, shared by the four references and cached for a year under its hashed name.
    const redocBundle = documents.size > 0 ? writeHashedAsset(work, 'redoc.js', localRedocBundle()) : '';
    const rendered = await mapLimit([...documents], 2, async ([family, document]) => {
      // The rendered copy draws the Mermaid diagrams (scripts/docs-diagrams.ts) and shows each
      // operation's short call first (scripts/samples/short.ts); the download keeps the bundle as it is.
      const html = await renderReference(family, withShortCalls(family, withDrawings(document, join(work, 'assets'))), redocBundle);
      writeFileSync(join(work, 'openapi', `${family}.json`), `${JSON.stringify(document, null, 2)}\n`);
      return { family, document, html };
    });
    const guideFiles = new Set(guides.map((g) => g.source));
    // A guide's Mermaid diagrams (the flows' sequences, the states) are shown as their drawings too.
    const markdowns = new Map(
      guides.map((g) => [g.source, withDrawings(expandWorkflows(readFileSync(join(docsDir, g.source), 'utf8'), documentsDir), join(work, 'assets'))]),
    );

    // One search over the guides and the references (scripts/docs-search.ts), in the head of every page.
    const references = rendered.flatMap(({ family, document, html }) => referenceEntries(family, document, html));
    const codes = new Set(references.filter((entry) => entry.kind === 'error').map((entry) => entry.title));
    const search = await writeSearch(work, [
      ...guides.flatMap((g) => guideEntries(g, markdowns.get(g.source) ?? '')),
      ...references,
      // The guides' mentions of the references' error codes; the decision logs' reasoning is left out.
      ...guides.filter((g) => !g.source.endsWith('decisions.md')).flatMap((g) => guideMentions(g, markdowns.get(g.source) ?? '', codes)),
    ]);
    const withSearch = (html: string) => {
      if (!html.includes('</head>')) throw new DocsBuildError('a page has no </head> for the search box.');
      return html.replace('</head>', `  ${searchHead(search)}\n</head>`);
    };

    for (const { family, document, html } of rendered) {
      writeFileSync(join(work, `${family}.html`), withSearch(html));
      const title = String((document.info as Record<string, unknown> | undefined)?.title ?? family);
      log(`${family}.html  ${title}`);
      pages.push({ file: `${family}.html`, title, kind: 'reference', family });
    }

    for (const guide of guides) {
      writeFileSync(join(work, guide.file), withSearch(renderGuide(guide, markdowns.get(guide.source) ?? '', guides, families, guideFiles)));
      log(`${guide.file}  ${guide.title}`);
      pages.push({ file: guide.file, title: guide.title, kind: 'guide', source: guide.source });
    }

    // The registry's pages (scripts/docs-pages/index.ts): the changelog, the contract changes, ...
    const context = { root, documentsDir, csp: CSP, markdown: (text: string) => renderMarkdown(text, guideFiles), escapeHtml };
    for (const extra of EXTRA_PAGES) {
      extra.write?.(work, context);
      const main = extra.render(context);
      writeFileSync(join(work, extra.file), withSearch(extra.fullPage ? main : layout({ title: extra.title, current: extra.file, guides, families, main })));
      log(`${extra.file}  ${extra.title}`);
      pages.push({ file: extra.file, title: extra.title, kind: 'page' });
    }

    writeFileSync(join(work, 'index.html'), withSearch(renderHome(documents, guides, families)));
    log('index.html  the landing page');

    await precompress(work);

    rmSync(outDir, { recursive: true, force: true });
    mkdirSync(dirname(outDir), { recursive: true });
    cpSync(work, outDir, { recursive: true });
    chmodSync(outDir, 0o755); // the temporary folder was private
    return pages;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function mapLimit<T, R>(items: T[], limit: number, worker: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await worker(items[index] as T);
    }
  });
  await Promise.all(runners);
  return results;
}

// ---------------------------------------------------------------------------------------------
// API references

/** The document or guide with its Mermaid blocks as images of their committed drawings (scripts/docs-diagrams.ts). */
function withDrawings<T extends Record<string, unknown> | string>(document: T, assetsDir: string): T {
  try {
    return replaceDiagrams(document, assetsDir);
  } catch (error) {
    if (error instanceof DiagramMissingError) throw new DocsBuildError(error.message);
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// Guides and the landing page

/** Markdown to HTML as the guides have it: anchored headings, links between guides to their pages. */
function renderMarkdown(markdown: string, guideFiles: Set<string>): string {
  const marked = new Marked({ gfm: true });
  const headingId = headingIds();
  marked.use({
    renderer: {
      heading({ tokens, depth, text }) {
        const id = headingId(text);
        return `<h${depth} id="${id}">${this.parser.parseInline(tokens)}<a class="anchor" href="#${id}" aria-label="Link to this section">#</a></h${depth}>\n`;
      },
      link({ href, title, tokens }) {
        const target = rewriteLink(href, guideFiles);
        const titleAttribute = title ? ` title="${escapeHtml(title)}"` : '';
        return `<a href="${escapeHtml(target)}"${titleAttribute}>${this.parser.parseInline(tokens)}</a>`;
      },
    },
  });
  return marked.parse(markdown, { async: false });
}

function renderGuide(guide: Guide, markdown: string, guides: Guide[], families: readonly Family[], guideFiles: Set<string>): string {
  const body = renderMarkdown(markdown, guideFiles);
  return layout({
    title: guide.title,
    current: guide.file,
    guides,
    families,
    // An implementers' guide names its Markdown source; an integrator has no use for the repository's paths.
    main: `<article class="guide">\n${body}\n${
      guide.audience === 'implementers' ? `<p class="source">Source: <code>docs/${escapeHtml(guide.source)}</code></p>\n` : ''
    }</article>`,
  });
}

/** Links between guides point at their pages; a link into the repository outside docs/ is left as it is. */
function rewriteLink(href: string, guideFiles: Set<string>): string {
  const match = href.match(/^(?:\.\/)?(?:docs\/)?([^/?#]+\.md)(#.*)?$/);
  if (match && guideFiles.has(match[1] as string)) return `${(match[1] as string).slice(0, -3)}.html${match[2] ?? ''}`;
  const family = href.match(FAMILY_DOCUMENT_LINK);
  if (family) return `${family[1]}.html`;
  return href;
}


function renderHome(documents: Map<Family, Record<string, unknown>>, guides: Guide[], families: readonly Family[]): string {
  const cards = families
    .map((family) => {
      const document = documents.get(family) ?? {};
      const info = (document.info ?? {}) as Record<string, unknown>;
      const operations = countOperations(document);
      return `      <li class="card">
        <h3><a href="${family}.html">${escapeHtml(String(info.title ?? family))}</a></h3>
        <p class="label">${escapeHtml(familyInfo(family).label)} · version ${escapeHtml(String(info.version ?? ''))} · ${operations.operations} operations${operations.webhooks ? `, ${operations.webhooks} webhook${operations.webhooks > 1 ? 's' : ''}` : ''}</p>
        <p>${escapeHtml(String(info.summary ?? ''))}</p>
        <p class="audience">${escapeHtml(familyInfo(family).audience)}</p>
        <p class="links"><a href="${family}.html">Reference</a> · <a href="openapi/${family}.json" download>OpenAPI document</a> · mock on port <code>${MOCK_PORTS[family]}</code></p>
      </li>`;
    })
    .join('\n');
  const guideItems = (audience: Audience) =>
    guides
      .filter((g) => g.audience === audience)
      .map(
        (g) => `      <li><a href="${escapeHtml(g.file)}">${escapeHtml(g.title)}</a>${g.summary ? `<br><span>${escapeHtml(g.summary)}</span>` : ''}</li>`,
      )
      .join('\n');
  const main = `<section class="intro">
    <h1>Pay-later API documentation</h1>
    <p>The pay-later service lets shoppers buy now and pay later at a merchant's checkout. Payment
    gateways offer it to their merchants through the <strong>gateway integration</strong>; merchants
    can also integrate directly, on their website (the <strong>web flow</strong>) or in their mobile
    app (the <strong>SDK flow</strong>), and use the <strong>extras</strong> to read a user's credit.</p>
    <p>This site is the reference contract of the service: four OpenAPI 3.1 documents, rendered
    below, with guides to authentication, signatures, flows and states. Develop against the Prism
    mock (<code>npm run mock</code>) or the stateful sandbox (<code>npm start</code>). All amounts are
    integers in paise (₹1 = 100 paise).</p>
    <p>${guides.some((g) => g.source === 'getting-started.md') ? '<a class="button" href="getting-started.html">Get started in five minutes</a>' : ''}
    ${guides.some((g) => g.source === 'web-checkout.md') ? '<a class="button secondary" href="web-checkout.html">Add pay-later to your checkout</a>' : ''}</p>
  </section>
  <section>
    <h2 id="guides">${escapeHtml(AUDIENCE_HEADINGS.integrators)}</h2>
    <ul class="guides">
${guideItems('integrators')}
    </ul>
  </section>
  <section>
    <h2 id="references">API references</h2>
    <ul class="cards">
${cards}
    </ul>
  </section>
  <section class="implementers">
    <h2 id="implementers">${escapeHtml(AUDIENCE_HEADINGS.implementers)}</h2>
    <p>How the contract is made and kept: checking a server against it, the tests behind the
    documentation, and the record of every decision the interface description left open.</p>
    <ul class="guides">
${guideItems('implementers')}
    </ul>
  </section>`;
  return layout({ title: 'Pay-later API documentation', current: 'index.html', guides, families, main });
}

function countOperations(document: Record<string, unknown>): { operations: number; webhooks: number } {
  const count = (items: unknown) =>
    Object.values((items ?? {}) as Record<string, Record<string, unknown>>).reduce(
      (sum, item) => sum + Object.keys(item).filter((k) => ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'].includes(k)).length,
      0,
    );
  return { operations: count(document.paths), webhooks: count(document.webhooks) };
}

function layout(page: {
  title: string;
  current: string;
  guides: Guide[];
  families: readonly Family[];
  main: string;
}): string {
  const current = (file: string) => (file === page.current ? ' aria-current="page"' : '');
  const featured = FEATURED_GUIDES.filter(([source]) => page.guides.some((g) => g.source === source)).map(
    ([source, label]) => `<a href="${source.slice(0, -3)}.html"${current(`${source.slice(0, -3)}.html`)}>${escapeHtml(label)}</a>`,
  );
  const nav = [
    `<a href="index.html"${current('index.html')}>Home</a>`,
    ...featured,
    ...page.families.map((f) => `<a href="${f}.html">${escapeHtml(familyInfo(f).label)}</a>`),
    ...EXTRA_PAGES.map((extra) => `<a href="${extra.file}"${current(extra.file)}>${escapeHtml(extra.label)}</a>`),
  ].join('\n        ');
  const guideNav = (['integrators', 'implementers'] as const)
    .map((audience) => {
      const items = page.guides
        .filter((g) => g.audience === audience)
        .map((g) => `<li><a href="${escapeHtml(g.file)}"${current(g.file)}>${escapeHtml(g.title)}</a></li>`);
      if (items.length === 0) return '';
      return `<h2 id="nav-${audience}">${escapeHtml(AUDIENCE_HEADINGS[audience])}</h2>
      <ul aria-labelledby="nav-${audience}">
          ${items.join('\n          ')}
      </ul>`;
    })
    .join('\n      ');
  const fullTitle = page.current === 'index.html' ? page.title : `${page.title} | Pay-later API documentation`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta http-equiv="Content-Security-Policy" content="${CSP}">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${escapeHtml(fullTitle)}</title>
  <link rel="icon" href="assets/favicon.svg" type="image/svg+xml">
  <link rel="stylesheet" href="${siteCssLink()}">
</head>
<body>
  <header class="top">
    <a class="brand" href="index.html"><img src="assets/logo.svg" alt="" width="28" height="28"> Pay-later API</a>
    <nav aria-label="API references">
        ${nav}
    </nav>
  </header>
  <div class="page">
    <nav class="side" aria-label="Guides">
      ${guideNav}
    </nav>
    <main>
  ${page.main}
    </main>
  </div>
  <footer>Generated by <code>npm run docs</code> from <code>openapi/</code> and <code>docs/</code>. Works offline.</footer>
</body>
</html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

// ---------------------------------------------------------------------------------------------
// Assets

/** The style sheet's link, by its hashed name (scripts/docs-assets.ts): browsers keep it for a year. */
function siteCssLink(): string {
  return `assets/${hashedName('site.css', SITE_CSS)}`;
}

function writeAssets(dir: string): void {
  writeHashedAsset(dirname(dir), 'site.css', SITE_CSS);
  writeFileSync(join(dir, 'logo.svg'), LOGO_SVG);
  writeFileSync(join(dir, 'favicon.svg'), LOGO_SVG);
  // Local stand-ins for the attribution logo Redoc loads from cdn.redoc.ly.
  writeFileSync(join(dir, 'redocly-logo-full.svg'), REDOCLY_WORDMARK);
  writeFileSync(join(dir, 'redocly-logo.svg'), REDOCLY_MARK);
}

const LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64" role="img" aria-label="Pay-later">
  <rect width="64" height="64" rx="14" fill="#0b5cad"/>
  <path d="M18 44V20h14a9 9 0 0 1 0 18h-7" fill="none" stroke="#fff" stroke-width="6" stroke-linecap="round" stroke-linejoin="round"/>
  <circle cx="44" cy="44" r="5" fill="#7fd1ff"/>
</svg>
`;

const REDOCLY_WORDMARK = `<svg xmlns="http://www.w3.org/2000/svg" width="60" height="16" viewBox="0 0 60 16" role="img" aria-label="Redocly">
  <text x="0" y="12.5" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif" font-size="13" font-weight="600" fill="#0044d4">Redocly</text>
</svg>
`;

const REDOCLY_MARK = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16" role="img" aria-label="Redocly">
  <rect width="16" height="16" rx="4" fill="#0044d4"/>
  <text x="4" y="12.5" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif" font-size="12" font-weight="700" fill="#fff">R</text>
</svg>
`;

/**
 * The widest a guide's column gets (CSS pixels, at a window of 1200 px or more): a diagram drawn
 * wider than this scrolls sideways, so the guides' diagrams are drawn narrower (a test checks).
 */
export const GUIDE_COLUMN_PX = 880;

const SITE_CSS = `:root {
  --fg: #1d2330; --muted: #5a6478; --line: #dde2ea; --bg: #ffffff; --soft: #f5f7fa;
  --accent: #0b5cad; --code-bg: #f2f4f8;
  font-family: system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif;
  color: var(--fg); background: var(--bg); line-height: 1.55;
}
* { box-sizing: border-box; }
body { margin: 0; }
a { color: var(--accent); }
code, pre { font-family: ui-monospace, 'SFMono-Regular', Menlo, Consolas, 'Liberation Mono', monospace; font-size: 0.92em; }
code { background: var(--code-bg); padding: 0.1em 0.3em; border-radius: 4px; }
p > code, li > code { overflow-wrap: anywhere; }
pre { background: var(--code-bg); padding: 0.9em 1em; border-radius: 8px; overflow-x: auto; line-height: 1.45; }
pre code { background: none; padding: 0; }
header.top { display: flex; flex-wrap: wrap; align-items: center; gap: 0.5em 1.5em; padding: 0.8em 1.5em; border-bottom: 1px solid var(--line); }
header.top .brand { display: flex; align-items: center; gap: 0.5em; font-weight: 700; color: var(--fg); text-decoration: none; font-size: 1.1em; }
header.top nav { display: flex; flex-wrap: wrap; gap: 0.3em 1.2em; }
header.top nav a { text-decoration: none; }
header.top nav a[aria-current] { font-weight: 600; color: var(--fg); }
.page { display: flex; gap: 2.5em; max-width: 1200px; margin: 0 auto; padding: 1.5em; }
nav.side { flex: 0 0 220px; font-size: 0.95em; }
nav.side h2 { font-size: 0.8em; text-transform: uppercase; letter-spacing: 0.06em; color: var(--muted); margin: 0.4em 0; border: 0; padding: 0; }
nav.side h2 + ul { margin-bottom: 1.6em; }
nav.side ul { list-style: none; padding: 0; margin: 0; }
nav.side li { margin: 0.35em 0; }
nav.side a { text-decoration: none; }
nav.side a[aria-current] { font-weight: 600; color: var(--fg); }
main { flex: 1 1 auto; min-width: 0; max-width: ${GUIDE_COLUMN_PX}px; }
h1, h2, h3, h4 { line-height: 1.25; }
h1 { font-size: 2em; margin-top: 0.2em; }
h2 { margin-top: 1.8em; padding-bottom: 0.2em; border-bottom: 1px solid var(--line); }
h1 .anchor, h2 .anchor, h3 .anchor, h4 .anchor { margin-left: 0.4em; text-decoration: none; color: var(--line); font-weight: 400; }
h1:hover .anchor, h2:hover .anchor, h3:hover .anchor, h4:hover .anchor { color: var(--muted); }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid var(--line); padding: 0.4em 0.7em; text-align: left; vertical-align: top; overflow-wrap: anywhere; }
td code, th code { overflow-wrap: anywhere; }
th { background: var(--soft); }
blockquote { margin: 1em 0; padding: 0.2em 1em; border-left: 4px solid var(--line); color: var(--muted); }
.source { color: var(--muted); font-size: 0.85em; margin-top: 3em; }
.intro p { font-size: 1.08em; max-width: 46em; }
.button + .button { margin-left: 0.6em; }
.button.secondary { background: var(--soft); color: var(--accent); border: 1px solid var(--accent); }
.guide img { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 6px; vertical-align: top; }
/* A diagram at its drawn size (legible labels), scrolled sideways when wider than the column, never shrunk. */
.guide a:has(> img[src^="assets/diagrams/"]) { display: block; overflow-x: auto; }
.guide img[src^="assets/diagrams/"] { max-width: none; width: auto; border: 0; }
.guide p:has(> img + img) { display: flex; gap: 1em; }
.guide p:has(> img + img) > img { flex: 1 1 0; min-width: 0; }
.button { display: inline-block; background: var(--accent); color: #fff; padding: 0.55em 1.1em; border-radius: 6px; text-decoration: none; font-weight: 600; }
ul.cards { list-style: none; padding: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(320px, 1fr)); gap: 1em; }
.card { border: 1px solid var(--line); border-radius: 10px; padding: 0.4em 1.2em 0.8em; background: var(--soft); }
.card h3 { margin: 0.6em 0 0.2em; }
.card .label { color: var(--muted); font-size: 0.88em; margin: 0; }
.card .audience { font-size: 0.95em; }
.card .links { font-size: 0.92em; }
ul.guides { padding-left: 1.2em; }
ul.guides li { margin: 0.6em 0; }
ul.guides span { color: var(--muted); font-size: 0.93em; }
td[class^="change-"] { white-space: nowrap; overflow-wrap: normal; }
td.change-added { color: #0a7a33; font-weight: 600; }
td.change-removed { color: #b42318; font-weight: 600; }
td.change-changed { color: #9a6700; font-weight: 600; }
table.contract-changes td:last-child { font-size: 0.9em; }
footer { border-top: 1px solid var(--line); color: var(--muted); font-size: 0.85em; padding: 1em 1.5em; text-align: center; }
@media (max-width: 760px) { .page { flex-direction: column; } nav.side { flex-basis: auto; } table { display: block; overflow-x: auto; } }
`;
