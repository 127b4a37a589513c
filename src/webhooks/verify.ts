/**
 * Receiving the service's webhooks: verify the signature over the raw bytes, check the
 * Content-Type, parse, validate against the contract (./contract.ts), and hand back a typed event.
 * The package entry `paylater-api/webhooks` is ./index.ts.
 *
 * - `sdk`, {@link verifySdkWebhook}, keyed with the merchant's private key:
 *   `X-Signature` = base64(SHA-256(raw body + key)).
 * - `web`, {@link verifyWebWebhook}, keyed with the partner's private key: the same `X-Signature`,
 *   and the body's `signature` = base64(SHA-256(transactionId + status + key)), no separator.
 * - `gateway`, {@link verifyGatewayWebhook}, keyed with the merchant's Transactional API password:
 *   `X-Signature` = base64(SHA-256(raw body + password)), for `{ transaction }` and `{ refund }`.
 *
 * Each verify function takes the raw body exactly as received (a string, or better the bytes),
 * the request headers (a plain object with names in any case, Node's `IncomingHttpHeaders`, or a
 * fetch `Headers`) and the secret. It returns `{ eventId, payload }` (gateway: with `kind`
 * `transaction` or `refund`), or throws a {@link WebhookVerificationError} whose `reason` says
 * what failed. The checks run in this order, and nothing is parsed before the signature holds:
 * size (`payload_too_large`), `X-Signature` present (`missing_signature`) and matching
 * (`bad_signature`), Content-Type `application/json` (`wrong_content_type`), UTF-8 JSON
 * (`malformed_json`), the webhook's schema in the bundled document generated/openapi/<family>.json
 * and the `X-Event-Id` header's form (`invalid_payload`), and for the web flow the body's status
 * signature (`bad_signature`).
 *
 * `createWebhookHandler` (./handler.ts) wraps them in a Node `(req, res)` handler for `http.createServer`
 * or Express; its header says how it answers, with an example.
 *
 * **Replays.** The signatures carry no timestamp: a captured request verifies forever. Ignore
 * repeats (the {@link createDeduplicator} helper, or a unique key in your database) on the signed
 * pair `(merchantTransactionId, status)`, `(transactionId, status)`, `(transaction.id,
 * transaction.status)` or `(refund.transactionId, refund.id, refund.status)`; `X-Event-Id` also
 * identifies an event across retries, but it is not covered by the signature. Treat a webhook as a
 * hint and confirm with a status read before shipping goods or moving money.
 *
 * **Retries.** Any answer other than 200 (SDK) or 2xx or 3xx (web, gateway; a redirect is not
 * followed), or none within 10 s, makes the service try again: at most 6 attempts, at once and then 30 s, 2 min, 10 min, 1 h and
 * 6 h after the previous failure. Answer quickly; `onEvent` should record the event and return.
 *
 * docs/webhooks.md has the full guide.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ErrorObject } from 'ajv/dist/2020.js';
import { types } from 'node:util';
import { isObject, isWebhookFamily, WEBHOOK_FAMILIES, webhookEvents, type ContractOperation, type WebhookEvent } from '../contract/index.js';
import type { WebhookEnvelope, WebhookName, WebhookPayload } from '../contract/webhooks.js';
import { jsonContentTypeProblem } from '../http/json.js';
import { SIGNATURE_PATTERN, verifySdkSignature, verifyStatusSignature } from '../signature.js';
import { summary, toIssues, webhookOf, type WebhookFamily, type WebhookPayloadIssue } from './contract.js';

export type { WebhookFamily, WebhookPayloadIssue };

// ---------------------------------------------------------------------------------------------
// Types: every payload type is the one generated from the webhook's schema (generated/webhooks.d.ts).

/** The body of the SDK-flow webhook `transactionStatus`. */
export type SdkWebhookPayload = WebhookPayload<'sdk', 'transactionStatus'>;
/** The body of the web-flow webhook `transactionStatus`. */
export type WebWebhookPayload = WebhookPayload<'web', 'transactionStatus'>;
/** The body of the gateway webhook `transactionUpdated`: `{ transaction }`. */
export type GatewayTransactionWebhookPayload = WebhookPayload<'gateway', 'transactionUpdated'>;
/** The body of the gateway webhook `refundUpdated`: `{ refund }`. */
export type GatewayRefundWebhookPayload = WebhookPayload<'gateway', 'refundUpdated'>;

/** A verified webhook's event. */
interface VerifiedEvent<F extends WebhookFamily, E extends WebhookName<F>> {
  /** The webhook's name in the family's document (`transactionStatus`, `refundUpdated`, ...). */
  readonly name: E;
  /** The `X-Event-Id` header (same on every retry; not covered by the signature). */
  readonly eventId?: string;
  readonly payload: WebhookPayload<F, E>;
}

