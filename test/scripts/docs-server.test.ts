/**
 * The docs server (scripts/docs-server.ts, sirv) with the build's precompressed copies
 * (scripts/docs-compress.ts): a browser that accepts Brotli gets the `.br` copy, one that accepts
 * only gzip the `.gz` one, one that accepts neither the page itself, each with a validator that a
 * second request turns into a 304; a file named by its content hash is kept a year, `immutable`.
 * Only GET and HEAD are served, and nothing outside the site.
 * Under /sandbox/ the try-it console's requests go on to a sandbox, signed with its test key.
 * Every server takes a free port.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeHashedAsset } from '../../scripts/docs-assets.js';
import { precompress } from '../../scripts/docs-compress.js';
import { serveDocs, type DocsServer } from '../../scripts/docs-server.js';
import { TEST_CREDENTIALS } from '../../src/sandbox/fixtures.js';
import { verifySdkSignature, verifyWebSignature } from '../../src/signature.js';

let dir: string;
let server: DocsServer;
/** A shared script under its hashed name (`assets/redoc.<hash>.js`). */
let script: string;
const scriptText = `export function hydrate() {}\n${'// the bundle\n'.repeat(300)}`;
const page = `<!doctype html><title>reference</title>\n${'<p>A paragraph of the reference, repeated.</p>\n'.repeat(2000)}`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'paylater-docs-server-'));
  mkdirSync(join(dir, 'openapi'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>home</title>\n');
  writeFileSync(join(dir, 'gateway.html'), page);
  writeFileSync(join(dir, 'openapi', 'gateway.json'), JSON.stringify({ openapi: '3.1.1', padding: 'x'.repeat(5000) }));
  writeFileSync(join(dir, '.secret'), 'not for the web');
  mkdirSync(join(dir, 'assets', 'diagrams'), { recursive: true });
  writeFileSync(join(dir, 'assets', 'diagrams', '1ee3405f83e1b591.svg'), '<svg/>');
  writeFileSync(join(dir, 'assets', 'site.svg'), '<svg/>');
  script = writeHashedAsset(dir, 'redoc.js', scriptText);
  mkdirSync(join(dir, 'assets', 'scalar'));
  writeFileSync(join(dir, 'assets', 'scalar', 'standalone.0123456789abcdef.js'), 'Scalar;');
  const written = await precompress(dir);
  expect(written.map((f) => f.file.slice(dir.length)).sort()).toEqual([`/${script}`, '/gateway.html', '/openapi/gateway.json']);
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

  it('answers 304 to an If-Modified-Since not older than the file, and 200 to an older one', async () => {
    const first = await get('/gateway.html');
    const modified = String(first.headers['last-modified']);
    expect(Date.parse(modified)).not.toBeNaN();
    for (const path of ['/gateway.html', '/gateway', '/']) {
      const same = await get(path, { 'if-modified-since': path === '/' ? String((await get('/')).headers['last-modified']) : modified });
      expect([path, same.status, same.body.length]).toEqual([path, 304, 0]);
    }
    const older = await get('/gateway.html', { 'if-modified-since': new Date(Date.parse(modified) - 60_000).toUTCString() });
    expect(older.status).toBe(200);
    expect(older.body.toString()).toBe(page);
    // Not a date, or a path outside the site: answered as without the header.
    expect((await get('/gateway.html', { 'if-modified-since': 'yesterday' })).status).toBe(200);
    expect((await get('/%2e%2e/etc/hostname', { 'if-modified-since': new Date().toUTCString() })).status).toBe(404);
  });

  it('caches a file named by its content hash for a year, immutable, and the others not', async () => {
    for (const path of ['/assets/diagrams/1ee3405f83e1b591.svg', `/${script}`, '/assets/scalar/standalone.0123456789abcdef.js']) {
      const hashed = await get(path, { 'accept-encoding': 'br' });
      expect([path, hashed.status, hashed.headers['cache-control']]).toEqual([path, 200, 'public, max-age=31536000, immutable']);
    }
    expect((await get('/assets/site.svg')).headers['cache-control']).toBe('public,max-age=0,must-revalidate');
    expect((await get('/gateway.html')).headers['cache-control']).toBe('public,max-age=0,must-revalidate');
  });

  it('answers a conditional request for a hashed asset with 304, by its ETag or its date', async () => {
    const first = await get(`/${script}`, { 'accept-encoding': 'gzip, deflate, br' });
    expect(first.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(first.body).toString()).toBe(scriptText);
    const byTag = await get(`/${script}`, { 'accept-encoding': 'gzip, deflate, br', 'if-none-match': String(first.headers.etag) });
    expect([byTag.status, byTag.body.length]).toEqual([304, 0]);
    const byDate = await get(`/${script}`, { 'if-modified-since': String(first.headers['last-modified']) });
    expect([byDate.status, byDate.body.length]).toEqual([304, 0]);
    // Another file's validator is not this one's.
    expect((await get(`/${script}`, { 'accept-encoding': 'br', 'if-none-match': 'W/"1-1"' })).status).toBe(200);
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

describe('the sandbox route of the try-it console', () => {
  it('answers 503 in the error form, saying how to give a sandbox, when it has none; 404 for an unknown family', async () => {
    const none = await fetch(`${server.url}/sandbox/web/api/transaction`, { method: 'POST', body: '{}' });
    expect(none.status).toBe(503);
    expect(await none.json()).toEqual({ message: 'SANDBOX_NOT_CONFIGURED', detail: expect.stringContaining('--sandbox <url>') });
    const unknown = await fetch(`${server.url}/sandbox/other/x`);
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).message).toBe('NOT_FOUND');
  });

  it('signs web and SDK requests with the test key over the exact bytes and path sent, and passes the answer back', async () => {
    const seen: { method: string; url: string; headers: Record<string, string | string[] | undefined>; body: string }[] = [];
    const upstream = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        seen.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString() });
        response.writeHead(201, { 'Content-Type': 'application/json', 'X-Upstream': 'yes' });
        response.end('{"message":"TRANSACTION_INITIATED"}');
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const proxied = await serveDocs({ dir, port: 0, sandbox: origin });
    try {
      const body = '{"id":"web_1","amount":150000}';
      const web = await fetch(`${proxied.url}/sandbox/web/api/transaction?a=b`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Signature': 'reader-value', Cookie: 'session=1' },
        body,
      });
      expect(web.status).toBe(201);
      expect(web.headers.get('x-docs-signed')).toBe("with the sandbox's test key");
      expect(web.headers.get('x-upstream')).toBe('yes');
      expect(await web.json()).toEqual({ message: 'TRANSACTION_INITIATED' });
      const [first] = seen;
      expect(first?.url).toBe('/api/transaction?a=b');
      expect(first?.body).toBe(body);
      expect(first?.headers['x-partner-id']).toBe(TEST_CREDENTIALS.partner.id);
      expect(first?.headers.cookie).toBeUndefined();
      expect(verifyWebSignature(first?.headers['x-signature'], body, '/api/transaction?a=b', TEST_CREDENTIALS.partner.privateKey)).toBe(true);

      await fetch(`${proxied.url}/sandbox/sdk/merchant/credit/checkTransactionStatus`, { method: 'POST', headers: { 'X-Partnerid': 'p_other' }, body: '{}' });
      expect(seen[1]?.headers['x-partnerid']).toBe('p_other');
      expect(verifySdkSignature(seen[1]?.headers['x-signature'], '{}', TEST_CREDENTIALS.partner.privateKey)).toBe(true);

      // Gateway: Basic credentials as the reader gave them, no signature.
      await fetch(`${proxied.url}/sandbox/gateway/api/merchant/m_1`, { headers: { Authorization: 'Basic cGdfdGVzdDpwZ190ZXN0X3NlY3JldA==' } });
      expect(seen[2]?.headers.authorization).toBe('Basic cGdfdGVzdDpwZ190ZXN0X3NlY3JldA==');
      expect(seen[2]?.headers['x-signature']).toBeUndefined();

      // A path that starts with // stays a path of the sandbox.
      await fetch(`${proxied.url}/sandbox/gateway//evil.example/x`);
      expect(seen[3]?.url).toBe('//evil.example/x');

      const large = await fetch(`${proxied.url}/sandbox/web/api/transaction`, { method: 'POST', body: 'x'.repeat(1024 * 1024 + 1) });
      expect(large.status).toBe(413);
      expect((await large.json()).message).toBe('PAYLOAD_TOO_LARGE');
      expect(seen).toHaveLength(4);
    } finally {
      await proxied.close();
      await new Promise<void>((resolve) => upstream.close(() => resolve()));
    }
  });

  it('answers 502 naming the sandbox when it cannot be reached', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const proxied = await serveDocs({ dir, port: 0, sandbox: `http://127.0.0.1:${port}` });
    try {
      const answer = await fetch(`${proxied.url}/sandbox/extras/x`);
      expect(answer.status).toBe(502);
      expect(await answer.json()).toEqual({ message: 'SANDBOX_UNREACHABLE', detail: `The sandbox at http://127.0.0.1:${port} could not be reached; start it with \`npm start\`.` });
    } finally {
      await proxied.close();
    }
  });
});
