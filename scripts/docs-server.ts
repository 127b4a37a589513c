/**
 * A small static file server for the documentation site (site/), used by `npm run docs:serve` and
 * the browser tests. GET and HEAD only; files outside the site's folder are never served (no
 * `..`, no symbolic link leading out); every answer says its content type.
 */
import { createReadStream, existsSync, realpathSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, resolve, sep } from 'node:path';

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
  const base = realpathSync(dir);

  const server = createServer((request, response) => {
    try {
      handle(base, request, response);
    } catch {
      send(response, 500, 'Internal error.');
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

function handle(base: string, request: IncomingMessage, response: ServerResponse): void {
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.setHeader('Allow', 'GET, HEAD');
    send(response, 405, 'Only GET and HEAD are served.');
    return;
  }
  let path: string;
  try {
    path = decodeURIComponent(new URL(request.url ?? '/', 'http://localhost').pathname);
  } catch {
    send(response, 400, 'Malformed path.');
    return;
  }
  if (path.includes('\0') || path.split(/[\\/]/).includes('..')) {
    send(response, 400, 'Malformed path.');
    return;
  }
  let file = resolve(base, `.${path}`);
  if (!inside(base, file)) {
    send(response, 403, 'Forbidden.');
    return;
  }
  if (existsSync(file) && statSync(file).isDirectory()) {
    if (!path.endsWith('/')) {
      response.setHeader('Location', `${path}/`);
      send(response, 301, 'Moved.');
      return;
    }
    file = join(file, 'index.html');
  }
  if (!existsSync(file) || !statSync(file).isFile()) {
    send(response, 404, `Not found: ${path}`);
    return;
  }
  // A symbolic link inside the site must not lead out of it.
  if (!inside(base, realpathSync(file))) {
    send(response, 403, 'Forbidden.');
    return;
  }
  const size = statSync(file).size;
  response.writeHead(200, {
    'Content-Type': CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
    'Content-Length': size,
    'Cache-Control': 'no-cache',
    'X-Content-Type-Options': 'nosniff',
  });
  if (request.method === 'HEAD') {
    response.end();
    return;
  }
  createReadStream(file).pipe(response);
}

function inside(base: string, file: string): boolean {
  return file === base || file.startsWith(base.endsWith(sep) ? base : `${base}${sep}`);
}

function send(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'X-Content-Type-Options': 'nosniff',
  });
  response.end(text);
}
