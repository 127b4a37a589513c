/**
 * The one way the browser tests start Chromium: Debian's package (or CHROMIUM_PATH), headless, with
 * every background connection off, since no machine here reaches the internet. And the docs site
 * as the docs tests look at it: built once a run (test/support/build-site.ts), served on a free
 * port, with Chromium beside it.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect, inject } from 'vitest';
import { SITE_DIR, type SitePage } from '../../scripts/docs-site.js';
import { serveDocs, type DocsServer } from '../../scripts/docs-server.js';

const root = resolve(import.meta.dirname, '..', '..');
/** Where the docs site is built. */
export const siteDir = SITE_DIR;
/** Where the browser tests put their screenshots. */
export const shotsDir = join(root, 'artifacts', 'screenshots');

const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(executablePath)) {
    throw new Error(`Chromium is not installed at ${executablePath}; run \`bash .ci/e2e-setup.sh\` (or set CHROMIUM_PATH).`);
  }
  return chromium.launch({
    executablePath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-quic',
      '--no-first-run',
    ],
  });
}

/** A free TCP port on the loopback address (a server's, known before another starts). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

export interface DocsSite {
  /** The pages the build wrote. */
  pages: SitePage[];
  server: DocsServer;
  browser: Browser;
  /** Closes the browser, then the server. */
  close(): Promise<void>;
}

/**
 * Serves the docs site the run built into {@link siteDir} (test/support/build-site.ts) on a free port
 * and starts Chromium (beforeAll; close() in afterAll).
 */
export async function startDocsSite(): Promise<DocsSite> {
  mkdirSync(shotsDir, { recursive: true });
  const pages = inject('sitePages');
  const server = await serveDocs({ dir: siteDir, port: 0 });
  let browser: Browser;
  try {
    browser = await launchChromium();
  } catch (error) {
    await server.close();
    throw error;
  }
  return {
    pages,
    server,
    browser,
    async close() {
      try {
        await browser.close();
      } finally {
        await server.close();
      }
    },
  };
}

/**
 * Holds the hosted page's own close (it closes its window 1.5 s after showing a result) until the
 * test has read the result and taken its picture: on a loaded machine those took longer than that,
 * and the window closed under them. `closes` then checks that the page asked to close by itself,
 * closes it as the page would have, and waits for the close.
 */
export async function holdClose(popup: Page): Promise<{ closes(): Promise<void> }> {
  await popup.evaluate(() => {
    const held = window as unknown as { closeAsked?: boolean; closeNow?: () => void };
    const close = window.close.bind(window);
    held.closeNow = close;
    window.close = () => {
      held.closeAsked = true;
    };
  });
  return {
    async closes() {
      await expect.poll(() => popup.evaluate(() => (window as unknown as { closeAsked?: boolean }).closeAsked === true), { timeout: 10_000 }).toBe(true);
      const closed = popup.waitForEvent('close');
      // The window may close before the evaluation answers.
      await popup.evaluate(() => (window as unknown as { closeNow: () => void }).closeNow()).catch(() => undefined);
      await closed;
    },
  };
}
