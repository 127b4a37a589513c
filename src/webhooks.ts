/**
 * Receiving the service's webhooks: verify the signature over the raw bytes, check the
 * Content-Type, parse, validate against the contract, and hand back a typed event.
 *
 * - `sdk`, {@link verifySdkWebhook}, keyed with the merchant's private key:
 *   `X-Signature` = base64(SHA-256(raw body + key)).
 * - `web`, {@link verifyWebWebhook}, keyed with the partner's private key: the same `X-Signature`,
 *   and the body's `signature` = base64(SHA-256(transactionId + status + key)), no separator (D22).
 * - `gateway`, {@link verifyGatewayWebhook}, keyed with the merchant's Transactional API password:
 *   `X-Signature` = base64(SHA-256(raw body + password)) (D23), for `{ transaction }` and `{ refund }`.
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
 * {@link createWebhookHandler} wraps them in a Node `(req, res)` handler for `http.createServer`
 * or Express: 200 once `onEvent` has resolved, 401 for a missing or bad signature, 400 for the
 * other failures, 500 when `onEvent` throws (so that the service tries again, D23). Bodies are
 * `{ "error": "<reason>" }`; no error message or stack ever goes into a response.
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
 *
 * **Replays.** The signatures carry no timestamp: a captured request verifies forever. Ignore
 * repeats (the {@link createDeduplicator} helper, or a unique key in your database) on the signed
 * pair `(merchantTransactionId, status)`, `(transactionId, status)`, `(transaction.id,
 * transaction.status)` or `(refund.transactionId, refund.id, refund.status)`; `X-Event-Id` also
 * identifies an event across retries, but it is not covered by the signature. Treat a webhook as a
 * hint and confirm with a status read before shipping goods or moving money.
 *
 * **Retries (D23).** Any answer other than 200 (SDK) or 2xx or 3xx (web, gateway; a redirect is not
 * followed), or none within 10 s, makes the service try again: at most 6 attempts, at once and then 30 s, 2 min, 10 min, 1 h and
 * 6 h after the previous failure. Answer quickly; `onEvent` should record the event and return.
 *
 * docs/webhooks.md has the full guide.
 */
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { types } from 'node:util';
import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import type { webhooks as GatewayWebhooks } from '../generated/types/gateway.js';
import type { webhooks as SdkWebhooks } from '../generated/types/sdk.js';
import type { webhooks as WebWebhooks } from '../generated/types/web.js';
import { createContractAjv, registerDocument } from './contract-schemas.js';
import { SIGNATURE_PATTERN, verifySdkSignature, verifyStatusSignature } from './signature.js';


// ---------------------------------------------------------------------------------------------
// Types: every payload type comes from the generated modules.

/** The body of the SDK-flow webhook `transactionStatus`. */
export type SdkWebhookPayload =
  SdkWebhooks['transactionStatus']['post']['requestBody']['content']['application/json'];
/** The body of the web-flow webhook `transactionStatus`. */
export type WebWebhookPayload =
  WebWebhooks['transactionStatus']['post']['requestBody']['content']['application/json'];
/** The body of the gateway webhook `transactionUpdated`: `{ transaction }`. */
export type GatewayTransactionWebhookPayload =
  GatewayWebhooks['transactionUpdated']['post']['requestBody']['content']['application/json'];
/** The body of the gateway webhook `refundUpdated`: `{ refund }`. */
export type GatewayRefundWebhookPayload =
  GatewayWebhooks['refundUpdated']['post']['requestBody']['content']['application/json'];

/** A verified SDK-flow webhook. */
export interface VerifiedSdkWebhook {
  /** The `X-Event-Id` header (same on every retry; not covered by the signature). */
  readonly eventId?: string;
  readonly payload: SdkWebhookPayload;
}

/** A verified web-flow webhook; both its signatures held. */
export interface VerifiedWebWebhook {
  /** The `X-Event-Id` header (same on every retry; not covered by the signature). */
  readonly eventId?: string;
  readonly payload: WebWebhookPayload;
}

/** A verified gateway webhook: a transaction or a refund that reached a final status. */
export type VerifiedGatewayWebhook =
  | {
      readonly kind: 'transaction';
      /** The `X-Event-Id` header (same on every retry; not covered by the signature). */
      readonly eventId?: string;
      readonly payload: GatewayTransactionWebhookPayload;
    }
  | {
      readonly kind: 'refund';
      /** The `X-Event-Id` header (same on every retry; not covered by the signature). */
      readonly eventId?: string;
      readonly payload: GatewayRefundWebhookPayload;
    };

