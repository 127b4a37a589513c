/**
 * The published documentation in a real browser (Chromium, driven by playwright-core): the site is
 * built with the docs function, served locally, and every page (the landing page, each guide, each
 * family's reference) must load without console errors or failed requests, and without a single
 * request to any host other than the local server. Each reference must show every operation and
 * webhook of its bundled document. Full-page screenshots go to artifacts/screenshots/.
 *
 * The navigation serves integrators first: their guides lead the side navigation and the landing
 * page, the guides for the service's implementers (the contract kit, the browser tests, the
 * decision record, ...) come under their own heading, and no integrator's guide shows a path into
 * the repository's sources. At 1440 px no table is cut off, in a guide or in a reference.
 *
 * One search box on every page searches the guides and the four references: an error code typed
 * on a guide leads to the reference's Errors table. Each reference's first visit stays under 300 KB
 * on the wire, Redoc's script loading on the reader's first use (scripts/docs-weight.ts measures the
 * files, a CDP session what Chromium fetches).
 *
 * One browser serves every test, each in a context of its own, and every test of the file runs
 * concurrently (`describe.concurrent`), as many tabs at a time as the configuration's
 * `maxConcurrency`: the tests wait on the browser far more than they use the cores (run one after
 * the other, the file took 3.5 minutes for 1.5 minutes of CPU).
 *
 * Needs Chromium at /usr/bin/chromium (or CHROMIUM_PATH): `bash .ci/e2e-setup.sh`. See docs/e2e.md.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { shotsDir, siteDir, startDocsSite, type DocsSite } from './browser.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIENCE_HEADINGS, IMPLEMENTER_GUIDES, listGuides, type SitePage } from '../../scripts/docs-site.js';
import { FAMILIES, type Family } from '../../scripts/families.js';
import { serveDocs } from '../../scripts/docs-server.js';
import { measureSite } from '../../scripts/docs-weight.js';
import { createSandbox } from '../../src/sandbox/server.js';

const root = resolve(import.meta.dirname, '..', '..');
const guides = listGuides(join(root, 'docs'));
/** The decision logs' pages. */
const DECISION_LOGS = new Set(['decisions.html', 'code-decisions.html']);

let site: DocsSite | undefined;
let built: SitePage[] = [];

beforeAll(async () => {
  site = await startDocsSite();
  built = site.pages;
});

afterAll(async () => {
  await site?.close();
});

/** A page opened in a fresh context, with everything that went wrong while it was open. */
interface Visit {
  page: Page;
  context: BrowserContext;
  /** Console errors, page errors, failed requests, HTTP errors. */
  problems: string[];
  /** Requests to anything but the local server (data: and the page's own blob: URLs are local). */
  foreign: string[];
  requests: string[];
}

async function visit(path: string): Promise<Visit> {
  if (!site) throw new Error('the browser or the server did not start');
  const { browser, server } = site;
  const origin = server.url;
  const isLocal = (url: string) =>
    url.startsWith(`${origin}/`) || url.startsWith('data:') || url.startsWith(`blob:${origin}/`) || url === 'about:blank';
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  const result: Visit = { page, context, problems: [], foreign: [], requests: [] };
  page.on('console', (message) => {
    if (message.type() === 'error') result.problems.push(`console error: ${message.text()}`);
  });
  page.on('pageerror', (error) => result.problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => result.problems.push(`failed request: ${request.url()} (${request.failure()?.errorText})`));
  page.on('response', (response) => {
    if (response.status() >= 400) result.problems.push(`HTTP ${response.status()} for ${response.url()}`);
  });
  page.on('request', (request) => {
    result.requests.push(request.url());
    if (!isLocal(request.url())) result.foreign.push(request.url());
  });
  await page.goto(`${origin}/${path}`, { waitUntil: 'load' });
  return result;
}

