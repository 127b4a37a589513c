/**
 * {@link createWebhookHandler}: the webhook verification (./verify.ts) as a Node `(req, res)`
 * handler for `http.createServer` or Express. 200 once `onEvent` has resolved, 401 for a missing
 * or bad signature, 400 for the other failures, 500 when `onEvent` throws (so that the service
 * tries again). Bodies are `{ "error": "<reason>", "message": "<what was wrong>" }`: the
 * reason as a code, and for a refused request the verification's own sentence, which says what to
 * fix and never holds the secret (it names headers, sizes and schema paths). What `onEvent` threw,
 * an error message or a stack never goes into a response: a 500 carries the code alone.
 *
 * It reads the raw body (the signature covers the exact bytes) with src/http's reader and its size
 * limit, or takes a body a raw or text parser already read (`req.body`).
 *
 * ```ts
 * import { createServer } from 'node:http';
 * import { createWebhookHandler } from 'paylater-api/webhooks';
 *
 * createServer(createWebhookHandler({
 *   family: 'sdk',
 *   secret: process.env.PAYLATER_PRIVATE_KEY!,
 *   onEvent: async ({ eventId, payload }) => {
 *     await queue.add({ eventId, ...payload }); // record it; do the slow work afterwards
 *   },
 * })).listen(8080);
 *
 * // Express: mount it without a JSON body parser in front, or with express.raw():
 * app.post('/paylater/webhook', express.raw({ type: 'application/json' }), handler);
 * ```
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { types } from 'node:util';
import { readBody } from '../http/body.js';
import { sendBody } from '../http/send.js';
import { compileWebhooks } from './contract.js';
import {
  describe,
  isWebhookFamily,
  maxBodyBytes,
  quote,
  verifyWebhook,
  WebhookVerificationError,
  type RawWebhookBody,
  type VerifiedWebhook,
  type WebhookFamily,
} from './verify.js';

export interface WebhookHandlerOptions<F extends WebhookFamily> {
  family: F;
  /** The private key (sdk, web) or the merchant's Transactional API password (gateway). */
  secret: string;
  /**
   * Called once per verified request; the answer is 200 when it resolves and 500 when it throws
   * (the service then tries again). Keep it quick: record the event, work afterwards.
   */
  onEvent: (event: VerifiedWebhook<F>) => unknown;
  /** Default 1 MiB; a longer body is not read further and is answered 400 `payload_too_large`. */
  maxBodyBytes?: number;
  /**
   * Told about every request that is not answered 200: a {@link WebhookVerificationError}, a
   * {@link WebhookRawBodyError}, or what `onEvent` threw. Default: everything but a
   * {@link WebhookVerificationError} (refused requests, which anyone can send) goes to
   * `console.error`.
   */
  onError?: (error: unknown) => void;
}

/** A Node request handler, for `http.createServer(handler)` or `app.post(path, handler)`. */
export type WebhookRequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * The handler found the body already consumed, e.g. parsed by `express.json()`: the signature
 * covers the exact bytes, which are gone. Answered 400 `raw_body_required`.
 */
export class WebhookRawBodyError extends Error {
  override readonly name = 'WebhookRawBodyError';
}

/**
 * The answer header that names the family a handler verifies (`sdk`, `web` or `gateway`), on every
 * answer: `paylater listen` reads it from its first request to learn which events to forward.
 */
export const FAMILY_HEADER = 'Paylater-Webhook-Family';

