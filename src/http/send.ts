/**
 * Sending an answer: the body as bytes with its `Content-Length`, JSON by default, never cached.
 * Does nothing when the answer is already under way or the connection is gone. JSON kept as text
 * (raw-json.ts) is written as it is. A large answer waits for its turn: one is written per turn of
 * the event loop, so that other requests are answered between them.
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
 * rather than one `setHeader` at a time. Returns what is sent (the JSON text, for a caller that
 * keeps it; a large answer is written in a later turn), or undefined when nothing is.
 */
export function sendBody(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers?: Record<string, string>,
  extra?: ExtraHeader,
): string | Buffer | undefined {
  if (response.headersSent || response.destroyed) return undefined;
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
  if (typeof payload === 'string' && payload.length >= LARGE_ANSWER) {
    large.push({ response, status, headers: all, payload });
    if (large.length === 1) setImmediate(writeLarge);
    return payload;
  }
  write(response, status, all, payload);
  return payload;
}

/**
 * Answers of at least this many characters are written one per turn of the event loop: encoding
 * one (a page of pushed data, a transaction with 1 MiB of notes) takes a few milliseconds, and 25
 * asked at once would otherwise hold every other request for all of them together.
 */
const LARGE_ANSWER = 256 * 1024;
const large: { response: ServerResponse; status: number; headers: Record<string, string>; payload: string }[] = [];
let nextLarge = 0;

/** Writes the oldest waiting large answer, and comes back in the next turn for the next one. */
function writeLarge(): void {
  const next = large[nextLarge];
  if (next === undefined) return;
  large[nextLarge++] = undefined as never;
  if (nextLarge === large.length) {
    large.length = 0;
    nextLarge = 0;
  } else {
    setImmediate(writeLarge);
  }
  if (!next.response.headersSent && !next.response.destroyed) write(next.response, next.status, next.headers, next.payload);
}

function write(response: ServerResponse, status: number, headers: Record<string, string>, payload: string | Buffer): void {
  headers['Content-Length'] = typeof payload === 'string' ? String(Buffer.byteLength(payload)) : String(payload.length);
  response.writeHead(status, headers);
  response.end(payload);
}
