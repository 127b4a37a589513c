/**
 * The docs server's route to the local sandbox, for the try-it console (site/console.html):
 * `/sandbox/<family>/<path>?<query>` is sent on to `<sandbox>/<path>?<query>` and the answer comes
 * back as it is. The console's page then calls its own origin (the sandbox promises no CORS, D40,
 * and the page's policy allows only its origin), and the web and SDK requests are signed here,
 * with the sandbox's test key (src/sandbox/fixtures.ts), so that the reader never handles a key
 * and no real key is ever involved: `X-Signature` is always computed here, over the exact bytes
 * and path sent, and the test partner id is added when the request has none (or an empty one). The answer says so
 * in `X-Docs-Signed`.
 *
 * Bounded: a request body is read up to the sandbox's own limit (1 MiB; more answers 413), an
 * answer up to 16 MiB, and the sandbox has 30 s to answer. Errors are JSON in the contract's
 * error form (`message`, `detail`), never a stack trace. Hand-written over Node's http and fetch:
 * the signing needs the whole body before the request leaves, which a streaming proxy library
 * (http-proxy) does not offer without buffering it the same way.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sdkSignature, webSignature } from '../src/signature.js';
import { TEST_CREDENTIALS } from '../src/sandbox/fixtures.js';
import { FAMILIES, type Family } from './families.js';

export const SANDBOX_ROUTE = '/sandbox/';
const MAX_REQUEST_BYTES = 1024 * 1024;
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;
const TIMEOUT_MS = 30_000;

/** Request headers not passed on: the connection's own, and what identifies the reader's browser. */
const DROPPED_REQUEST_HEADERS = new Set([
  'host', 'connection', 'keep-alive', 'content-length', 'transfer-encoding', 'upgrade', 'te', 'trailer',
  'proxy-authorization', 'cookie', 'origin', 'referer', 'accept-encoding', 'x-signature',
]);
const DROPPED_ANSWER_HEADERS = new Set(['connection', 'keep-alive', 'content-length', 'transfer-encoding', 'content-encoding', 'set-cookie']);

function fail(response: ServerResponse, status: number, message: string, detail: string): void {
  const body = JSON.stringify({ message, detail });
  response.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'X-Content-Type-Options': 'nosniff' });
  response.end(body);
}

function readBody(request: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) {
        request.pause();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    request.once('end', () => resolve(Buffer.concat(chunks)));
    request.once('error', reject);
  });
}

/** Handles a request under {@link SANDBOX_ROUTE}; `sandbox` is the sandbox's base URL, if any. */
export async function proxyToSandbox(request: IncomingMessage, response: ServerResponse, sandbox: string | undefined): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://docs.invalid');
  const [, , family, ...rest] = url.pathname.split('/');
  if (!FAMILIES.includes(family as Family)) {
    fail(response, 404, 'NOT_FOUND', `The sandbox route is /sandbox/<family>/<path>, with a family of ${FAMILIES.join(', ')}.`);
    return;
  }
  if (sandbox === undefined) {
    fail(response, 503, 'SANDBOX_NOT_CONFIGURED', 'This docs server sends no request to a sandbox: start it with --sandbox <url> (npm run docs:serve -- --sandbox http://127.0.0.1:4000).');
    return;
  }
  const body = await readBody(request);
  if (body === undefined) {
    fail(response, 413, 'PAYLOAD_TOO_LARGE', `The body is larger than ${MAX_REQUEST_BYTES} bytes, the sandbox's limit.`);
    return;
  }
  const pathAndQuery = `/${rest.join('/')}${url.search}`;
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || DROPPED_REQUEST_HEADERS.has(name)) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  let signed = 'no';
  if (family === 'web' || family === 'sdk') {
    const partnerHeader = family === 'web' ? 'x-partner-id' : 'x-partnerid';
    // Absent or left empty in the console: the sandbox's test partner.
    if (!headers.get(partnerHeader)?.trim()) headers.set(partnerHeader, TEST_CREDENTIALS.partner.id);
    const key = TEST_CREDENTIALS.partner.privateKey;
    headers.set('x-signature', family === 'web' ? webSignature(body, pathAndQuery, key) : sdkSignature(body, key));
    signed = "with the sandbox's test key";
  }
  const method = request.method ?? 'GET';
  let answer: Response;
  try {
    // The origin and the path joined as text: a path that starts with `//` stays a path of the sandbox.
    answer = await fetch(`${new URL(sandbox).origin}${pathAndQuery}`, {
      method,
      headers,
      ...(method === 'GET' || method === 'HEAD' ? {} : { body: new Uint8Array(body) }),
      redirect: 'manual',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    const reason = (error as Error).name === 'TimeoutError' ? `did not answer within ${TIMEOUT_MS / 1000} s` : 'could not be reached';
    fail(response, 502, 'SANDBOX_UNREACHABLE', `The sandbox at ${new URL(sandbox).origin} ${reason}; start it with \`npm start\`.`);
    return;
  }
  const declared = Number(answer.headers.get('content-length') ?? '0');
  if (declared > MAX_ANSWER_BYTES) {
    await answer.body?.cancel();
    fail(response, 502, 'ANSWER_TOO_LARGE', `The sandbox's answer is larger than ${MAX_ANSWER_BYTES} bytes.`);
    return;
  }
  const bytes = Buffer.from(await answer.arrayBuffer());
  const out: Record<string, string> = { 'X-Docs-Signed': signed, 'Content-Length': String(bytes.length) };
  answer.headers.forEach((value, name) => {
    if (!DROPPED_ANSWER_HEADERS.has(name)) out[name] = value;
  });
  response.writeHead(answer.status, out);
  response.end(method === 'HEAD' ? undefined : bytes);
}