export type WebhookFamily = 'sdk' | 'web' | 'gateway';

/** The verified event of each family. */
export interface VerifiedWebhooks {
  sdk: VerifiedSdkWebhook;
  web: VerifiedWebWebhook;
  gateway: VerifiedGatewayWebhook;
}

export type VerifiedWebhook<F extends WebhookFamily = WebhookFamily> = VerifiedWebhooks[F];

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

/** The default body size limit: 1 MiB, the service's own request limit (D24). */
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

/** One schema violation: a JSON pointer into the body (`` for the body itself) and what is wrong. */
export interface WebhookPayloadIssue {
  readonly path: string;
  readonly message: string;
}

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
// The verify functions.

/** Verifies and parses an SDK-flow webhook (`X-Signature` keyed with the merchant's private key). */
export function verifySdkWebhook(
  rawBody: RawWebhookBody,
  headers: WebhookHeaders,
  privateKey: string,
  options: VerifyWebhookOptions = {},
): VerifiedSdkWebhook {
  const text = authenticate(rawBody, headers, privateKey, options, true);
  const contract = contractOf('sdk');
  const payload = validated<SdkWebhookPayload>(contract, 'transactionStatus', parseJson(text));
  return withEventId(contract, headers, { payload });
}

/**
 * Verifies and parses a web-flow webhook: the `X-Signature` header over the raw body (the
 * document requires it) and the body's `signature`, the status signature of `transactionId` and
 * `status` (D22), both with the partner's private key.
 */
export function verifyWebWebhook(
  rawBody: RawWebhookBody,
  headers: WebhookHeaders,
  privateKey: string,
  options: VerifyWebhookOptions = {},
): VerifiedWebWebhook {
  const contract = contractOf('web');
  const header = contract.signatureHeader.get('transactionStatus') ?? 'absent';
  const text = authenticate(rawBody, headers, privateKey, options, header === 'required');
  const payload = validated<WebWebhookPayload>(contract, 'transactionStatus', parseJson(text));
  if (!verifyStatusSignature(payload.signature, payload.transactionId, payload.status, privateKey)) {
    throw new WebhookVerificationError(
      'bad_signature',
      "the body's signature is not the status signature of its transactionId and status (D22)",
    );
  }
  return withEventId(contract, headers, { payload });
}

/**
 * Verifies and parses a gateway webhook (`X-Signature` keyed with the merchant's Transactional API
 * password, D23): `{ transaction }` gives `kind: 'transaction'`, `{ refund }` gives `kind: 'refund'`.
 */
export function verifyGatewayWebhook(
  rawBody: RawWebhookBody,
  headers: WebhookHeaders,
  transactionalPassword: string,
  options: VerifyWebhookOptions = {},
): VerifiedGatewayWebhook {
  const text = authenticate(rawBody, headers, transactionalPassword, options, true);
  const contract = contractOf('gateway');
  const value = parseJson(text);
  if (isObject(value) && Object.hasOwn(value, 'transaction')) {
    const payload = validated<GatewayTransactionWebhookPayload>(contract, 'transactionUpdated', value);
    return withEventId(contract, headers, { kind: 'transaction' as const, payload });
  }
  if (isObject(value) && Object.hasOwn(value, 'refund')) {
    const payload = validated<GatewayRefundWebhookPayload>(contract, 'refundUpdated', value);
    return withEventId(contract, headers, { kind: 'refund' as const, payload });
  }
  throw new WebhookVerificationError(
    'invalid_payload',
    'the body is neither a transaction webhook ({ transaction }) nor a refund webhook ({ refund })',
    [{ path: '', message: "must have property 'transaction' or 'refund'" }],
  );
}

const VERIFIERS: {
  [F in WebhookFamily]: (
    rawBody: RawWebhookBody,
    headers: WebhookHeaders,
    secret: string,
    options?: VerifyWebhookOptions,
  ) => VerifiedWebhook<F>;
} = { sdk: verifySdkWebhook, web: verifyWebWebhook, gateway: verifyGatewayWebhook };