/** `kind`: the body's one property, for the webhooks whose body wraps one object (the gateway's). */
type KindOf<F extends WebhookFamily, E extends WebhookName<F>> = [WebhookEnvelope<F, E>] extends [never]
  ? unknown
  : { readonly kind: WebhookEnvelope<F, E> };

/**
 * A verified webhook of family `F`: one member per webhook of its document, told apart by `name`
 * (and, for the gateway's, by `kind` too: `transaction` or `refund`).
 */
export type VerifiedWebhook<F extends WebhookFamily = WebhookFamily> = VerifiedWebhooks[F];

/** One member per webhook `E` (distributed over the union of names). */
type VerifiedOf<F extends WebhookFamily, E extends WebhookName<F>> = E extends WebhookName<F> ? VerifiedEvent<F, E> & KindOf<F, E> : never;

/** A verified SDK-flow webhook. */
export type VerifiedSdkWebhook = VerifiedWebhook<'sdk'>;

/** A verified web-flow webhook; both its signatures held. */
export type VerifiedWebWebhook = VerifiedWebhook<'web'>;

/** A verified gateway webhook: a transaction or a refund that reached a final status. */
export type VerifiedGatewayWebhook = VerifiedWebhook<'gateway'>;

/** The verified event of each family with webhooks. */
export type VerifiedWebhooks = { [F in WebhookFamily]: VerifiedOf<F, WebhookName<F>> };

/**
 * Request headers: a plain object (names in any case; a value may be an array of values),
 * Node's `IncomingHttpHeaders`, or a fetch `Headers`.
 */
export type WebhookHeaders =
  | Headers
  | IncomingHttpHeaders
  | { readonly [name: string]: string | readonly string[] | number | undefined };

/** A raw body: the bytes exactly as received, or the same decoded as a string. */
export type RawWebhookBody = string | Uint8Array | ArrayBuffer;

export interface VerifyWebhookOptions {
  /** Bodies larger than this many bytes are refused with `payload_too_large`. Default 1 MiB. */
  maxBodyBytes?: number;
}

/** The default body size limit: 1 MiB, the service's own request limit. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// The error.

export type WebhookFailureReason =
  | 'missing_signature'
  | 'bad_signature'
  | 'wrong_content_type'
  | 'malformed_json'
  | 'invalid_payload'
  | 'payload_too_large';

/**
 * A webhook was refused. `reason` says which check failed; the message says exactly what was
 * wrong, and never contains the secret or the body (at most a JSON pointer into it).
 */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';

  constructor(
    readonly reason: WebhookFailureReason,
    message: string,
    /** For `invalid_payload` from the schema: every violation found. */
    readonly issues: readonly WebhookPayloadIssue[] = [],
  ) {
    super(message);
  }
}

// ---------------------------------------------------------------------------------------------
// The verify functions: one verification, the families differing only by their webhooks in the
// contract (src/contract/webhooks.ts) and the web flow's status signature.

/** Verifies and parses an SDK-flow webhook (`X-Signature` keyed with the merchant's private key). */
export function verifySdkWebhook(
  rawBody: RawWebhookBody,
  headers: WebhookHeaders,
  privateKey: string,
  options: VerifyWebhookOptions = {},
): VerifiedSdkWebhook {
  return verifyWebhook('sdk', rawBody, headers, privateKey, options);
}

/**
 * Verifies and parses a web-flow webhook: the `X-Signature` header over the raw body (the
 * document requires it) and the body's `signature`, the status signature of `transactionId` and
 * `status`, both with the partner's private key.
 */
export function verifyWebWebhook(
  rawBody: RawWebhookBody,
  headers: WebhookHeaders,
  privateKey: string,
  options: VerifyWebhookOptions = {},
): VerifiedWebWebhook {
  return verifyWebhook('web', rawBody, headers, privateKey, options);
}

/**
 * Verifies and parses a gateway webhook (`X-Signature` keyed with the merchant's Transactional API
 * password): `{ transaction }` gives `kind: 'transaction'`, `{ refund }` gives `kind: 'refund'`.
 */
export function verifyGatewayWebhook(
  rawBody: RawWebhookBody,
  headers: WebhookHeaders,
  transactionalPassword: string,
  options: VerifyWebhookOptions = {},
): VerifiedGatewayWebhook {
  return verifyWebhook('gateway', rawBody, headers, transactionalPassword, options);
}

export { isWebhookFamily };