/** Lets late requests (images, Redoc's lazy parts) happen before the checks. */
async function settle(page: Page): Promise<void> {
  await page.waitForLoadState('networkidle', { timeout: 15_000 }).catch(() => undefined);
  await page.waitForTimeout(500);
}

function expectClean(v: Visit): void {
  expect(v.foreign, 'requests to hosts other than the local server').toEqual([]);
  expect(v.problems, 'console errors and failed requests').toEqual([]);
}

/** The tallest part of a page a screenshot keeps, in CSS pixels: five screens at 1440 x 900. */
const SCREENSHOT_MAX_HEIGHT = 4_500;

/**
 * A screenshot of the page from its top, whole up to {@link SCREENSHOT_MAX_HEIGHT} (an artifact for
 * review, not a check). The decision logs and the sandbox guide run to tens of thousands of pixels:
 * captured whole, they were PNGs of 9 to 21 MB whose encoding took most of the browser tests' CPU,
 * and nobody reviews a guide's rendering past its first screens. Chromium's capture of a long page
 * takes seconds, several times that on a loaded machine with tabs open beside it: the limit is most
 * of the test's own, not Playwright's 30 s default.
 */
async function screenshot(page: Page, name: string): Promise<void> {
  const { width, height } = await page.evaluate(() => ({ width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight }));
  await page.screenshot({
    path: join(shotsDir, `${name}.png`),
    fullPage: true,
    clip: { x: 0, y: 0, width, height: Math.min(height, SCREENSHOT_MAX_HEIGHT) },
    timeout: 90_000,
  });
}

interface Operation {
  label: string;
  operationId: string;
  summary?: string;
}

/** Every operation and webhook of a family's bundled document. */
function operationsOf(family: Family): Operation[] {
  const document = JSON.parse(readFileSync(join(root, 'generated', 'openapi', `${family}.json`), 'utf8')) as {
    paths?: Record<string, Record<string, { operationId?: string; summary?: string }>>;
    webhooks?: Record<string, Record<string, { operationId?: string; summary?: string }>>;
  };
  const methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];
  const list: Operation[] = [];
  for (const [kind, items] of [['path', document.paths], ['webhook', document.webhooks]] as const) {
    for (const [name, item] of Object.entries(items ?? {})) {
      for (const [method, op] of Object.entries(item)) {
        if (!methods.includes(method)) continue;
        list.push({
          label: `${kind === 'webhook' ? 'webhook ' : ''}${method.toUpperCase()} ${name}`,
          operationId: op.operationId ?? '',
          ...(op.summary ? { summary: op.summary } : {}),
        });
      }
    }
  }
  return list;
}

/** The text of Redoc's content pane (without the sidebar). */
function contentText(page: Page): Promise<string> {
  return page.evaluate(() => {
    const redoc = document.querySelector('#redoc');
    if (!redoc) return '';
    const copy = redoc.cloneNode(true) as HTMLElement;
    copy.querySelectorAll('.menu-content').forEach((menu) => menu.remove());
    return copy.textContent ?? '';
  });
}

/**
 * Scrolls down step by step until the end of the page: Redoc renders the operations of a route
 * lazily, as they come into view, so a jump straight to the end would skip the ones in between.
 */
async function renderAll(page: Page): Promise<void> {
  let stableRounds = 0;
  let lastHeight = -1;
  // At the end, wait until the height has not changed for about two seconds: rendering can lag.
  for (let round = 0; round < 400 && stableRounds < 8; round++) {
    const state = await page.evaluate(() => {
      window.scrollBy(0, window.innerHeight);
      const height = document.documentElement.scrollHeight;
      return { height, atEnd: window.scrollY + window.innerHeight >= height - 2 };
    });
    await page.waitForTimeout(200);
    stableRounds = state.atEnd && state.height === lastHeight ? stableRounds + 1 : 0;
    lastHeight = state.height;
  }
}

/** A path into the repository's sources (not a package entry point such as paylater-api/openapi/...). */
const SOURCE_PATH = /(?<![\w/.-])(?:src|scripts|test|bench|generated|openapi|examples|dist|\.ci)\/[\w./<>{}*-]*/g;

