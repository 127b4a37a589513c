/**
 * Sending an answer: the body as bytes with its `Content-Length`, JSON by default, never cached.
 * Does nothing when the answer is already under way or the connection is gone. JSON kept as text
 * (raw-json.ts) is written as it is. A large answer is written in pieces of 64 KiB, one per turn
 * of the event loop (or per `drain` of a full socket), so that other requests are answered between
 * them. Hand-written rather than piped through a stream: `Readable.from` of the pieces would yield
 * between them too, but adds a stream object and a microtask chain per answer for what these few
 * lines of `write` and `drain` already do.
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
 * keeps it; a large answer is written in later turns), or undefined when nothing is.
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
  if (payload.length >= LARGE_ANSWER) {
    writeInPieces(response, status, all, payload);
    return payload;
  }
  write(response, status, all, payload);
  return payload;
}

/**
 * Answers of at least this many characters (or bytes) are written in pieces, from the next turn of
 * the event loop: a page of pushed data or a transaction with 1 MiB of notes, written to the socket
 * in one call, held every other request for the whole encoding and copy (and 25 asked at once for
 * all of them together).
 */
const LARGE_ANSWER = 256 * 1024;

/**
 * The characters (or bytes) of a large answer written in one turn: encoding and copying 64 KiB
 * takes well under a millisecond, so answers written side by side, one piece each per turn, leave
 * room for every other request between their pieces.
 */
const PIECE = 64 * 1024;

/**
 * Writes the head now (so the answer counts as sent) and the body from the next turn on, one
 * {@link PIECE} per turn, or per `drain` when the socket's buffer is full (a client reading slowly
 * holds only its own answer back, and nothing piles up in memory but the payload itself). Stops
 * when the connection is gone. A piece of text never ends between the two halves of a surrogate
 * pair, which encoded apart would each become U+FFFD.
 */
function writeInPieces(response: ServerResponse, status: number, headers: Record<string, string>, payload: string | Buffer): void {
  headers['Content-Length'] = typeof payload === 'string' ? String(Buffer.byteLength(payload)) : String(payload.length);
  response.writeHead(status, headers);
  let offset = 0;
  const next = (): void => {
    if (response.destroyed || response.writableEnded) return;
    let end = Math.min(offset + PIECE, payload.length);
    if (typeof payload === 'string' && end < payload.length && isHighSurrogate(payload.charCodeAt(end - 1))) end--;
    const piece = typeof payload === 'string' ? payload.slice(offset, end) : payload.subarray(offset, end);
    offset = end;
    if (offset >= payload.length) {
      response.end(piece);
    } else if (response.write(piece)) {
      setImmediate(next);
    } else {
      response.once('drain', next);
    }
  };
  setImmediate(next);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function write(response: ServerResponse, status: number, headers: Record<string, string>, payload: string | Buffer): void {
  headers['Content-Length'] = typeof payload === 'string' ? String(Buffer.byteLength(payload)) : String(payload.length);
  response.writeHead(status, headers);
  response.end(payload);
}
