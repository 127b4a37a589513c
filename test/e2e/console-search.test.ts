/**
 * The site's search on the try-it console (console.html, Scalar's page): the same search box as on
 * the guides and the references sits in the console's note above Scalar, searches the guides and
 * the four references, and leads from the console to a reference's Errors table and to a guide. The
 * page stays offline: no request leaves the local server.
 *
 * Needs Chromium at /usr/bin/chromium (or CHROMIUM_PATH): `bash .ci/e2e-setup.sh`. See docs/e2e.md.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shotsDir, startDocsSite, type DocsSite } from './browser.js';

let site: DocsSite | undefined;

beforeAll(async () => {
  site = await startDocsSite();
});

afterAll(async () => {
  await site?.close();
});

describe('the search box of the try-it console', () => {
  it('finds an error code from the console and lands on the reference, and finds a guide', async () => {
    if (!site) throw new Error('the browser or the server did not start');
    const origin = site.server.url;
    const context = await site.browser.newContext({ viewport: { width: 1440, height: 900 } });
    try {
      const page = await context.newPage();
      const problems: string[] = [];
      const foreign: string[] = [];
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      page.on('requestfailed', (request) => problems.push(`failed: ${request.url()}`));
      page.on('request', (request) => {
        const url = request.url();
        if (!url.startsWith(`${origin}/`) && !url.startsWith('data:') && !url.startsWith('blob:') && url !== 'about:blank') foreign.push(url);
      });
      await page.goto(`${origin}/console.html?api=web`);
      // Scalar has drawn its reference below the note.
      await page.getByText('Initiate a web-flow transaction', { exact: false }).first().waitFor({ state: 'attached', timeout: 30_000 });
      const boxes = page.locator('.site-search input[type="search"]');
      expect(await boxes.count()).toBe(1);
      const box = page.locator('.console-note[data-site-search] .site-search input[type="search"]');
      await box.waitFor({ state: 'visible', timeout: 15_000 });

      // A guide first: the results open above Scalar, and the link is the guide's page.
      await box.fill('Receiving webhooks');
      const guide = page.locator('.site-search-results:not([hidden]) a[href="webhooks.html"]').first();
      await guide.waitFor({ state: 'visible', timeout: 15_000 });
      // The list is on top: the element at the first result's centre is that result (not Scalar's page).
      const onTop = await guide.evaluate((link) => {
        const box = link.getBoundingClientRect();
        const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
        return hit !== null && link.contains(hit);
      });
      expect(onTop).toBe(true);

      // An error code leads to a reference's Errors table.
      await box.fill('NO_SUCH_TRANSACTION');
      const results = page.locator('.site-search-results:not([hidden]) a');
      await page.waitForFunction(
        () => document.querySelector('.site-search-results:not([hidden]) a strong')?.textContent === 'NO_SUCH_TRANSACTION',
        undefined,
        { timeout: 15_000 },
      );
      const first = await results.first().evaluate((a) => ({ href: a.getAttribute('href') }));
      expect(first.href).toMatch(/^(?:gateway|web|sdk)\.html#\/section\/errors$/);
      await page.screenshot({ path: join(shotsDir, 'search-from-console.png') });
      await box.press('Enter');
      await page.waitForURL((url) => url.pathname.endsWith(String(first.href).split('#')[0] as string) && url.hash === '#/section/errors', { timeout: 15_000 });
      await page.waitForFunction(
        () => [...document.querySelectorAll('#redoc td')].some((td) => td.textContent?.includes('NO_SUCH_TRANSACTION') && td.getBoundingClientRect().width > 0),
        undefined,
        { timeout: 30_000 },
      );
      expect(foreign, 'requests to hosts other than the local server').toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 180_000);
});