/** The tables of `selector` that are wider than the room they have (cut off or scrolled) at this width. */
function cutOffTables(page: Page, selector: string): Promise<string[]> {
  return page.$$eval(selector, (tables) =>
    tables
      .filter((table) => {
        const box = table.getBoundingClientRect();
        if (box.width === 0) return false; // not shown (a collapsed part of the page)
        const room = (table.parentElement ?? document.body).getBoundingClientRect();
        return table.scrollWidth > table.clientWidth + 1 || box.right > room.right + 1 || box.right > window.innerWidth;
      })
      .map((table) => `${(table.querySelector('th, td')?.textContent ?? '').trim().slice(0, 40)}: ${Math.round(table.scrollWidth)} px`),
  );
}

describe.concurrent('the landing page', () => {
  it('loads offline, links every reference and every guide, and every local link works', async () => {
    expect(built.map((p) => p.file)).toContain('index.html');
    const v = await visit('index.html');
    try {
      await settle(v.page);
      await expect.poll(() => v.page.locator('h1').first().innerText()).toBe('Pay-later API documentation');
      const hrefs = await v.page.$$eval('a[href]', (links) => links.map((a) => a.getAttribute('href') ?? ''));
      for (const family of FAMILIES) expect(hrefs).toContain(`${family}.html`);
      expect(guides.length).toBeGreaterThan(0);
      for (const guide of guides) expect(hrefs).toContain(guide.file);
      const text = await v.page.innerText('body');
      for (const guide of guides) expect(text).toContain(guide.title);

      const local = [...new Set(hrefs.filter((h) => !/^[a-z]+:/i.test(h) && !h.startsWith('#')))];
      for (const href of local) {
        const response = await fetch(`${site?.server.url}/${href}`);
        expect(response.status, href).toBe(200);
      }
      // Integrators first; the implementers' guides under their own heading, after every other.
      const sections = await v.page.$$eval('main section', (list) =>
        list.map((section) => ({ heading: section.querySelector('h2')?.textContent ?? '', links: [...section.querySelectorAll('a[href]')].map((a) => a.getAttribute('href') ?? '') })),
      );
      const headings = sections.map((section) => section.heading);
      expect(headings.indexOf(AUDIENCE_HEADINGS.integrators)).toBeGreaterThanOrEqual(0);
      expect(headings.indexOf(AUDIENCE_HEADINGS.implementers)).toBe(headings.length - 1);
      const implementers = sections.at(-1)?.links ?? [];
      const integrators = sections.find((section) => section.heading === AUDIENCE_HEADINGS.integrators)?.links ?? [];
      for (const guide of guides) {
        expect(guide.source.startsWith('.') ? [] : guide.audience === 'implementers' ? implementers : integrators, guide.source).toContain(guide.file);
      }
      for (const name of ['contract-kit.html', 'e2e.html', 'decisions.html']) expect(implementers).toContain(name);
      for (const name of ['getting-started.html', 'web-checkout.html', 'authentication.html', 'webhooks.html']) expect(integrators).toContain(name);
      // The top navigation leads to the first steps of an integration and to the references.
      const top = await v.page.$$eval('header.top nav a', (links) => links.map((a) => a.getAttribute('href')));
      expect(top.slice(0, 3)).toEqual(['index.html', 'getting-started.html', 'web-checkout.html']);
      expect(await cutOffTables(v.page, 'main table')).toEqual([]);
      await screenshot(v.page, 'index');
      expectClean(v);
    } finally {
      await v.context.close();
    }
  });
});