/** Verifies a webhook of `family`: the checks of the module's header, in their order. */
export function verifyWebhook<F extends WebhookFamily>(
  family: F,
  rawBody: RawWebhookBody,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyWebhookOptions = {},
): VerifiedWebhook<F> {
  if (!isWebhookFamily(family)) throw new TypeError(`the family must be one of ${WEBHOOK_FAMILIES.join(', ')} (got ${describe(family)})`);
  const rows = webhookEvents(family);
  // The document says whether X-Signature is required (it is, in every family today).
  const required = webhookOf(family, rows[0]!.name).parameter('header', 'x-signature')?.required === true;
  authenticate(rawBody, headers, secret, options, required);
  const value = parseJson(rawBody);
  const { event, webhook } = recognise(family, rows, value);
  if (family === 'web' && isObject(value) && Object.hasOwn(value, 'signature')) {
    // A web-flow body that carries a status signature: checked with the same key.
    const { signature, transactionId, status } = value as WebWebhookPayload;
    if (!verifyStatusSignature(signature, transactionId, status, secret)) {
      throw new WebhookVerificationError(
        'bad_signature',
        "the body's signature is not the status signature of its transactionId and status",
      );
    }
  }
  const verified = { name: event.name, ...(event.envelope === undefined ? {} : { kind: event.envelope }), payload: value };
  const eventId = eventIdOf(webhook, headers);
  return (eventId === undefined ? verified : { ...verified, eventId }) as VerifiedWebhook<F>;
}

/**
 * Which webhook of the family a body is: the first, in the document's order, whose schema accepts
 * it (the contract's schemas tell a family's webhooks apart; test/contract/webhooks.test.ts checks
 * that each one's examples match its own schema only). None: `invalid_payload`, with the issues
 * of the webhook the body came closest to.
 */
function recognise(family: WebhookFamily, rows: readonly WebhookEvent[], value: unknown): { event: WebhookEvent; webhook: ContractOperation } {
  let closest: { event: WebhookEvent; errors: readonly ErrorObject[] } | undefined;
  for (const event of rows) {
    const webhook = webhookOf(family, event.name);
    const errors = webhook.checkBody(value);
    if (errors.length === 0) return { event, webhook };
    if (closest === undefined || errors.length < closest.errors.length) closest = { event, errors };
  }
  const subject =
    rows.length === 1
      ? `the body does not match the ${rows[0]!.name} webhook's schema`
      : `the body matches none of the ${family} webhooks (${rows.map(({ name }) => name).join(', ')}); as a ${closest!.event.name} webhook`;
  refuseInvalid(closest!.errors, subject);
  throw new Error('unreachable: refuseInvalid throws for errors');
}

/** The size, signature and Content-Type checks, before anything of the body is decoded or parsed. */
function authenticate(
  rawBody: RawWebhookBody,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyWebhookOptions,
  requireSignatureHeader: boolean,
): void {
  if (headers === null || headers === undefined || typeof headers !== 'object') {
    // A JavaScript caller (or `req.headers` of the wrong object) can pass anything.
    throw new WebhookVerificationError(
      requireSignatureHeader ? 'missing_signature' : 'wrong_content_type',
      `no request headers were given (got ${headers === null ? 'null' : typeof headers}); pass the headers the webhook arrived with (X-Signature, Content-Type)`,
    );
  }
  const limit = maxBodyBytes(options.maxBodyBytes);
  const size = byteLength(rawBody);
  if (size > limit) {
    throw new WebhookVerificationError(
      'payload_too_large',
      `the body has ${size} bytes, more than the limit of ${limit}`,
    );
  }
  const signature = signatureHeader(headers, requireSignatureHeader);
  if (signature !== undefined && !verifySdkSignature(signature, rawBody, secret)) {
    throw new WebhookVerificationError(
      'bad_signature',
      'the X-Signature header does not match the body signed with the key',
    );
  }
  requireJsonContentType(headers);
}

export function maxBodyBytes(value: number | undefined): number {
  if (value === undefined) return DEFAULT_MAX_BODY_BYTES;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`maxBodyBytes must be a positive integer (got ${String(value)})`);
  }
  return value;
}

function byteLength(rawBody: unknown): number {
  if (typeof rawBody === 'string') return Buffer.byteLength(rawBody, 'utf8');
  if (types.isUint8Array(rawBody) || types.isArrayBuffer(rawBody)) return rawBody.byteLength;
  throw new TypeError(
    `the raw body must be a string, a Uint8Array or an ArrayBuffer (got ${describe(rawBody)}); ` +
      'the signature covers the exact bytes received, so pass them before any JSON parsing',
  );
}