/** The size, signature and Content-Type checks; returns the body as text, not yet parsed. */
function authenticate(
  rawBody: RawWebhookBody,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyWebhookOptions,
  requireSignatureHeader: boolean,
): string {
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
  return decode(rawBody);
}

function maxBodyBytes(value: number | undefined): number {
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

/** The X-Signature value when present and of the D28 form; undefined when absent and optional. */
function signatureHeader(headers: WebhookHeaders, required: boolean): string | undefined {
  const values = distinct(headerValues(headers, 'x-signature'));
  if (values.length === 0) {
    if (!required) return undefined;
    throw new WebhookVerificationError('missing_signature', 'the X-Signature header is missing or empty');
  }
  if (values.length > 1) {
    throw new WebhookVerificationError(
      'bad_signature',
      `the X-Signature header was given ${values.length} different values; expected one`,
    );
  }
  const value = values[0] as string;
  if (!SIGNATURE_PATTERN.test(value)) {
    throw new WebhookVerificationError(
      'bad_signature',
      value.length === 44
        ? 'the X-Signature header is not standard base64 with padding of 32 bytes (D28)'
        : `the X-Signature header has ${value.length} characters; a signature is 44 characters of standard base64 (D28)`,
    );
  }
  return value;
}

function requireJsonContentType(headers: WebhookHeaders): void {
  const values = distinct(headerValues(headers, 'content-type'));
  if (values.length === 0) {
    throw new WebhookVerificationError(
      'wrong_content_type',
      'the Content-Type header is missing; expected application/json',
    );
  }
  if (values.length > 1) {
    throw new WebhookVerificationError(
      'wrong_content_type',
      'the Content-Type header was given more than once; expected application/json',
    );
  }
  const [type = '', ...parameters] = (values[0] as string).split(';');
  const mediaType = type.trim().toLowerCase();
  if (mediaType !== 'application/json') {
    throw new WebhookVerificationError(
      'wrong_content_type',
      `the Content-Type is ${quote(mediaType)}; expected application/json`,
    );
  }
  for (const parameter of parameters) {
    const [name = '', ...rest] = parameter.split('=');
    if (name.trim().toLowerCase() !== 'charset') continue;
    const charset = rest.join('=').trim().replace(/^"(.*)"$/, '$1').toLowerCase();
    if (charset !== 'utf-8' && charset !== 'utf8') {
      throw new WebhookVerificationError(
        'wrong_content_type',
        `the Content-Type's charset is ${quote(charset)}; a webhook body is UTF-8`,
      );
    }
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

function decode(rawBody: RawWebhookBody): string {
  if (typeof rawBody === 'string') return rawBody;
  try {
    return UTF8.decode(rawBody);
  } catch {
    throw new WebhookVerificationError('malformed_json', 'the body is not valid UTF-8');
  }
}

function parseJson(text: string): unknown {
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

function validated<T>(contract: Contract, webhook: string, value: unknown): T {
  const validate = contract.bodies.get(webhook);
  if (validate === undefined) throw new Error(`the contract has no webhook ${webhook}`);
  if (validate(value)) return value as T;
  const issues = toIssues(validate.errors);
  throw new WebhookVerificationError(
    'invalid_payload',
    `the body does not match the ${webhook} webhook's schema: ${summary(issues)}`,
    issues,
  );
}

function withEventId<E extends object>(
  contract: Contract,
  headers: WebhookHeaders,
  event: E,
): E & { readonly eventId?: string } {
  const values = distinct(headerValues(headers, 'x-event-id'));
  if (values.length === 0) return event;
  if (values.length > 1) {
    throw new WebhookVerificationError(
      'invalid_payload',
      `the X-Event-Id header was given ${values.length} different values; expected one`,
    );
  }
  const eventId = values[0] as string;
  if (contract.eventId !== undefined && !contract.eventId(eventId)) {
    const issues = toIssues(contract.eventId.errors);
    throw new WebhookVerificationError(
      'invalid_payload',
      `the X-Event-Id header does not match its schema: ${summary(issues)}`,
      issues,
    );
  }
  return { ...event, eventId };
}

// ---------------------------------------------------------------------------------------------
// Headers.

/** Every value of the header `name` (lower case), trimmed, empty ones dropped. */
function headerValues(headers: WebhookHeaders, name: string): string[] {
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
    add(headers.get(name));
  } else if (headers !== null && typeof headers === 'object') {
    for (const [key, value] of Object.entries(headers)) {
      if (key.toLowerCase() === name) add(value);
    }
  }
  return found;
}

/** A fetch `Headers` (of this runtime or another implementation), as opposed to a plain object. */
function isHeadersObject(headers: WebhookHeaders): headers is Headers {
  if (typeof Headers !== 'undefined' && headers instanceof Headers) return true;
  return typeof (headers as { get?: unknown }).get === 'function';
}

function distinct(values: string[]): string[] {
  return [...new Set(values)];
}

// ---------------------------------------------------------------------------------------------
// The contract: the bundled documents, compiled once per family on first use.

interface Contract {
  /** The body validator of each webhook of the family, by its name in the document. */
  readonly bodies: ReadonlyMap<string, ValidateFunction>;
  /** The validator of the X-Event-Id header's schema, when the document defines the header. */
  readonly eventId: ValidateFunction | undefined;
  /** Whether each webhook's document defines X-Signature, and whether it is required. */
  readonly signatureHeader: ReadonlyMap<string, 'required' | 'optional' | 'absent'>;
}

const FAMILY_WEBHOOKS: Record<WebhookFamily, readonly string[]> = {
  sdk: ['transactionStatus'],
  web: ['transactionStatus'],
  gateway: ['transactionUpdated', 'refundUpdated'],
};

// One literal URL per document, so that bundlers can see the files this module reads.
const DOCUMENTS: Record<WebhookFamily, () => URL> = {
  sdk: () => new URL('../generated/openapi/sdk.json', import.meta.url),
  web: () => new URL('../generated/openapi/web.json', import.meta.url),
  gateway: () => new URL('../generated/openapi/gateway.json', import.meta.url),
};

const contracts = new Map<WebhookFamily, Contract>();

function contractOf(family: WebhookFamily): Contract {
  let contract = contracts.get(family);
  if (contract === undefined) {
    contract = compileContract(family, loadDocument(family));
    contracts.set(family, contract);
  }
  return contract;
}

function loadDocument(family: WebhookFamily): Record<string, unknown> {
  const url = DOCUMENTS[family]();
  let document: unknown;
  try {
    document = JSON.parse(readFileSync(url, 'utf8'));
  } catch (error) {
    throw new Error(
      `cannot load the contract generated/openapi/${family}.json (${url.pathname}): ${String(error)}; run npm run generate`,
    );
  }
  if (!isObject(document)) throw new Error(`generated/openapi/${family}.json is not an OpenAPI document`);
  return document;
}

function compileContract(family: WebhookFamily, document: Record<string, unknown>): Contract {
  const base = `https://contract.paylater.invalid/${family}.json`;
  const ajv = createContractAjv();
  registerDocument(ajv, document, base);

  const bodies = new Map<string, ValidateFunction>();
  const signatureHeader = new Map<string, 'required' | 'optional' | 'absent'>();
  let eventId: ValidateFunction | undefined;
  for (const name of FAMILY_WEBHOOKS[family]) {
    const pointer = ['webhooks', name, 'post', 'requestBody', 'content', 'application/json', 'schema'];
    bodies.set(name, schemaAt(ajv, base, pointer));
    const parameters = at(document, ['webhooks', name, 'post', 'parameters']);
    const signature = headerParameter(document, parameters, 'x-signature');
    signatureHeader.set(name, signature === undefined ? 'absent' : signature.required ? 'required' : 'optional');
    const event = headerParameter(document, parameters, 'x-event-id');
    if (eventId === undefined && event !== undefined) eventId = schemaAt(ajv, base, event.schemaPointer);
  }
  return { bodies, eventId, signatureHeader };
}

function schemaAt(ajv: Ajv2020, base: string, segments: readonly string[]): ValidateFunction {
  const ref = `${base}#/${segments.map((s) => s.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;
  const validate = ajv.getSchema(ref);
  if (validate === undefined) throw new Error(`the contract has no schema at ${ref}`);
  return validate;
}

/** A header parameter of a webhook, following a `#/components/parameters/...` reference. */
function headerParameter(
  document: Record<string, unknown>,
  parameters: unknown,
  name: string,
): { required: boolean; schemaPointer: string[] } | undefined {
  if (!Array.isArray(parameters)) return undefined;
  for (const item of parameters) {
    let parameter: unknown = item;
    let pointer: string[] | undefined;
    if (isObject(item) && typeof item.$ref === 'string' && item.$ref.startsWith('#/')) {
      pointer = item.$ref
        .slice(2)
        .split('/')
        .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
      parameter = at(document, pointer);
    }
    if (!isObject(parameter) || parameter.in !== 'header') continue;
    if (typeof parameter.name !== 'string' || parameter.name.toLowerCase() !== name) continue;
    if (pointer === undefined) return undefined; // inline parameters are not used by the contract
    return { required: parameter.required === true, schemaPointer: [...pointer, 'schema'] };
  }
  return undefined;
}

function at(value: unknown, segments: readonly string[]): unknown {
  let current = value;
  for (const segment of segments) {
    if (!isObject(current) && !Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

function toIssues(errors: ErrorObject[] | null | undefined): WebhookPayloadIssue[] {
  // Ajv's messages name the schema's expectations, never the data (params may, so they are dropped).
  return (errors ?? []).map((error) => ({
    path: error.instancePath.length > 200 ? `${error.instancePath.slice(0, 200)}...` : error.instancePath,
    message: error.message ?? `fails ${error.keyword}`,
  }));
}

function summary(issues: readonly WebhookPayloadIssue[]): string {
  const shown = issues.slice(0, 5).map((issue) => `${issue.path || '(root)'} ${issue.message}`);
  if (issues.length > shown.length) shown.push(`and ${issues.length - shown.length} more`);
  return shown.join('; ');
}

// ---------------------------------------------------------------------------------------------
// The Node handler.

export interface WebhookHandlerOptions<F extends WebhookFamily> {
  family: F;
  /** The private key (sdk, web) or the merchant's Transactional API password (gateway). */
  secret: string;
  /**
   * Called once per verified request; the answer is 200 when it resolves and 500 when it throws
   * (the service then tries again, D23). Keep it quick: record the event, work afterwards.
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

/** Creates a Node handler that verifies every request as `family` and passes it to `onEvent`. */
export function createWebhookHandler<F extends WebhookFamily>(
  options: WebhookHandlerOptions<F>,
): WebhookRequestHandler {
  const { family, secret, onEvent } = options;
  if (typeof family !== 'string' || !Object.hasOwn(VERIFIERS, family)) {
    throw new TypeError(`family must be sdk, web or gateway (got ${typeof family === 'string' ? quote(family) : describe(family)})`);
  }
  const verify = VERIFIERS[family] as unknown as (
    rawBody: RawWebhookBody,
    headers: WebhookHeaders,
    secret: string,
    options?: VerifyWebhookOptions,
  ) => VerifiedWebhook<F>;
  if (typeof secret !== 'string' || secret.length === 0) {
    throw new TypeError('secret must be a non-empty string');
  }
  if (typeof onEvent !== 'function') throw new TypeError('onEvent must be a function');
  const limit = maxBodyBytes(options.maxBodyBytes);
  // Compiled now rather than on the first delivery: a missing document fails here, and the first
  // webhook is answered as quickly as the others.
  contractOf(family);
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

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      answer(res, 405, 'method_not_allowed');
      return;
    }
    const body = await readRawBody(req, limit);
    if (body === 'aborted') return; // the sender went away: nobody to answer
    if (body === 'too_large') {
      tell(new WebhookVerificationError('payload_too_large', `the body is longer than the limit of ${limit} bytes`));
      // Stop reading: the rest of the body is not wanted, and the connection is closed after the answer.
      res.setHeader('Connection', 'close');
      answer(res, 400, 'payload_too_large');
      return;
    }
    if (body === 'consumed') {
      tell(
        new WebhookRawBodyError(
          'the request body was already read, probably parsed by a JSON body parser: the signature covers ' +
            "the exact bytes received, so mount express.raw({ type: 'application/json' }) on the webhook " +
            'route, or no body parser at all',
        ),
      );
      answer(res, 400, 'raw_body_required');
      return;
    }
    let event: VerifiedWebhook<F>;
    try {
      event = verify(body, req.headers, secret, { maxBodyBytes: limit });
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      tell(error);
      const unauthorized = error.reason === 'missing_signature' || error.reason === 'bad_signature';
      answer(res, unauthorized ? 401 : 400, error.reason);
      return;
    }
    try {
      await onEvent(event);
    } catch (error) {
      tell(error);
      answer(res, 500, 'handler_failed');
      return;
    }
    answer(res, 200);
  }

  return (req, res) => {
    handle(req, res).catch((error: unknown) => {
      tell(error);
      answer(res, 500, 'internal_error');
    });
  };
}

/** The raw body: `req.body` when a raw or text parser left it, else read from the stream. */
function readRawBody(
  req: IncomingMessage & { body?: unknown; _body?: unknown },
  limit: number,
): Promise<Buffer | string | 'too_large' | 'consumed' | 'aborted'> {
  const preset = req.body;
  if (typeof preset === 'string' || Buffer.isBuffer(preset)) return Promise.resolve(preset);
  if (types.isUint8Array(preset)) return Promise.resolve(Buffer.from(preset.buffer, preset.byteOffset, preset.byteLength));
  if (req.readableEnded || req._body === true) return Promise.resolve('consumed');
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve('too_large');

  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > limit) {
        cleanup();
        req.pause();
        chunks.length = 0;
        resolve('too_large');
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(Buffer.concat(chunks, received));
    };
    const onError = (error: Error & { code?: unknown }): void => {
      cleanup();
      // The sender closed the connection mid-body: nothing to answer, nothing to report.
      if (error.code === 'ECONNRESET' || error.message === 'aborted') resolve('aborted');
      else reject(error);
    };
    const onClose = (): void => {
      cleanup();
      resolve('aborted');
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

function answer(res: ServerResponse, status: number, error?: string): void {
  if (res.headersSent || res.writableEnded || res.destroyed) {
    if (!res.writableEnded && !res.destroyed) res.end();
    return;
  }
  const body = JSON.stringify(error === undefined ? { received: true } : { error });
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.setHeader('Cache-Control', 'no-store');
  res.end(body);
}

// ---------------------------------------------------------------------------------------------
// Deduplication.

export interface DeduplicatorOptions {
  /** How long a key is remembered, in ms. Default 24 h, which covers D23's retries (about 7.5 h). */
  ttlMs?: number;
  /** At most this many keys are remembered; the oldest are forgotten first. Default 10,000. */
  max?: number;
  /** The clock, in ms (tests). Default `Date.now`. */
  now?: () => number;
}

export interface Deduplicator {
  /** True when `key` was seen within the TTL; otherwise records it and returns false. */
  seen(key: string): boolean;
  /** Forgets `key`, e.g. when processing its event failed and a retry must be processed. */
  forget(key: string): void;
  /** How many keys are remembered now. */
  readonly size: number;
}

/**
 * An in-memory, per-process record of the events already handled. It does not survive a restart
 * and is not shared between processes or machines: with more than one, use a unique key in the
 * database instead. Key it on the signed pair (see the module's comment); forget the key when
 * processing fails, so that the service's retry is processed.
 */
export function createDeduplicator(options: DeduplicatorOptions = {}): Deduplicator {
  const ttlMs = options.ttlMs ?? 24 * 60 * 60 * 1000;
  const max = options.max ?? 10_000;
  const now = options.now ?? Date.now;
  if (!(ttlMs > 0)) throw new RangeError(`ttlMs must be positive (got ${String(ttlMs)})`);
  if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`max must be a positive integer (got ${String(max)})`);
  // Insertion order is expiry order: every key lives ttlMs from when it was recorded.
  const expiries = new Map<string, number>();
  const purge = (time: number): void => {
    for (const [key, expiry] of expiries) {
      if (expiry > time) break;
      expiries.delete(key);
    }
  };
  return {
    seen(key) {
      const time = now();
      purge(time);
      if (expiries.has(key)) return true;
      expiries.set(key, time + ttlMs);
      if (expiries.size > max) {
        const oldest = expiries.keys().next();
        if (oldest.done !== true) expiries.delete(oldest.value);
      }
      return false;
    },
    forget(key) {
      expiries.delete(key);
    },
    get size() {
      purge(now());
      return expiries.size;
    },
  };
}

// ---------------------------------------------------------------------------------------------

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An attacker-supplied header value for a message: bounded, printable. */
function quote(value: string): string {
  const bounded = value.length > 80 ? `${value.slice(0, 80)}...` : value;
  return JSON.stringify(bounded.replace(/[^\x20-\x7e]/g, '?'));
}

/** The type of a value for an error message; never the value itself. */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return `an object (${value.constructor?.name ?? 'no prototype'})`;
  return typeof value;
}
