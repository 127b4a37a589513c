/**
 * A local signing proxy for the workflows: `redocly respect` sends each web-flow or SDK-flow
 * request here without `X-Signature`; the proxy reads the exact bytes, signs them with
 * `src/signature.ts` (web: body + path and query as the server receives them + key; SDK: body +
 * key) and forwards the request to the server, then hands the answer back unchanged. The Arazzo
 * documents stay plain Arazzo and the private key never leaves this process.
 *
 * Hand-written over `node:http` and Node's own `fetch` (undici) rather than with a proxy library
 * (http-proxy-3, @fastify/http-proxy): those stream the body to the upstream as it arrives, while
 * a signature needs the whole body before the first byte goes out, so the body would have to be
 * buffered around them anyway; what is left is one `fetch` call.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from '../../src/http/body.js';
import { sendBody } from '../../src/http/send.js';
import { sdkSignature, webSignature } from '../../src/signature.js';

/** The largest body forwarded: the contract's limit (1 MiB, D24) and some room. */
const MAX_BODY_BYTES = 2 * 1024 * 1024;

/** Request headers not forwarded: hop-by-hop ones, and those fetch sets itself. */
const DROPPED_REQUEST_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'host',
  'content-length',
  'expect',
  'x-signature',
]);
/** Answer headers not handed back: fetch has decoded the body, and Node frames the answer itself. */
const DROPPED_ANSWER_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'content-encoding']);

type SignedFamily = 'web' | 'sdk';

export interface SigningProxyOptions {
  family: SignedFamily;
  /** The server's base URL for this family; a path prefix is kept and signed as part of the path. */
  upstream: string;
  privateKey: string;
}

export interface SigningProxy {
  /** `http://127.0.0.1:<port>`: the server the workflows of the family are pointed at. */
  url: string;
  /** Requests signed and forwarded so far. */
  readonly forwarded: number;
  close(): Promise<void>;
}

/** The signature of one request of the family, over the exact bytes the server receives. */
function signRequest(family: SignedFamily, body: Uint8Array, pathAndQuery: string, privateKey: string): string {
  return family === 'web' ? webSignature(body, pathAndQuery, privateKey) : sdkSignature(body, privateKey);
}

/** Starts a proxy on a free port of 127.0.0.1. */
export async function startSigningProxy(options: SigningProxyOptions): Promise<SigningProxy> {
  const upstream = new URL(options.upstream);
  const prefix = upstream.pathname.replace(/\/+$/, '');
  let forwarded = 0;

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const read = await readBody(request, MAX_BODY_BYTES);
    if (!read.ok) {
      if (read.reason === 'too-large') {
        sendBody(response, 413, { message: `signing proxy: bodies over ${MAX_BODY_BYTES} bytes are not forwarded` });
      }
      return;
    }
    const pathAndQuery = `${prefix}${request.url ?? '/'}`;
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (value === undefined || DROPPED_REQUEST_HEADERS.has(name)) continue;
      for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
    }
    headers.set('X-Signature', signRequest(options.family, read.body, pathAndQuery, options.privateKey));
    const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
    let answer: Response;
    try {
      answer = await fetch(`${upstream.origin}${pathAndQuery}`, {
        method: request.method ?? 'GET',
        headers,
        redirect: 'manual',
        ...(hasBody ? { body: new Uint8Array(read.body) } : {}),
      });
    } catch (error) {
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
      sendBody(response, 502, { message: `signing proxy: the server at ${upstream.origin} cannot be reached (${cause})` });
      return;
    }
    forwarded += 1;
    const bytes = Buffer.from(await answer.arrayBuffer());
    const out: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      if (!DROPPED_ANSWER_HEADERS.has(name)) out[name] = value;
    });
    response.writeHead(answer.status, { ...out, 'content-length': String(bytes.length) });
    response.end(bytes);
  };

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) {
        sendBody(response, 502, { message: `signing proxy: ${error instanceof Error ? error.message : String(error)}` });
      } else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get forwarded() {
      return forwarded;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
