/**
 * The weight of a built site's pages (scripts/docs-weight.ts) on a small site made here: a page
 * costs its Brotli copy when it has one, and a first visit adds each local asset it loads once
 * (scripts, style sheets, preloads, pictures, module imports), never a link it only points to or a
 * remote address. And the hashed names of the shared assets (scripts/docs-assets.ts).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HASHED_ASSET, hashedName, writeHashedAsset } from '../../scripts/docs-assets.js';
import { precompress } from '../../scripts/docs-compress.js';
import { measureSite, pageAssets } from '../../scripts/docs-weight.js';

const dir = mkdtempSync(join(tmpdir(), 'paylater-docs-weight-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the weight of a page', () => {
  it('names the local assets a page loads, each once, without links, remote addresses or fragments', () => {
    const html = `<link rel="stylesheet" href="assets/site.0123456789abcdef.css"><link rel="modulepreload" href="./assets/redoc.js" crossorigin>
      <script src="assets/search.js?v=1"></script><script src="https://cdn.example/x.js"></script><img src="images/a.png">
      <a href="assets/diagrams/big.svg">open</a><script type="module">import { hydrate } from "./assets/redoc.js";</script>`;
    expect(pageAssets(html)).toEqual(['assets/redoc.js', 'assets/search.js', 'assets/site.0123456789abcdef.css', 'images/a.png']);
  });

  it('counts the Brotli copy of the page, then every asset once for a first visit', async () => {
    const script = writeHashedAsset(dir, 'redoc.js', `export function hydrate() {}\n${'// a comment of the bundle\n'.repeat(400)}`);
    writeFileSync(join(dir, 'gateway.html'), `<script type="module">import { hydrate } from "./${script}";</script>\n${'<p>The reference.</p>\n'.repeat(500)}`);
    writeFileSync(join(dir, 'tiny.html'), `<script src="${script}"></script>`);
    await precompress(dir);
    const weights = measureSite(dir);
    expect(weights.map((w) => w.file)).toEqual(['gateway.html', 'tiny.html']);
    const [gateway, tiny] = weights;
    const br = (file: string) => readFileSync(join(dir, `${file}.br`)).length;
    expect(gateway?.raw).toBe(readFileSync(join(dir, 'gateway.html')).length);
    expect(gateway?.wire).toBe(br('gateway.html'));
    expect(gateway?.wire).toBeLessThan(gateway?.raw ?? 0);
    expect(gateway?.firstVisit).toBe(br('gateway.html') + br(script));
    // Under 1 KiB a page has no compressed copy: its own bytes count.
    expect(tiny?.wire).toBe(readFileSync(join(dir, 'tiny.html')).length);
    expect(tiny?.assets).toEqual([script]);
  });
});

describe('the hashed names of the shared assets', () => {
  it('change with the content, keep the folder and extension, and are what the server long-caches', () => {
    expect(hashedName('redoc.js', 'a')).toMatch(/^redoc\.[0-9a-f]{16}\.js$/);
    expect(hashedName('redoc.js', 'a')).not.toBe(hashedName('redoc.js', 'b'));
    expect(hashedName('scalar/standalone.js', 'a')).toMatch(/^scalar\/standalone\.[0-9a-f]{16}\.js$/);
    for (const path of ['/assets/redoc.0123456789abcdef.js', '/assets/scalar/standalone.0123456789abcdef.js', '/assets/diagrams/0123456789abcdef.svg']) {
      expect(path).toMatch(HASHED_ASSET);
    }
    for (const path of ['/assets/site.css', '/assets/redoc.0123456789abcde.js', '/gateway.0123456789abcdef.html', '/assets/x.0123456789ABCDEF.js']) {
      expect(path).not.toMatch(HASHED_ASSET);
    }
  });
});
