/**
 * Sending an answer: the body as bytes with its `Content-Length`, JSON by default, never cached.
 * Does nothing when the answer is already under way or the connection is gone.
 */
import type { ServerResponse } from 'node:http';

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Writes status, headers and body. A string or bytes are sent as they are when `headers` name a
 * Content-Type; anything else (when not undefined) is sent as JSON.
 */
export function sendBody(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (response.headersSent || response.destroyed) return;
  const all: Record<string, string> = { 'Cache-Control': 'no-store', ...headers };
  let payload: string | Buffer = '';
  const explicitType = Object.keys(all).some((name) => name.toLowerCase() === 'content-type');
  if (explicitType && (typeof body === 'string' || Buffer.isBuffer(body))) {
    payload = body;
  } else if (body !== undefined) {
    payload = JSON.stringify(body);
    if (!explicitType) all['Content-Type'] = JSON_CONTENT_TYPE;
  }
  all['Content-Length'] = String(Buffer.byteLength(payload));
  response.writeHead(status, all);
  response.end(payload);
}
