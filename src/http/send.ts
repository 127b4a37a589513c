/**
 * Sending an answer: the body as bytes with its `Content-Length`, JSON by default, never cached.
 * Does nothing when the answer is already under way or the connection is gone. JSON kept as text
 * (raw-json.ts) is written as it is.
 */
import type { ServerResponse } from 'node:http';
import { stringifyJson } from './raw-json.js';

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** One more header of an answer, beside its own (the sandbox's request id). */
export interface ExtraHeader {
  name: string;
  value: string;
}

/**
 * Writes status, headers and body. A string or bytes are sent as they are when `headers` name a
 * Content-Type; anything else (when not undefined) is sent as JSON. `extra` is one more header.
 * The headers go to `writeHead` in one object, none set before: Node then stores them as given
 * rather than one `setHeader` at a time.
 */
export function sendBody(response: ServerResponse, status: number, body: unknown, headers?: Record<string, string>, extra?: ExtraHeader): void {
  if (response.headersSent || response.destroyed) return;
  const all: Record<string, string> = { 'Cache-Control': 'no-store' };
  let explicitType = false;
  if (headers !== undefined) {
    for (const name in headers) {
      all[name] = headers[name]!;
      if (!explicitType && name.length === 12 && name.toLowerCase() === 'content-type') explicitType = true;
    }
  }
  if (extra !== undefined) all[extra.name] = extra.value;
  let payload: string | Buffer = '';
  if (explicitType && (typeof body === 'string' || Buffer.isBuffer(body))) {
    payload = body;
  } else if (body !== undefined) {
    payload = stringifyJson(body);
    if (!explicitType) all['Content-Type'] = JSON_CONTENT_TYPE;
  }
  all['Content-Length'] = typeof payload === 'string' ? String(Buffer.byteLength(payload)) : String(payload.length);
  response.writeHead(status, all);
  response.end(payload);
}