describe.concurrent('the guides', () => {
  it('include the four core guides and every docs/*.md', () => {
    const sources = guides.map((g) => g.source);
    for (const name of ['getting-started.md', 'authentication.md', 'flows.md', 'states.md', 'mock.md', 'decisions.md']) {
      expect(sources).toContain(name);
    }
    expect(built.filter((p) => p.kind === 'guide').map((p) => p.source).sort()).toEqual([...sources].sort());
  });

  it('list the implementers\' guides apart, the rest for integrators', () => {
    for (const guide of guides) expect(guide.audience, guide.source).toBe(IMPLEMENTER_GUIDES.includes(guide.source) ? 'implementers' : 'integrators');
    for (const name of ['contract-kit.md', 'e2e.md', 'decisions.md']) expect(IMPLEMENTER_GUIDES).toContain(name);
    const order = guides.map((g) => g.audience);
    expect(order.indexOf('implementers')).toBeGreaterThan(order.lastIndexOf('integrators'));
  });

  it.concurrent.each(guides.map((g) => [g.source, g] as const))('%s renders offline with its title, no source path for integrators, no table cut off at 1440 px', async (_source, guide) => {
    const v = await visit(guide.file);
    try {
      await settle(v.page);
      expect(await v.page.locator('main h1').first().innerText()).toContain(guide.title);
      const text = await v.page.innerText('main');
      expect(text.length).toBeGreaterThan(200);
      if (guide.audience === 'integrators') expect(text.match(SOURCE_PATH) ?? [], 'paths into the sources').toEqual([]);
      expect(await cutOffTables(v.page, 'main table'), 'tables wider than the page at 1440 px').toEqual([]);
      expect(await v.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1440);
      // The side navigation: the integrators' guides, then the implementers' under their heading.
      expect(await v.page.$$eval('nav.side h2', (list) => list.map((h) => h.textContent))).toEqual([AUDIENCE_HEADINGS.integrators, AUDIENCE_HEADINGS.implementers]);
      // Images of the guide (the checkout's screenshots) are there.
      for (const src of await v.page.$$eval('main img', (list) => list.map((img) => img.getAttribute('src') ?? ''))) {
        expect(existsSync(join(siteDir, src)), `${guide.source} shows ${src}`).toBe(true);
      }
      // Links between guides point at pages that exist.
      const hrefs = await v.page.$$eval('main a[href$=".html"], main a[href*=".html#"]', (links) =>
        links.map((a) => a.getAttribute('href') ?? ''),
      );
      for (const href of hrefs.filter((h) => !/^[a-z]+:/i.test(h))) {
        expect(existsSync(join(siteDir, href.split('#')[0] as string)), `${guide.source} links to ${href}`).toBe(true);
      }
      await screenshot(v.page, guide.file.replace(/\.html$/, ''));
      expectClean(v);
    } finally {
      await v.context.close();
    }
  });
});

