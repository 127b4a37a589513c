/**
 * The references as the docs server serves them when its sandbox (`--sandbox`) is not the default
 * one: the built pages write the sandbox of `npm start`, `http://127.0.0.1:4000`, in each
 * document's Servers list and as the default of every code sample, and a reader who moved the
 * sandbox should see the address they run. For the four reference pages and the site's JSON files
 * (the documents), that address is replaced by the given one as the page is served; the files on
 * disk stay as built (the site is built once for any sandbox).
 *
 * sirv serves the files as they are (and their precompressed copies), so these answers are made
 * here: the page read once, rewritten, compressed once with Brotli at a middle quality (tens of
 * milliseconds on a reference page, where the best quality takes seconds; within a few percent of
 * the built `.br` copy) and with gzip, and kept in memory for the server's life; at most one entry
 * per reference page and document, so the memory is bounded by the site's size. Brotli is sent to
 * a client that accepts it, else gzip, else the page as it is.
 */
import { readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/** The address the built site writes for the sandbox: `npm start`'s. */
const DEFAULT_SANDBOX = 'http://127.0.0.1:4000';

/** The paths whose answers carry the sandbox's address: the references and the documents. */
const REWRITTEN = /^\/(?:(?:gateway|extras|web|sdk)(?:\.html)?|[\w/-]+\.json)$/;

interface Rewritten {
  type: string;
  body: Buffer;
  gzipped: Buffer;
  brotli: Buffer;
}

/** Brotli's quality for the rewritten pages: fast enough to make as the page is first asked for. */
const BROTLI_QUALITY = 7;

/**
 * A handler that answers the rewritten pages (true when it answered), or undefined when nothing
 * needs rewriting (no sandbox given, or the default one).
 */
export function sandboxAddressPages(dir: string, sandbox: string | undefined): ((request: IncomingMessage, response: ServerResponse) => boolean) | undefined {
  const address = sandbox?.replace(/\/+$/, '');
  if (address === undefined || address === DEFAULT_SANDBOX) return undefined;
  const cache = new Map<string, Rewritten | null>();

  const load = (pathname: string): Rewritten | null => {
    if (cache.has(pathname)) return cache.get(pathname)!;
    const file = join(dir, pathname.endsWith('.json') || pathname.endsWith('.html') ? pathname : `${pathname}.html`);
    let made: Rewritten | null = null;
    if (statSync(file, { throwIfNoEntry: false })?.isFile()) {
      const body = Buffer.from(readFileSync(file, 'utf8').replaceAll(DEFAULT_SANDBOX, address), 'utf8');
      const type = file.endsWith('.json') ? 'application/json; charset=utf-8' : 'text/html; charset=utf-8';
      const brotli = brotliCompressSync(body, {
        params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
      });
      made = { type, body, gzipped: gzipSync(body), brotli };
    }
    cache.set(pathname, made);
    return made;
  };

  return (request, response) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return false;
    const pathname = (request.url ?? '/').split('?')[0] ?? '/';
    if (!REWRITTEN.test(pathname) || pathname.includes('..')) return false;
    const page = load(pathname);
    if (page === null) return false;
    const accepted = String(request.headers['accept-encoding'] ?? '');
    const encoding = /\bbr\b/.test(accepted) ? 'br' : /\bgzip\b/.test(accepted) ? 'gzip' : undefined;
    const body = encoding === 'br' ? page.brotli : encoding === 'gzip' ? page.gzipped : page.body;
    response.writeHead(200, {
      'Content-Type': page.type,
      'Content-Length': body.length,
      'Cache-Control': 'no-cache',
      Vary: 'Accept-Encoding',
      'X-Content-Type-Options': 'nosniff',
      ...(encoding === undefined ? {} : { 'Content-Encoding': encoding }),
    });
    response.end(request.method === 'HEAD' ? undefined : body);
    return true;
  };
}
