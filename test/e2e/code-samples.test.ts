/**
 * The code samples in the rendered reference (`npm run docs`), in Chromium: on an operation's page
 * the request-samples panel offers the four languages (Redoc shows `x-codeSamples` as a language
 * menu over the code), switching changes the code to that language's short call (the request
 * itself, scripts/samples/short.ts), and the complete program of the bundle is one click away, a
 * collapsible block per language at the end of the operation's description; every switch is
 * captured in artifacts/screenshots/code-samples-*.png. On a webhook's page (where
 * Redoc shows the payload only) the four receivers are collapsible blocks of its description.
 *
 * Needs Chromium at /usr/bin/chromium (or CHROMIUM_PATH): `bash .ci/e2e-setup.sh`. See docs/e2e.md.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shotsDir, startDocsSite, type DocsSite } from './browser.js';
import { withShortCalls } from '../../scripts/samples/short.js';

const root = resolve(import.meta.dirname, '..', '..');

/** The operation looked at, its complete programs as the bundle carries them, and its short calls. */
const OPERATION = 'initiateSdkTransaction';
const bundle = JSON.parse(readFileSync(join(root, 'generated', 'openapi', 'sdk.json'), 'utf8'));
const samples: { lang: string; label: string; source: string }[] = bundle.paths['/merchant/credit/initiateTransaction'].post['x-codeSamples'];
const shortCalls: { lang: string; label: string; source: string }[] = withShortCalls('sdk', bundle).paths['/merchant/credit/initiateTransaction'].post['x-codeSamples'];

/** What Redoc's menu calls each sample (it names the language by `lang`), and a line only that program has. */
const LANGUAGES = [
  { label: 'curl', menu: 'curl', marker: 'openssl dgst -sha256 -binary | base64' },
  { label: 'Node', menu: 'Node.js', marker: "from 'paylater-api'" },
  { label: 'PHP', menu: 'PHP', marker: "hash('sha256'" },
  { label: 'Python', menu: 'Python', marker: 'urllib.request' },
] as const;

let site: DocsSite | undefined;

beforeAll(async () => {
  site = await startDocsSite();
});

afterAll(async () => {
  await site?.close();
});

/** The request-samples panel of the operation whose path is shown in its header. */
function samplesPanel(page: Page): Locator {
  return page.locator('.panel-request-samples').filter({ hasText: '/merchant/credit/initiateTransaction' }).first();
}

const LANGUAGE_NAME = /^(curl|Node\.js|PHP|Python|Payload)$/;

/** The panel's language menu (the panel has a menu of servers too): the dropdown whose button names a language. */
function languageMenu(panel: Locator): Locator {
  return panel.locator('[data-testid="dropdown"]').filter({ has: panel.page().locator('button[aria-haspopup="menu"]', { hasText: LANGUAGE_NAME }) });
}

function languageButton(panel: Locator): Locator {
  return languageMenu(panel).locator('button[aria-haspopup="menu"]');
}

/** The items of the open language menu (Redoc renders an open menu at the end of the page). */
function languageItems(panel: Locator): Locator {
  return panel.page().locator('[data-testid="dropdown-menu"]').filter({ hasText: 'Python' }).locator('[role="menuitem"]');
}

async function shownCode(panel: Locator): Promise<string> {
  return (await panel.locator('pre').first().innerText()).replace(/\u00a0/g, ' ');
}

