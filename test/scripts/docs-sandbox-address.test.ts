/**
 * The docs server's references follow its `--sandbox`: the reference pages and the documents
 * name the given sandbox where the build wrote `npm start`'s (the Servers panel, the code samples'
 * defaults), as served, Brotli- or gzip-compressed; the guides and the files on disk stay as built, and with the
 * default sandbox everything is served as built.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveDocs } from '../../scripts/docs-server.js';

let dir: string;
const reference = `<!doctype html><title>web</title><script>const __redoc_state = {"spec":{"data":{"servers":[{"url":"http://127.0.0.1:4000","description":"Local sandbox, started with npm start"}]}}};</script>\n<pre>BASE_URL="\${PAYLATER_BASE_URL:-http://127.0.0.1:4000}"</pre>\n`;
const guide = '<!doctype html><title>guide</title><p>The sandbox listens on http://127.0.0.1:4000 by default.</p>\n';

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'paylater-docs-address-'));
  mkdirSync(join(dir, 'openapi'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>home</title>\n');
  writeFileSync(join(dir, 'web.html'), reference);
  writeFileSync(join(dir, 'web-checkout.html'), guide);
  writeFileSync(join(dir, 'openapi', 'web.json'), JSON.stringify({ servers: [{ url: 'http://127.0.0.1:4000' }] }));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
    });
    request.once('error', reject);
    request.end();
  });
}

describe('the references name the docs server\'s sandbox', () => {
  it('with --sandbox elsewhere: the Servers list and the samples name it, plain, Brotli and gzip; the guides and the files stay as built', async () => {
    const server = await serveDocs({ dir, port: 0, sandbox: 'http://127.0.0.1:4100/' });
    try {
      for (const path of ['/web.html', '/web']) {
        const plain = await get(`${server.url}${path}`);
        expect(plain.status).toBe(200);
        expect(plain.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(plain.body.toString()).toBe(reference.replaceAll('http://127.0.0.1:4000', 'http://127.0.0.1:4100'));
      }
      const brotli = await get(`${server.url}/web.html`, { 'Accept-Encoding': 'gzip, deflate, br' });
      expect(brotli.headers['content-encoding']).toBe('br');
      expect(brotliDecompressSync(brotli.body).toString()).toBe(reference.replaceAll('http://127.0.0.1:4000', 'http://127.0.0.1:4100'));
      const onlyBrotli = await get(`${server.url}/web.html`, { 'Accept-Encoding': 'br' });
      expect(onlyBrotli.headers['content-encoding']).toBe('br');
      const gzipped = await get(`${server.url}/web.html`, { 'Accept-Encoding': 'gzip' });
      expect(gzipped.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(gzipped.body).toString()).toContain('{"url":"http://127.0.0.1:4100","description":"Local sandbox, started with npm start"}');
      expect(JSON.parse((await get(`${server.url}/openapi/web.json`)).body.toString())).toEqual({ servers: [{ url: 'http://127.0.0.1:4100' }] });
      expect((await get(`${server.url}/web-checkout.html`)).body.toString()).toBe(guide);
      expect(readFileSync(join(dir, 'web.html'), 'utf8')).toBe(reference);
      expect((await get(`${server.url}/nothing.json`)).status).toBe(404);
    } finally {
      await server.close();
    }
  });

  it('with the default sandbox: served as built', async () => {
    const server = await serveDocs({ dir, port: 0, sandbox: 'http://127.0.0.1:4000' });
    try {
      expect((await get(`${server.url}/web.html`)).body.toString()).toBe(reference);
    } finally {
      await server.close();
    }
  });
});
