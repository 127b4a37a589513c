/**
 * One HTTP/1.1 request with exactly the given header names (their case and order kept) and body
 * bytes, as an integration written in another language sends it. `fetch` cannot do this: it
 * lowercases header names and refuses some of them.
 *
 * Node's `http` adds only what every HTTP library adds: `Host`, `Connection: close`, and
 * `Content-Length` when there is a body and the caller gave none (PHP's cURL and WordPress send
 * one too; without it Node would switch to chunked encoding, which those clients never use).
 * Redirects are not followed: the answer is what the server said.
 */
import { request as httpRequest } from 'node:http';

export interface RawRequest {
  /** Absolute http:// URL; its path and query are sent byte for byte. */
  url: string;
  method: string;
  /** Name and value pairs, in order, names in the case they are sent. */
  headers: ReadonlyArray<readonly [string, string]>;
  body?: Buffer;
  timeoutMs?: number;
}

export interface RawAnswer {
  status: number;
  /** Header names lowercased. */
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * Sends the request and resolves with the answer; rejects on a network error or after
 * `timeoutMs` (default 10 s) with a message that names the request.
 */
export function sendRaw(raw: RawRequest): Promise<RawAnswer> {
  const url = new URL(raw.url);
  if (url.protocol !== 'http:') throw new Error(`sendRaw: only http:// URLs are supported, got ${raw.url}`);
  const headers: Record<string, string> = {};
  const seen = new Set<string>();
  for (const [name, value] of raw.headers) {
    const lower = name.toLowerCase();
    if (seen.has(lower)) throw new Error(`sendRaw: header ${name} given twice`);
    seen.add(lower);
    headers[name] = value;
  }
  if (raw.body !== undefined && !seen.has('content-length')) headers['Content-Length'] = String(raw.body.length);
  // A path with bytes `URL` would re-encode is sent as given: take it from the original string.
  const pathAt = raw.url.indexOf('/', url.protocol.length + 2);
  const path = pathAt < 0 ? '/' : raw.url.slice(pathAt).replace(/#.*$/, '');
  return new Promise<RawAnswer>((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port === '' ? 80 : Number(url.port),
        method: raw.method,
        path,
        headers,
        agent: false,
        timeout: raw.timeoutMs ?? 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${raw.method} ${raw.url}: no answer within ${raw.timeoutMs ?? 10_000} ms`)));
    req.on('error', (error) => reject(new Error(`${raw.method} ${raw.url}: ${error.message}`)));
    req.end(raw.body);
  });
}