describe('the code samples of an operation in the reference', () => {
  it('offer curl, Node, PHP and Python, switching shows each short call, and the complete programs are a click away', async () => {
    expect(samples.map((sample) => sample.label)).toEqual(LANGUAGES.map((language) => language.label));
    const context = await site!.browser.newContext({ viewport: { width: 1440, height: 900 } });
    const problems: string[] = [];
    try {
      const page = await context.newPage();
      page.on('pageerror', (error) => problems.push(error.message));
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
      await page.goto(`${site!.server.url}/sdk.html#/sdk-flow`);
      await page.waitForSelector('img[alt="redocly logo"]', { state: 'attached', timeout: 30_000 });
      const panel = samplesPanel(page);
      await panel.waitFor({ state: 'visible', timeout: 30_000 });
      await panel.scrollIntoViewIfNeeded();

      // The first sample is shown at first.
      const button = languageButton(panel);
      await expect.poll(() => button.innerText()).toBe('curl');
      const first = await shownCode(panel);
      expect(first).toContain(`(${OPERATION})`);
      expect(first).toContain(LANGUAGES[0].marker);

      // The menu lists the four languages.
      await button.click();
      await expect.poll(async () => (await languageItems(panel).allInnerTexts()).map((text) => text.trim())).toEqual(
        expect.arrayContaining(LANGUAGES.map((language) => language.menu)),
      );
      await page.screenshot({ path: join(shotsDir, 'code-samples-menu.png') });
      await button.click();
      await expect.poll(() => languageItems(panel).count()).toBe(0);

      let previous = first;
      for (const language of [...LANGUAGES.slice(1), LANGUAGES[0]]) {
        await languageButton(panel).click();
        await languageItems(panel).filter({ hasText: language.menu }).click();
        await expect.poll(() => languageButton(panel).innerText()).toBe(language.menu);
        await expect.poll(() => shownCode(panel)).toContain(language.marker);
        const code = await shownCode(panel);
        expect(code).not.toBe(previous);
        const source = shortCalls.find((sample) => sample.label === language.label)!.source;
        const full = samples.find((sample) => sample.label === language.label)!.source;
        // The short call shown, line for line (the first lines suffice: the rest may be scrolled away), shorter than the program.
        expect(code.split('\n').slice(0, 5)).toEqual(source.split('\n').slice(0, 5));
        expect(source.split('\n').length).toBeLessThan(full.split('\n').length);
        await page.screenshot({ path: join(shotsDir, `code-samples-${language.label.toLowerCase()}.png`) });
        previous = code;
      }

      // The complete programs: one collapsible block per language in the operation's description, the bundle's program.
      const blocks = page.locator('details.full-program').filter({ hasText: `(${OPERATION})` });
      expect(await blocks.locator('summary').allTextContents()).toEqual(LANGUAGES.map((language) => `${language.label}: the complete program`));
      const curlBlock = blocks.first();
      await curlBlock.locator('summary').click();
      await expect.poll(() => curlBlock.evaluate((node) => (node as HTMLDetailsElement).open)).toBe(true);
      const program = (await curlBlock.locator('pre').innerText()).replace(/\u00a0/g, ' ');
      expect(program.split('\n').slice(0, 5)).toEqual(samples[0]!.source.split('\n').slice(0, 5));
      await curlBlock.screenshot({ path: join(shotsDir, 'code-samples-complete-program.png') });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 180_000);
});

describe('the receivers of a webhook in the reference', () => {
  it('are one collapsible block per language, each the bundle\'s program', async () => {
    const receivers: { label: string; source: string }[] = JSON.parse(readFileSync(join(root, 'generated', 'openapi', 'sdk.json'), 'utf8'))
      .webhooks.transactionStatus.post['x-codeSamples'];
    const context = await site!.browser.newContext({ viewport: { width: 1440, height: 900 } });
    try {
      const page = await context.newPage();
      await page.goto(`${site!.server.url}/sdk.html#/webhooks`);
      await page.waitForSelector('img[alt="redocly logo"]', { state: 'attached', timeout: 30_000 });
      const blocks = page.locator('details.code-sample');
      await blocks.first().waitFor({ state: 'attached', timeout: 30_000 });
      expect(await page.locator('details.code-sample > summary').allInnerTexts()).toEqual(LANGUAGES.map((language) => language.label));
      for (const language of LANGUAGES) {
        const block = blocks.filter({ has: page.locator('summary', { hasText: language.label }) }).first();
        await expect.poll(() => block.locator('pre').isVisible()).toBe(false);
        await block.locator('summary').click();
        await expect.poll(() => block.locator('pre').isVisible()).toBe(true);
        const code = (await block.locator('pre').innerText()).replace(/\u00a0/g, ' ');
        const source = receivers.find((receiver) => receiver.label === language.label)!.source;
        expect(code.split('\n').slice(0, 5)).toEqual(source.split('\n').slice(0, 5));
        expect(code).toMatch(/hash_equals|compare_digest|createWebhookHandler|-hmac/);
        if (language.label === 'PHP') {
          await block.scrollIntoViewIfNeeded();
          await page.screenshot({ path: join(shotsDir, 'code-samples-webhook.png') });
        }
        await block.locator('summary').click();
      }
    } finally {
      await context.close();
    }
  }, 180_000);
});
