/**
 * The docs server (scripts/docs-server.ts, sirv) with the build's precompressed copies
 * (scripts/docs-compress.ts): a browser that accepts Brotli gets the `.br` copy, one that accepts
 * only gzip the `.gz` one, one that accepts neither the page itself, each with a validator that a
 * second request turns into a 304. Only GET and HEAD are served, and nothing outside the site.
 * Every server takes a free port.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { precompress } from '../../scripts/docs-compress.js';
import { serveDocs, type DocsServer } from '../../scripts/docs-server.js';

let dir: string;
let server: DocsServer;
const page = `<!doctype html><title>reference</title>\n${'<p>A paragraph of the reference, repeated.</p>\n'.repeat(2000)}`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'paylater-docs-server-'));
  mkdirSync(join(dir, 'openapi'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>home</title>\n');
  writeFileSync(join(dir, 'gateway.html'), page);
  writeFileSync(join(dir, 'openapi', 'gateway.json'), JSON.stringify({ openapi: '3.1.1', padding: 'x'.repeat(5000) }));
  writeFileSync(join(dir, '.secret'), 'not for the web');
  const written = await precompress(dir);
  expect(written.map((f) => f.file.slice(dir.length)).sort()).toEqual(['/gateway.html', '/openapi/gateway.json']);
  server = await serveDocs({ dir, port: 0 });
});

afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A raw request (fetch would decompress and hide the encoding). */
function get(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${server.url}${path}`, { method, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
    });
    request.once('error', reject);
    request.end();
  });
}

describe('the docs server', () => {
  it('answers Brotli to a browser that accepts it, with an ETag, and a 304 to the same ETag', async () => {
    const first = await get('/gateway.html', { 'accept-encoding': 'gzip, deflate, br' });
    expect(first.status).toBe(200);
    expect(first.headers['content-encoding']).toBe('br');
    expect(first.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(first.headers.vary).toBe('Accept-Encoding');
    expect(first.headers['cache-control']).toBe('public,max-age=0,must-revalidate');
    expect(first.body.length).toBeLessThan(page.length / 10);
    expect(brotliDecompressSync(first.body).toString()).toBe(page);
    const etag = String(first.headers.etag);
    expect(etag).toMatch(/^W\/"\d+-\d+"$/);
    const again = await get('/gateway.html', { 'accept-encoding': 'gzip, deflate, br', 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
  });

  it('answers gzip to a browser that accepts only gzip, and the page itself to one that accepts neither', async () => {
    const gzipped = await get('/gateway.html', { 'accept-encoding': 'gzip' });
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzipped.body).toString()).toBe(page);
    const plain = await get('/gateway.html');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.toString()).toBe(page);
    expect(new Set([gzipped.headers.etag, plain.headers.etag]).size).toBe(2);
  });

  it('serves the downloads with their type, and the landing page at /', async () => {
    const document = await get('/openapi/gateway.json', { 'accept-encoding': 'br' });
    expect(document.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(document.headers['x-content-type-options']).toBe('nosniff');
    expect(JSON.parse(brotliDecompressSync(document.body).toString()).openapi).toBe('3.1.1');
    const home = await get('/');
    expect(home.status).toBe(200);
    expect(home.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(home.body.toString()).toContain('<title>home</title>');
  });

  it('answers HEAD without a body, and 405 to other methods', async () => {
    const head = await get('/gateway.html', { 'accept-encoding': 'br' }, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    const post = await get('/gateway.html', {}, 'POST');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });

  it.each(['/missing.html', '/../package.json', '/%2e%2e/package.json', '/.secret', '/%E0%A4%A'])('answers 404 to %s, naming the path', async (path) => {
    const answer = await get(path);
    expect(answer.status).toBe(404);
    expect(answer.body.toString()).toMatch(/^Not found: \//);
    expect(answer.body.toString()).not.toContain('not for the web');
  });
});