describe.concurrent('the API references', () => {
  it.concurrent.each(FAMILIES.map((f) => [f] as const))('%s shows every operation and webhook, offline', async (family) => {
    const operations = operationsOf(family);
    expect(operations.length).toBeGreaterThan(0);
    const v = await visit(`${family}.html`);
    try {
      const { page } = v;
      // Rendered ahead of time, the reference is readable before Redoc's script, loaded on first use.
      const title0 = JSON.parse(readFileSync(join(root, 'generated', 'openapi', `${family}.json`), 'utf8')).info.title as string;
      expect(await contentText(page)).toContain(title0);
      expect(v.requests.some((url) => /\/assets\/redoc\.[0-9a-f]+\.js$/.test(url)), 'Redoc loaded before first use').toBe(false);
      await page.mouse.move(720, 450);
      // Redoc has hydrated when the attribution logo appears: it is rendered in the browser only.
      await page.waitForSelector('img[alt="redocly logo"]', { state: 'attached', timeout: 30_000 });
      await settle(page);
      const title = JSON.parse(readFileSync(join(root, 'generated', 'openapi', `${family}.json`), 'utf8')).info.title as string;
      expect(await contentText(page)).toContain(title);
      // The overview (the document's description), rendered ahead of time, in full.
      await screenshot(page, family);

      // Redoc shows one route at a time: the overview, then one per tag (each after the overview).
      // Visit each tag's route and scroll through it.
      const routes = await page.$$eval('.menu-content a[href^="#/"]', (links) =>
        [...new Set(links.map((a) => a.getAttribute('href') ?? ''))].filter((h) => /^#\/[^/#]+$/.test(h)),
      );
      expect(routes.length).toBeGreaterThan(0);
      let seen = await contentText(page);
      const cutOff = await cutOffTables(page, '#redoc table');
      const visit = async (route: string, waitMs: number, shoot: boolean) => {
        await page.evaluate((hash) => {
          window.location.hash = hash;
        }, route);
        await page.waitForFunction((hash) => window.location.hash.startsWith(hash), route);
        await page.waitForTimeout(waitMs);
        // The start of the tag: its description and first operation (the rest renders on scrolling).
        if (shoot) await page.screenshot({ path: join(shotsDir, `${family}-${route.slice(2)}.png`) });
        await renderAll(page);
        seen += `\n${await contentText(page)}`;
      };
      for (const route of routes) {
        await visit(route, 500, true);
        cutOff.push(...(await cutOffTables(page, '#redoc table')).map((table) => `${route} ${table}`));
      }
      // On a loaded machine a tag's route can take longer than half a second to render (CI, with
      // the other browser-test files beside it): once more, with time, before an operation counts
      // as missing.
      const unseen = () => operations.filter((op) => !seen.includes(op.summary ?? op.operationId));
      for (let round = 0; round < 2 && unseen().length > 0; round++) {
        for (const route of routes) await visit(route, 3_000, false);
      }

      expect(cutOff, 'tables wider than the page at 1440 px').toEqual([]);
      const missing = unseen();
      expect(missing.map((op) => `${op.label} (${op.operationId})`), 'operations not rendered').toEqual([]);
      await settle(page);
      expectClean(v);
      expect(v.requests.some((url) => url.endsWith('/assets/redocly-logo-full.svg'))).toBe(true);
    } finally {
      await v.context.close();
    }
  }, 240_000);
});

describe.concurrent('the site search', () => {
  it('from a guide, an error code found and opened lands on its place in a reference', async () => {
    const v = await visit('flows.html');
    try {
      const { page } = v;
      const box = page.locator('header.top .site-search input[type="search"]');
      await box.fill('NO_SUCH_TRANSACTION');
      const results = page.locator('.site-search-results:not([hidden]) a');
      await results.first().waitFor({ state: 'visible', timeout: 15_000 });
      const first = await results.first().evaluate((a) => ({ href: a.getAttribute('href'), title: a.querySelector('strong')?.textContent }));
      expect(first.title).toBe('NO_SUCH_TRANSACTION');
      expect(first.href).toMatch(/^(?:gateway|web|sdk)\.html#\/section\/errors$/);
      // The guides' own sections that name the code are listed too, each leading to its section.
      const listed = await results.evaluateAll((links) =>
        links.map((a) => ({ href: a.getAttribute('href') ?? '', title: a.querySelector('strong')?.textContent, text: a.textContent ?? '' })),
      );
      const guides = listed.filter((result) => !/^(?:gateway|web|sdk|extras)\.html/.test(result.href));
      expect(guides.map((result) => result.href)).toEqual(expect.arrayContaining(['refunds.html#the-rules', expect.stringMatching(/^states\.html#/)]));
      for (const result of guides) {
        expect(result.title).toBe('NO_SUCH_TRANSACTION');
        expect(result.text).toContain('Guide · ');
      }
      await page.screenshot({ path: join(shotsDir, 'search-from-guide.png') });
      await box.press('Enter');
      await page.waitForURL((url) => url.pathname.endsWith(String(first.href).split('#')[0] as string) && url.hash === '#/section/errors', { timeout: 15_000 });
      await page.waitForSelector('img[alt="redocly logo"]', { state: 'attached', timeout: 30_000 });
      // The Errors section is on screen, below the search bar, and its table names the code.
      await page.waitForFunction(
        () => {
          const bar = document.querySelector('.site-search-bar')?.getBoundingClientRect().bottom ?? 0;
          const heading = [...document.querySelectorAll('#redoc h1, #redoc h2')].find((h) => h.textContent?.trim().startsWith('Errors'));
          const top = heading?.getBoundingClientRect().top ?? -1;
          const cell = [...document.querySelectorAll('#redoc td')].find((td) => td.textContent?.includes('NO_SUCH_TRANSACTION'));
          return top >= bar - 2 && top < window.innerHeight / 2 && (cell?.getBoundingClientRect().width ?? 0) > 0;
        },
        undefined,
        { timeout: 15_000 },
      );
      // The reference has the same search box, and it finds the guides too.
      const again = page.locator('.site-search-bar .site-search input[type="search"]');
      await again.fill('Receiving webhooks');
      await page.locator('.site-search-results:not([hidden]) a[href="webhooks.html"]').first().waitFor({ state: 'visible', timeout: 15_000 });
      await page.screenshot({ path: join(shotsDir, 'search-landed-in-reference.png') });
      await settle(page);
      expectClean(v);
    } finally {
      await v.context.close();
    }
  }, 120_000);
});

describe.concurrent('the weight of the pages', () => {
  it('each reference\'s first visit costs under 300 KB on the wire, Redoc\'s script not loaded until first use; Redoc is one shared asset named by its hash; a guide page under 60 KB, a decision log under 150 KB', () => {
    const weights = new Map(measureSite(siteDir).map((w) => [w.file, w]));
    const bundles = new Set<string>();
    for (const family of FAMILIES) {
      const weight = weights.get(`${family}.html`);
      expect(weight, family).toBeDefined();
      expect(weight?.firstVisit, `${family}.html's first visit on the wire`).toBeLessThan(300_000);
      expect(weight?.assets.filter((a) => /\/redoc\./.test(a)), `${family}.html loads Redoc on load`).toEqual([]);
      const html = readFileSync(join(siteDir, `${family}.html`), 'utf8');
      for (const match of html.matchAll(/\bimport\("\.\/(assets\/redoc\.[^"]+)"\)/g)) bundles.add(match[1] as string);
    }
    expect([...bundles]).toEqual([expect.stringMatching(/^assets\/redoc\.[0-9a-f]{16}\.js$/)]);
    // The two decision logs are records that grow with every decision, read by their anchors: a
    // bound of their own (docs/code-decisions.md, D390).
    for (const guide of guides) {
      const bound = DECISION_LOGS.has(guide.file) ? 150_000 : 60_000;
      expect(weights.get(guide.file)?.wire, `${guide.file} on the wire`).toBeLessThan(bound);
    }
  });
});

describe.concurrent('the first visit of a reference, in the browser', () => {
  it.concurrent.each(FAMILIES.map((f) => [f] as const))('%s: every byte fetched until the load event and idle is under 300 KB on the wire', async (family) => {
    if (!site) throw new Error('the browser or the server did not start');
    const context = await site.browser.newContext({ viewport: { width: 1440, height: 900 } });
    try {
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
      const bytes = new Map<string, number>();
      const urls = new Map<string, string>();
      cdp.on('Network.requestWillBeSent', (event) => urls.set(event.requestId, event.request.url));
      cdp.on('Network.loadingFinished', (event) => bytes.set(event.requestId, event.encodedDataLength));
      await page.goto(`${site.server.url}/${family}.html`, { waitUntil: 'load' });
      await page.waitForLoadState('networkidle');
      const total = [...bytes.values()].reduce((sum, n) => sum + n, 0);
      const fetched = [...urls.values()];
      expect(fetched.some((url) => url.endsWith(`/${family}.html`))).toBe(true);
      expect(fetched.filter((url) => /\/assets\/redoc\./.test(url)), 'Redoc fetched before first use').toEqual([]);
      expect(total, `${family}.html's first visit: ${fetched.length} requests`).toBeGreaterThan(20_000);
      expect(total, `${family}.html's first visit: ${fetched.length} requests`).toBeLessThan(300_000);
    } finally {
      await context.close();
    }
  });
});

describe.concurrent('the servers of the documents', () => {
  it.each(FAMILIES.map((f) => [f] as const))('%s describes its servers in plain text, without backticks', (family) => {
    const document = JSON.parse(readFileSync(join(root, 'generated', 'openapi', `${family}.json`), 'utf8')) as {
      servers: { description?: string; variables?: Record<string, { description?: string }> }[];
    };
    expect(document.servers.length).toBeGreaterThan(0);
    for (const server of document.servers) {
      const texts = [server.description ?? '', ...Object.values(server.variables ?? {}).map((variable) => variable.description ?? '')];
      for (const text of texts) expect(text).not.toContain('`');
      expect(server.description ?? '').not.toBe('');
    }
  });
});

describe.concurrent('the flow diagrams', () => {
  it.concurrent.each(['gateway', 'web', 'sdk'] as const)('the %s reference shows its transaction flow as a drawing, not as Mermaid text', async (family) => {
    const v = await visit(`${family}.html`);
    try {
      const { page } = v;
      await page.mouse.move(720, 450);
      await page.waitForSelector('img[alt="redocly logo"]', { state: 'attached', timeout: 30_000 });
      const drawing = page.locator('#redoc img[src^="assets/diagrams/"]');
      await drawing.first().waitFor({ state: 'visible', timeout: 15_000 });
      expect(await drawing.count()).toBe(1);
      await drawing.first().scrollIntoViewIfNeeded();
      const shown = await drawing.first().evaluate((img: HTMLImageElement) => ({
        complete: img.complete,
        naturalWidth: img.naturalWidth,
        width: img.getBoundingClientRect().width,
        alt: img.alt,
      }));
      expect(shown.complete).toBe(true);
      expect(shown.naturalWidth).toBeGreaterThan(400);
      // Drawn at its size, not shrunk to the column: its 16 px labels stay 16 px.
      expect(Math.round(shown.width)).toBe(shown.naturalWidth);
      const labels = await drawing.first().evaluate(async (img: HTMLImageElement) => {
        const svg = await (await fetch(img.src)).text();
        const sizes = [...svg.matchAll(/font-size:\s*([\d.]+)px/g)].map((m) => Number(m[1]));
        return { smallest: Math.min(...sizes), scale: img.getBoundingClientRect().width / img.naturalWidth };
      });
      expect(labels.smallest * labels.scale).toBeGreaterThanOrEqual(12);
      const frame = await drawing.first().evaluate((img) => {
        const box = img.closest('a')?.getBoundingClientRect();
        const column = img.closest('p, div')?.parentElement?.getBoundingClientRect();
        return { right: box?.right ?? 0, columnRight: column?.right ?? 0, imageRight: img.getBoundingClientRect().right };
      });
      expect(frame.right).toBeLessThanOrEqual(frame.columnRight + 1);
      // It fits the column at its size: nothing to scroll sideways.
      expect(frame.imageRight, `the drawing is ${shown.naturalWidth} px wide`).toBeLessThanOrEqual(frame.columnRight + 1);
      expect(shown.alt).toBe(family === 'gateway' ? 'Transaction flow: sequence diagram' : 'Flow: sequence diagram');
      // A click opens it at full size.
      expect(await drawing.first().evaluate((img) => img.closest('a')?.getAttribute('href'))).toBe(await drawing.first().getAttribute('src'));
      expect(await contentText(page)).not.toMatch(/sequenceDiagram|participant \w+ as/);
      await drawing.first().screenshot({ path: join(shotsDir, `${family}-flow-diagram.png`) });
      await settle(page);
      expectClean(v);
    } finally {
      await v.context.close();
    }
  }, 120_000);
});

describe.concurrent('the changelog and the contract changes', () => {
  it('the changelog page shows CHANGELOG.md and is linked from every page; the contract changes are generated', async () => {
    const v = await visit('changelog.html');
    try {
      const { page } = v;
      expect(await page.title()).toBe('Changelog | Pay-later API documentation');
      const headings = await page.$$eval('main h2', (nodes) => nodes.map((n) => n.textContent ?? ''));
      const released = [...readFileSync(join(root, 'CHANGELOG.md'), 'utf8').matchAll(/^## \[([^\]]+)\]/gm)].map((m) => m[1] as string);
      expect(released).toContain('2.0.0');
      for (const version of released) expect(headings.some((h) => h.replace(/^\[/, '').startsWith(version)), version).toBe(true);
      await screenshot(page, 'changelog');
      await page.click('header.top nav a[href="contract-changes.html"]');
      await page.waitForURL(/contract-changes\.html$/);
      const text = await page.locator('main').innerText();
      expect(text).toMatch(/2\.0\.0 → \d+\.\d+\.\d+/);
      expect(text).toContain('notesWebhookUrl');
      await screenshot(page, 'contract-changes');
      await settle(page);
      expectClean(v);
    } finally {
      await v.context.close();
    }
    const home = await visit('index.html');
    try {
      expect(await home.page.locator('header.top nav a[href="changelog.html"]').count()).toBe(1);
    } finally {
      await home.context.close();
    }
  }, 120_000);
});

describe.concurrent('the try-it console', () => {
  it('a call from the web reference reaches a running sandbox, signed with its test key, and shows the answer', async () => {
    if (!site) throw new Error('the browser or the server did not start');
    const sandbox = await createSandbox({ logger: { info: () => undefined, warn: () => undefined, error: () => undefined } });
    const sandboxUrl = await sandbox.listen(0, '127.0.0.1');
    const docs = await serveDocs({ dir: siteDir, port: 0, sandbox: sandboxUrl });
    const context = await site.browser.newContext({ viewport: { width: 1440, height: 900 } });
    try {
      const page = await context.newPage();
      const problems: string[] = [];
      const foreign: string[] = [];
      const proxied: { status: number; signed: string | undefined }[] = [];
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      page.on('request', (request) => {
        const url = request.url();
        if (!url.startsWith(`${docs.url}/`) && !url.startsWith('data:') && !url.startsWith('blob:') && url !== 'about:blank') foreign.push(url);
      });
      page.on('response', (response) => {
        if (response.url().startsWith(`${docs.url}/sandbox/`)) proxied.push({ status: response.status(), signed: response.headers()['x-docs-signed'] });
      });
      // From the web reference (Redoc), its "Try it" link.
      await page.goto(`${docs.url}/web.html`);
      await page.locator('#redoc a[href="console.html?api=web"]').first().click();
      await page.waitForURL(/console\.html\?api=web$/);
      await page.getByText('Initiate a web-flow transaction').first().click();
      await page.getByRole('button', { name: /Test Request/i }).first().click();
      await page.getByRole('button', { name: /^Send/ }).first().click();
      await page.getByText('TRANSACTION_INITIATED').first().waitFor({ timeout: 20_000 });
      await page.screenshot({ path: join(shotsDir, 'console-web.png') });
      expect(proxied).toEqual([{ status: 200, signed: "with the sandbox's test key" }]);
      // The sandbox has the transaction, initiated by its test partner.
      const status = await fetch(`${docs.url}/sandbox/web/api/transaction/status?id=web_20261122_0007`);
      expect(status.status).toBe(200);
      expect(await status.json()).toMatchObject({ transactionId: 'web_20261122_0007', status: 'PENDING' });
      expect(foreign, 'requests to hosts other than the local server').toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
      await docs.close();
      await sandbox.close();
    }
  }, 120_000);
});