/** Creates a Node handler that verifies every request as `family` and passes it to `onEvent`. */
export function createWebhookHandler<F extends WebhookFamily>(
  options: WebhookHandlerOptions<F>,
): WebhookRequestHandler {
  const { family, secret, onEvent } = options;
  if (!isWebhookFamily(family)) {
    throw new TypeError(`family must be sdk, web or gateway (got ${typeof family === 'string' ? quote(family) : describe(family)})`);
  }
  if (typeof secret !== 'string' || secret.length === 0) {
    throw new TypeError('secret must be a non-empty string');
  }
  if (typeof onEvent !== 'function') throw new TypeError('onEvent must be a function');
  const limit = maxBodyBytes(options.maxBodyBytes);
  // Compiled now rather than on the first delivery: a missing document fails here, and the first
  // webhook is answered as quickly as the others.
  compileWebhooks(family);
  const report =
    options.onError ??
    ((error: unknown) => {
      if (!(error instanceof WebhookVerificationError)) console.error('paylater webhook:', error);
    });
  const tell = (error: unknown): void => {
    try {
      report(error);
    } catch {
      // A failing logger must not change the answer.
    }
  };

  /**
   * The answer to one request: its status, error code and what was wrong (none with 200);
   * undefined when nobody is left to answer.
   */
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<[number, string?, string?] | undefined> {
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      return [405, 'method_not_allowed', `a webhook is sent with POST (got ${quote(req.method ?? '')})`];
    }
    const body = await readRawBody(req, limit);
    if (body === 'aborted') return undefined; // the sender went away: nobody to answer
    if (body === 'too_large') {
      const error = new WebhookVerificationError('payload_too_large', `the body is longer than the limit of ${limit} bytes`);
      tell(error);
      // Stop reading: the rest of the body is not wanted, and the connection is closed after the answer.
      res.setHeader('Connection', 'close');
      return [400, error.reason, error.message];
    }
    if (body === 'consumed') {
      const error = new WebhookRawBodyError(
        'the request body was already read, probably parsed by a JSON body parser: the signature covers ' +
          "the exact bytes received, so mount express.raw({ type: 'application/json' }) on the webhook " +
          'route, or no body parser at all',
      );
      tell(error);
      return [400, 'raw_body_required', error.message];
    }
    let event: VerifiedWebhook<F>;
    try {
      event = verifyWebhook(family, body, req.headers, secret, { maxBodyBytes: limit });
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      tell(error);
      const unauthorized = error.reason === 'missing_signature' || error.reason === 'bad_signature';
      return [unauthorized ? 401 : 400, error.reason, error.message];
    }
    try {
      await onEvent(event);
    } catch (error) {
      tell(error);
      return [500, 'handler_failed'];
    }
    return [200];
  }

  return (req, res) => {
    // Which family this receiver verifies, so that `paylater listen` forwards that family's events
    // only (a family's name is no secret: the contract publishes all three).
    res.setHeader(FAMILY_HEADER, family);
    handle(req, res)
      .then((answered) => answered !== undefined && answer(res, ...answered))
      .catch((error: unknown) => {
        tell(error);
        answer(res, 500, 'internal_error');
      });
  };
}

/**
 * The raw body: `req.body` when a raw or text parser left it, else read from the stream with the
 * project's one body reader (src/http/body.ts), which stops keeping bytes past the limit.
 */
async function readRawBody(
  req: IncomingMessage & { body?: unknown; _body?: unknown },
  limit: number,
): Promise<RawWebhookBody | 'too_large' | 'consumed' | 'aborted'> {
  const preset = req.body;
  if (typeof preset === 'string' || types.isUint8Array(preset)) return preset;
  if (req.readableEnded || req._body === true) return 'consumed';
  const read = await readBody(req, limit);
  if (read.ok) return read.body;
  if (read.reason === 'aborted') return 'aborted';
  // Not read further: the rest of the body is not wanted, and the connection closes after the answer.
  req.pause();
  return 'too_large';
}

/** Sends `{ error, message }` (or `{ received: true }`) by src/http's rule; ends an answer already under way. */
function answer(res: ServerResponse, status: number, error?: string, message?: string): void {
  if (res.headersSent && !res.writableEnded && !res.destroyed) res.end();
  sendBody(res, status, error === undefined ? { received: true } : message === undefined ? { error } : { error, message });
}

