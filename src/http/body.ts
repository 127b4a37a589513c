/**
 * The request body, read with a size limit.
 *
 * Hand-written rather than taken from `raw-body` or fastify's content-type parser: the sandbox and
 * the webhook handler need three outcomes a library folds together (the bytes; too large, decided
 * from `Content-Length` before anything is read or as soon as the limit is passed, without keeping
 * what came after; the client went away), and the rest is a few lines over Node's stream events.
 */
import type { IncomingMessage } from 'node:http';

export type BodyRead = { ok: true; body: Buffer } | { ok: false; reason: 'too-large' | 'aborted' };

/** The two failures, made once: every read that fails gives one of these (callers only read them). */
const TOO_LARGE: BodyRead = Object.freeze({ ok: false, reason: 'too-large' });
const ABORTED: BodyRead = Object.freeze({ ok: false, reason: 'aborted' });

/** After an answer that does not read the body, at most this much more is thrown away before the connection is cut. */
const DISCARD_LIMIT = 16 * 1024 * 1024;

/**
 * Reads the body up to `limit` bytes. A declared `Content-Length` over the limit fails at once;
 * past the limit the bytes read are dropped and the read stops. A client that goes away mid-body
 * gives `aborted`: nobody is left to answer.
 */
export function readBody(request: IncomingMessage, limit: number): Promise<BodyRead> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve(TOO_LARGE);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    // The listeners stay until the request is done: an 'error' without a listener would throw.
    let settled = false;
    const settle = (read: BodyRead): void => {
      if (settled) return;
      settled = true;
      chunks.length = 0;
      resolve(read);
    };
    request.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > limit) settle(TOO_LARGE);
      else chunks.push(chunk);
    });
    request.on('end', () => {
      // One chunk (the usual small body) is its own buffer, given as is: no copy.
      if (!settled) settle({ ok: true, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) });
    });
    const aborted = (): void => settle(ABORTED);
    request.on('error', aborted);
    request.on('close', aborted);
  });
}

/**
 * The body, read at once, when the parser already holds all of it (`complete`, nothing read yet):
 * a pipelined request whose body came in the same read as its head, taken after the requests
 * before it. `undefined` while it is still arriving, or when it is over `limit` ({@link readBody}
 * answers both). The stream's own 'end' follows on the next tick, as after any read.
 */
export function bufferedBody(request: IncomingMessage, limit: number): Buffer | undefined {
  if (!request.complete || request.readableFlowing !== null || request.readableLength > limit) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for (let chunk = request.read() as Buffer | null; chunk !== null; chunk = request.read() as Buffer | null) {
    chunks.push(chunk);
    size += chunk.length;
  }
  request.on('error', ignore);
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
}

/** An 'error' of a request whose body was read: nobody waits for it, and without a listener it would throw. */
function ignore(): void {}

/** Reads and throws away a body nobody needs, without keeping it; cuts the connection past {@link DISCARD_LIMIT}. */
export function discardBody(request: IncomingMessage): void {
  if (request.readableEnded) return;
  let discarded = 0;
  request.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > DISCARD_LIMIT) request.socket.destroy();
  });
  request.resume();
}