/** The X-Signature value when present and of the exact signature form; undefined when absent and optional. */
function signatureHeader(headers: WebhookHeaders, required: boolean): string | undefined {
  const value = oneHeader(headers, 'X-Signature', 'bad_signature');
  if (value === undefined) {
    if (!required) return undefined;
    throw new WebhookVerificationError('missing_signature', 'the X-Signature header is missing or empty');
  }
  if (!SIGNATURE_PATTERN.test(value)) {
    throw new WebhookVerificationError(
      'bad_signature',
      value.length === 44
        ? 'the X-Signature header is not standard base64 with padding of 32 bytes'
        : `the X-Signature header has ${value.length} characters; a signature is 44 characters of standard base64`,
    );
  }
  return value;
}

function requireJsonContentType(headers: WebhookHeaders): void {
  const value = oneHeader(headers, 'Content-Type', 'wrong_content_type', 'was given more than once; expected application/json');
  // The project's JSON Content-Type rule, the same as for the requests the sandbox takes.
  const problem = jsonContentTypeProblem(value);
  if (problem === undefined) return;
  throw new WebhookVerificationError(
    'wrong_content_type',
    problem.kind === 'missing'
      ? 'the Content-Type header is missing; expected application/json'
      : problem.kind === 'media-type'
        ? `the Content-Type is ${quote(problem.mediaType)}; expected application/json`
        : `the Content-Type's charset is ${quote(problem.charset)}; a webhook body is UTF-8`,
  );
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The body's value: UTF-8 (when given as bytes), not blank, JSON. */
function parseJson(rawBody: RawWebhookBody): unknown {
  let text: string;
  try {
    text = typeof rawBody === 'string' ? rawBody : UTF8.decode(rawBody);
  } catch {
    throw new WebhookVerificationError('malformed_json', 'the body is not valid UTF-8');
  }
  if (text.trim() === '') {
    throw new WebhookVerificationError('malformed_json', 'the body is empty; expected a JSON object');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // JSON.parse's own message quotes the body, so it is not passed on.
    throw new WebhookVerificationError('malformed_json', 'the body is not valid JSON');
  }
}

/** Refuses with `invalid_payload` when Ajv found `errors` in what `subject` names. */
function refuseInvalid(errors: readonly ErrorObject[], subject: string): void {
  if (errors.length === 0) return;
  const issues = toIssues(errors);
  throw new WebhookVerificationError('invalid_payload', `${subject}: ${summary(issues)}`, issues);
}

/** The `X-Event-Id` header when present, checked against its schema. */
function eventIdOf(webhook: ContractOperation, headers: WebhookHeaders): string | undefined {
  const eventId = oneHeader(headers, 'X-Event-Id', 'invalid_payload');
  const checked = eventId === undefined ? undefined : webhook.parameter('header', 'x-event-id')?.validate(eventId);
  if (checked?.ok === false) refuseInvalid(checked.errors, 'the X-Event-Id header does not match its schema');
  return eventId;
}

// ---------------------------------------------------------------------------------------------
// Headers.

/**
 * The one value of the header `name` (any case), trimmed, or undefined when it is absent or empty;
 * several different values are refused with `reason`, the message saying how many (or `many`).
 * `headers` is an object: {@link authenticate} made sure of it.
 */
function oneHeader(headers: WebhookHeaders, name: string, reason: WebhookFailureReason, many?: string): string | undefined {
  const lower = name.toLowerCase();
  const found: string[] = [];
  const add = (value: unknown): void => {
    if (typeof value === 'string' || typeof value === 'number') {
      const text = String(value).trim();
      if (text !== '') found.push(text);
    } else if (Array.isArray(value)) {
      for (const item of value) add(item);
    }
  };
  if (isHeadersObject(headers)) {
    add(headers.get(lower));
  } else {
    for (const [key, value] of Object.entries(headers)) {
      if (key.toLowerCase() === lower) add(value);
    }
  }
  const values = new Set(found);
  if (values.size > 1) {
    throw new WebhookVerificationError(reason, `the ${name} header ${many ?? `was given ${values.size} different values; expected one`}`);
  }
  return found[0];
}

/** A fetch `Headers` (of this runtime or another implementation, by its `get`), as opposed to a plain object. */
function isHeadersObject(headers: WebhookHeaders): headers is Headers {
  return typeof (headers as { get?: unknown }).get === 'function';
}

// ---------------------------------------------------------------------------------------------

/** An attacker-supplied header value for a message: bounded, printable. */
export function quote(value: string): string {
  const bounded = value.length > 80 ? `${value.slice(0, 80)}...` : value;
  return JSON.stringify(bounded.replace(/[^\x20-\x7e]/g, '?'));
}

/** The type of a value for an error message; never the value itself. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return `an object (${value.constructor?.name ?? 'no prototype'})`;
  return typeof value;
}

