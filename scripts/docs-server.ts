/**
 * The static server of the documentation site (site/), used by `npm run docs:serve` and the
 * browser tests. The files are served by sirv (a maintained static server): it answers with the
 * Brotli or gzip copy that `npm run docs` writes beside each page (scripts/docs-compress.ts) when
 * the browser accepts it (`Vary: Accept-Encoding`), with validators (a weak `ETag` and
 * `Last-Modified`; `If-None-Match` gets a 304, and so does an `If-Modified-Since` not older than
 * the file, which sirv leaves to its caller) and `Cache-Control: public,max-age=0,must-revalidate`
 * so that a browser asks again but downloads a page only when it changed. A file named by the hash
 * of its content (scripts/docs-assets.ts: Redoc's and Scalar's scripts, the style sheet, the search
 * index, the diagrams) never changes under its name: it is cached for a year, `immutable`, and a
 * browser does not even ask again (a conditional request for it still gets its 304).
 *
 * sirv lists the site's files once, when the server starts: only those files can be served (no
 * `..`, nothing outside the folder), and a site rebuilt while the server runs needs a restart.
 * Around it: GET and HEAD only (405 otherwise), a 404 that names the path, and every answer says
 * its content type (with its charset) and `nosniff`. Under `/sandbox/` the try-it console's calls
 * go on to a sandbox (scripts/docs-sandbox-proxy.ts), and the references name that sandbox in their
 * Servers panel and code samples (scripts/docs-sandbox-address.ts).
 */
import { existsSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, resolve, sep } from 'node:path';
import sirv from 'sirv';
import { HASHED_ASSET } from './docs-assets.js';
import { sandboxAddressPages } from './docs-sandbox-address.js';
import { proxyToSandbox, SANDBOX_ROUTE } from './docs-sandbox-proxy.js';

const root = resolve(import.meta.dirname, '..');

export const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.yaml': 'application/yaml; charset=utf-8',
  '.yml': 'application/yaml; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
};

export interface ServeOptions {
  /** The folder to serve; default site/ of this repository. */
  dir?: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 4080; 0 picks a free port. */
  port?: number;
  /**
   * The sandbox the try-it console calls (`/sandbox/<family>/...`, scripts/docs-sandbox-proxy.ts),
   * e.g. `http://127.0.0.1:4000`; without it that route answers 503 saying how to set it.
   */
  sandbox?: string;
}

export interface DocsServer {
  /** e.g. `http://127.0.0.1:4080` */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** The site cannot be served; the message says why. */
export class ServeError extends Error {
  override readonly name = 'ServeError';
}

export async function serveDocs(options: ServeOptions = {}): Promise<DocsServer> {
  const dir = resolve(options.dir ?? join(root, 'site'));
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 4080;
  if (!existsSync(join(dir, 'index.html'))) {
    throw new ServeError(`${dir} has no index.html; build the site first with \`npm run docs\`.`);
  }
  const files = sirv(dir, {
    etag: true,
    gzip: true,
    brotli: true,
    maxAge: 0,
    extensions: ['html'],
    setHeaders: (response, pathname) => {
      const type = extname(pathname) === '' ? CONTENT_TYPES['.html'] : CONTENT_TYPES[extname(pathname).toLowerCase()];
      if (type) response.setHeader('Content-Type', type);
      response.setHeader('X-Content-Type-Options', 'nosniff');
      if (HASHED_ASSET.test(pathname)) response.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    },
  });

  const withSandboxAddress = sandboxAddressPages(dir, options.sandbox);

  const server = createServer((request, response) => {
    if (request.url?.startsWith(SANDBOX_ROUTE)) {
      proxyToSandbox(request, response, options.sandbox).catch(() => {
        if (!response.headersSent) send(response, 500, 'Internal error.');
        else response.destroy();
      });
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('Allow', 'GET, HEAD');
      send(response, 405, 'Only GET and HEAD are served.');
      return;
    }
    try {
      if (withSandboxAddress?.(request, response) === true) return;
      if (notModifiedSince(request, dir)) {
        response.writeHead(304);
        response.end();
        return;
      }
      files(request, response, () => send(response, 404, `Not found: ${pathOf(request)}`));
    } catch {
      if (!response.headersSent) send(response, 500, 'Internal error.');
      else response.destroy();
    }
  });

  await new Promise<void>((resolveListen, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const choose = `choose another with --port <n> (npm run docs:serve -- --port ${port === 4080 ? 4081 : 4080}; 0 picks a free port)`;
      if (error.code === 'EADDRINUSE') reject(new ServeError(`Port ${port} is already in use on ${host}; ${choose}.`));
      else if (error.code === 'EACCES') reject(new ServeError(`Port ${port} on ${host} may not be used by this user; ${choose}.`));
      else reject(new ServeError(`Cannot listen on ${host}:${port}: ${error.message}`));
    });
    server.listen(port, host, () => resolveListen());
  });
  const actual = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${actual}`,
    port: actual,
    // Keep-alive connections would hold close() open: they are closed with the server (an answer
    // still being sent is cut short; the site is static, so a browser just asks again).
    close: () =>
      new Promise<void>((resolveClose) => {
        server.close(() => resolveClose());
        server.closeAllConnections();
      }),
  };
}

/**
 * Whether the request's `If-Modified-Since` (without `If-None-Match`, which sirv answers) is not
 * older than the file it names, looked up as sirv does (the path, then `.html`, then `index.html`),
 * never outside the site.
 */
function notModifiedSince(request: IncomingMessage, dir: string): boolean {
  const since = request.headers['if-modified-since'];
  if (since === undefined || request.headers['if-none-match'] !== undefined) return false;
  const time = Date.parse(since);
  if (Number.isNaN(time)) return false;
  let path: string;
  try {
    path = decodeURIComponent((request.url ?? '/').split('?')[0] ?? '/');
  } catch {
    return false;
  }
  const base = resolve(dir, `.${path}`);
  if (base !== dir && !base.startsWith(`${dir}${sep}`)) return false;
  for (const candidate of [base, `${base}.html`, join(base, 'index.html')]) {
    const stats = statSync(candidate, { throwIfNoEntry: false });
    if (stats?.isFile()) return Math.floor(stats.mtimeMs / 1000) * 1000 <= time;
  }
  return false;
}

/** The path asked for, as text for a message (never more than 200 characters). */
function pathOf(request: IncomingMessage): string {
  const raw = (request.url ?? '/').split('?')[0] ?? '/';
  let path = raw;
  try {
    path = decodeURIComponent(raw);
  } catch {
    // shown as sent
  }
  return path.length > 200 ? `${path.slice(0, 200)}...` : path;
}

function send(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'X-Content-Type-Options': 'nosniff',
  });
  response.end(text);
}
