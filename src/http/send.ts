/**
 * Sending an answer: the body as bytes with its `Content-Length`, JSON by default, never cached.
 * Does nothing when the answer is already under way or the connection is gone. JSON kept as text
 * (raw-json.ts) is written as it is. A large answer is written in pieces of 64 KiB, a few per turn
 * of the event loop over all the large answers under way (and after a `drain` of a full socket),
 * so that other requests are answered between them. Hand-written rather than piped through a stream: `Readable.from` of the pieces would yield
 * between them too, but adds a stream object and a microtask chain per answer for what these few
 * lines of `write` and `drain` already do. A body may also be given as its parts ({@link TextParts}:
 * a page of kept texts of 1 MiB each), written one after the other and never joined: joining them
 * copied every text into one string, and measuring that string's bytes read it again, for each of
 * the answers asked at once, in the turn that built them.
 */
import type { ServerResponse } from 'node:http';
import Queue from 'yocto-queue';
import { stringifyJson } from './raw-json.js';

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** One more header of an answer, beside its own (the sandbox's request id). */
export interface ExtraHeader {
  name: string;
  value: string;
}

/**
 * An answer's body as the texts it is made of, in order: written one after the other, in pieces of
 * at most {@link PIECE} characters when large, and never joined into one string. Its bytes (UTF-8)
 * are counted once, when first asked.
 */
export class TextParts {
  /** Characters over all the parts. */
  readonly length: number;

  /** `bytes`, when the caller knows them (kept texts measured when kept), saves reading the parts again. */
  constructor(
    readonly parts: readonly string[],
    private byteCount?: number,
  ) {
    let length = 0;
    for (const part of parts) length += part.length;
    this.length = length;
  }

  /** The UTF-8 bytes of all the parts. */
  get bytes(): number {
    if (this.byteCount === undefined) {
      let bytes = 0;
      for (const part of this.parts) bytes += Buffer.byteLength(part, 'utf8');
      this.byteCount = bytes;
    }
    return this.byteCount;
  }
}

/**
 * Writes status, headers and body. A string, bytes or {@link TextParts} are sent as they are when `headers` name a
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
): string | Buffer | TextParts | undefined {
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
  if (explicitType && body instanceof TextParts) {
    if (body.length >= LARGE_ANSWER) writeInPieces(response, status, all, body.parts, body.bytes);
    else write(response, status, all, body.parts.join(''));
    return body;
  }
  if (explicitType && (typeof body === 'string' || Buffer.isBuffer(body))) {
    payload = body;
  } else if (body !== undefined) {
    payload = stringifyJson(body);
    if (!explicitType) all['Content-Type'] = JSON_CONTENT_TYPE;
  }
  if (payload.length >= LARGE_ANSWER) {
    writeInPieces(response, status, all, [payload], byteLength(payload));
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
 * The characters (or bytes) of a large answer written at once: encoding and copying 64 KiB
 * takes well under a millisecond.
 */
const PIECE = 64 * 1024;

/**
 * Pieces written in one turn of the event loop, over all the large answers under way, taken round
 * robin: 25 answers of 1 MiB asked at once, a piece each per turn, encoded 1.6 MB a turn (20 to
 * 30 ms on the shared machine); four pieces leave room for every other request between them.
 */
const PIECES_PER_TURN = 4;

/** The large answers with a piece to write, in turn; served {@link PIECES_PER_TURN} a turn. */
const writing = new Queue<() => void>();
let writingScheduled = false;

function writeLater(next: () => void): void {
  writing.enqueue(next);
  if (writingScheduled) return;
  writingScheduled = true;
  setImmediate(writePieces);
}

/** One turn's pieces: of the answers waiting when it starts, at most one piece each (an answer written now waits for the next turn). */
function writePieces(): void {
  writingScheduled = false;
  const count = Math.min(PIECES_PER_TURN, writing.size);
  for (let index = 0; index < count; index++) writing.dequeue()!();
  if (writing.size > 0 && !writingScheduled) {
    writingScheduled = true;
    setImmediate(writePieces);
  }
}

/**
 * Writes the head now (so the answer counts as sent) and the body from the next turn on, one
 * {@link PIECE} at a time in its turn among the large answers under way ({@link PIECES_PER_TURN} a
 * turn), waiting for `drain` when the socket's buffer is full (a client reading slowly
 * holds only its own answer back, and nothing piles up in memory but the payload itself). Stops
 * when the connection is gone. `parts` are written in order, small ones together in one piece. A
 * piece of text never ends between the two halves of a surrogate pair, which encoded apart would
 * each become U+FFFD.
 */
function writeInPieces(
  response: ServerResponse,
  status: number,
  headers: Record<string, string>,
  parts: readonly (string | Buffer)[],
  bytes: number,
): void {
  headers['Content-Length'] = String(bytes);
  response.writeHead(status, headers);
  let index = 0;
  let offset = 0;
  const advance = (end: number, length: number): void => {
    if (end >= length) {
      index++;
      offset = 0;
    } else {
      offset = end;
    }
  };
  /** The next piece: up to {@link PIECE} characters from where the last one ended (or bytes, of a body given as bytes). */
  const take = (): string | Buffer => {
    const first = parts[index];
    if (first === undefined) return '';
    if (typeof first !== 'string') {
      const end = Math.min(offset + PIECE, first.length);
      const bytes = first.subarray(offset, end);
      advance(end, first.length);
      return bytes;
    }
    let piece = '';
    while (index < parts.length && piece.length < PIECE) {
      const part = parts[index]!;
      if (typeof part !== 'string') break;
      let end = Math.min(offset + PIECE - piece.length, part.length);
      if (end < part.length && isHighSurrogate(part.charCodeAt(end - 1))) end--;
      // One character of room left, the first half of a pair: the pair goes in the next piece.
      if (end === offset) break;
      piece += part.slice(offset, end);
      advance(end, part.length);
    }
    return piece;
  };
  const next = (): void => {
    if (response.destroyed || response.writableEnded) return;
    const piece = take();
    if (index >= parts.length) {
      response.end(piece);
    } else if (response.write(piece)) {
      writeLater(next);
    } else {
      response.once('drain', () => writeLater(next));
    }
  };
  writeLater(next);
}

function byteLength(payload: string | Buffer): number {
  return typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function write(response: ServerResponse, status: number, headers: Record<string, string>, payload: string | Buffer): void {
  headers['Content-Length'] = String(byteLength(payload));
  response.writeHead(status, headers);
  response.end(payload);
}
