/**
 * The webhook receiver: every family's verify function, the Node handler through a real HTTP
 * server, and the deduplicator. Signed requests are built with src/signature.ts and valid
 * payloads are the contract's own examples from the bundled documents.
 */
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, expectTypeOf, it, vi } from 'vitest';
import { sdkSignature, statusSignature } from '../../src/signature.js';
import {
  DEFAULT_MAX_BODY_BYTES,
  WebhookRawBodyError,
  WebhookVerificationError,
  createDeduplicator,
  createWebhookHandler,
  verifyGatewayWebhook,
  verifySdkWebhook,
  verifyWebWebhook,
  type GatewayRefundWebhookPayload,
  type GatewayTransactionWebhookPayload,
  type RawWebhookBody,
  type SdkWebhookPayload,
  type VerifiedGatewayWebhook,
  type VerifiedSdkWebhook,
  type VerifiedWebWebhook,
  type VerifyWebhookOptions,
  type WebWebhookPayload,
  type WebhookFailureReason,
  type WebhookFamily,
  type WebhookHeaders,
} from '../../src/webhooks/index.js';
import { contractOf } from '../../src/contract/index.js';
import type { WebhookName } from '../../src/contract/webhooks.js';
import type { SendWebhook } from '../../src/sandbox/webhook-events.js';
import type { VerifiedWebhook } from '../../src/webhooks/verify.js';
import type { webhooks as GatewayDocument } from '../../generated/types/gateway.js';
import type { webhooks as SdkDocument } from '../../generated/types/sdk.js';
import type { webhooks as WebDocument } from '../../generated/types/web.js';

const KEY = 'merchant-private-key-9f3b1c';
const OTHER_KEY = 'someone-elses-key-77aa01';

type Json = Record<string, unknown>;

/** The bundled document, as the contract model read it. */
function document(family: WebhookFamily): Json {
  return contractOf(family).document;
}

/** A named example of a webhook's body from the bundled document (a fresh copy). */
function example(family: WebhookFamily, webhook: string, name: string): Json {
  const doc = document(family) as {
    webhooks: Record<string, { post: { requestBody: { content: Record<string, { examples: Record<string, { value: Json }> }> } } }>;
  };
  const found = doc.webhooks[webhook]?.post.requestBody.content['application/json']?.examples[name]?.value;
  if (found === undefined) throw new Error(`no example ${name} of ${family} ${webhook}`);
  return structuredClone(found);
}

/** A web-flow body whose status signature is made with `key`. */
function webPayload(transactionId: string, status: string, key = KEY): Json {
  return { transactionId, status, signature: statusSignature(transactionId, status, key) };
}

interface Case {
  label: string;
  family: WebhookFamily;
  verify: (
    rawBody: RawWebhookBody,
    headers: WebhookHeaders,
    secret: string,
    options?: VerifyWebhookOptions,
  ) => { eventId?: string; payload: unknown; kind?: string };
  /** A valid payload, fresh each call. */
  payload: () => Json;
  /** The object that holds the id and the status inside a payload. */
  holder: (payload: Json) => Json;
  idField: string;
  kind?: 'transaction' | 'refund';
}

const CASES: Case[] = [
  {
    label: 'sdk',
    family: 'sdk',
    verify: verifySdkWebhook,
    payload: () => example('sdk', 'transactionStatus', 'success'),
    holder: (payload) => payload,
    idField: 'merchantTransactionId',
  },
  {
    label: 'web',
    family: 'web',
    verify: verifyWebWebhook,
    payload: () => {
      const { transactionId, status } = example('web', 'transactionStatus', 'success');
      return webPayload(String(transactionId), String(status));
    },
    holder: (payload) => payload,
    idField: 'transactionId',
  },
  {
    label: 'gateway transaction',
    family: 'gateway',
    verify: verifyGatewayWebhook,
    payload: () => example('gateway', 'transactionUpdated', 'success'),
    holder: (payload) => payload.transaction as Json,
    idField: 'id',
    kind: 'transaction',
  },
  {
    label: 'gateway refund',
    family: 'gateway',
    verify: verifyGatewayWebhook,
    payload: () => example('gateway', 'refundUpdated', 'succeeded'),
    holder: (payload) => payload.refund as Json,
    idField: 'id',
    kind: 'refund',
  },
];

/** The headers of a request signed with `key` over exactly `body`. */
function headersFor(body: RawWebhookBody, key = KEY, extra: Record<string, string> = {}): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'X-Signature': sdkSignature(body, key),
    'X-Event-Id': 'evt_0001',
    ...extra,
  };
}

function failure(run: () => unknown): WebhookVerificationError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    return error as WebhookVerificationError;
  }
  throw new Error('expected a WebhookVerificationError, but the webhook was accepted');
}

function expectFailure(run: () => unknown, reason: WebhookFailureReason): WebhookVerificationError {
  const error = failure(run);
  expect(error.reason, error.message).toBe(reason);
  expect(error.name).toBe('WebhookVerificationError');
  expect(error.message).not.toContain(KEY);
  expect(error.message).not.toContain(OTHER_KEY);
  return error;
}

describe.each(CASES)('verify: $label webhook', (c) => {
  const secretOf = () => KEY;

  it('accepts a valid event and returns the typed payload and the event id', () => {
    const payload = c.payload();
    const body = JSON.stringify(payload);
    const event = c.verify(body, headersFor(body), secretOf());
    expect(event.payload).toEqual(payload);
    expect(event.eventId).toBe('evt_0001');
    if (c.kind !== undefined) expect(event.kind).toBe(c.kind);
  });

  it('accepts every example of the webhook in the contract', () => {
    const doc = document(c.family) as { webhooks: Record<string, { post: { requestBody: { content: Record<string, { examples: Record<string, unknown> }> } } }> };
    const webhook = c.family === 'gateway' ? (c.kind === 'refund' ? 'refundUpdated' : 'transactionUpdated') : 'transactionStatus';
    const names = Object.keys(doc.webhooks[webhook]?.post.requestBody.content['application/json']?.examples ?? {});
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) {
      let payload = example(c.family, webhook, name);
      if (c.family === 'web') payload = webPayload(String(payload.transactionId), String(payload.status));
      const body = JSON.stringify(payload, null, 2);
      expect(c.verify(body, headersFor(body), KEY).payload).toEqual(payload);
    }
  });

  it('accepts the body as a string, a Buffer, a Uint8Array view and an ArrayBuffer', () => {
    const payload = c.payload();
    const text = JSON.stringify(payload);
    const bytes = Buffer.from(text, 'utf8');
    const backing = new Uint8Array(bytes.length + 9).fill(0x20);
    backing.set(bytes, 5);
    const forms: RawWebhookBody[] = [text, bytes, backing.subarray(5, 5 + bytes.length), new Uint8Array(bytes).buffer];
    for (const form of forms) {
      expect(c.verify(form, headersFor(text), KEY).payload).toEqual(payload);
    }
  });

  it('verifies the exact bytes: non-ASCII text and insignificant whitespace are kept', () => {
    const payload = c.payload();
    const body = `\n  ${JSON.stringify(payload, null, 4)}  \n`;
    expect(c.verify(Buffer.from(body), headersFor(body), KEY).payload).toEqual(payload);
    // The same JSON value with other whitespace is another body: its signature does not carry over.
    expectFailure(() => c.verify(JSON.stringify(payload), headersFor(body), KEY), 'bad_signature');
  });

  it('rejects a tampered body', () => {
    const body = JSON.stringify(c.payload());
    const tampered = body.replace('SUCCESS', 'FAILURE');
    expect(tampered).not.toBe(body);
    const error = expectFailure(() => c.verify(tampered, headersFor(body), KEY), 'bad_signature');
    expect(error.message).toMatch(/X-Signature/);
    expect(error.message).not.toContain(tampered);
    // One flipped bit in the bytes.
    const bytes = Buffer.from(body);
    const index = bytes.length - 2;
    bytes.writeUInt8(bytes.readUInt8(index) ^ 0x01, index);
    expectFailure(() => c.verify(bytes, headersFor(body), KEY), 'bad_signature');
  });

  it('rejects a signature made with another key', () => {
    const body = JSON.stringify(c.payload());
    expectFailure(() => c.verify(body, headersFor(body, OTHER_KEY), KEY), 'bad_signature');
  });

  it('rejects a missing or empty X-Signature header', () => {
    const body = JSON.stringify(c.payload());
    const { 'X-Signature': _dropped, ...unsigned } = headersFor(body);
    const error = expectFailure(() => c.verify(body, unsigned, KEY), 'missing_signature');
    expect(error.message).toBe('the X-Signature header is missing or empty');
    expectFailure(() => c.verify(body, { ...unsigned, 'X-Signature': '' }, KEY), 'missing_signature');
    expectFailure(() => c.verify(body, { ...unsigned, 'x-signature': [] }, KEY), 'missing_signature');
    expectFailure(() => c.verify(body, { ...unsigned, 'x-signature': undefined }, KEY), 'missing_signature');
  });

  it('rejects headers that are null, undefined or not an object with a verification error, not a TypeError', () => {
    const body = JSON.stringify(c.payload());
    for (const headers of [null, undefined, 'X-Signature: x', 42]) {
      const error = expectFailure(() => c.verify(body, headers as never, KEY), 'missing_signature');
      expect(error.message).toMatch(/^no request headers were given \(got (null|undefined|string|number)\); pass the headers/);
    }
  });

  it('rejects a malformed X-Signature header: not base64, wrong length, hex, unpadded', () => {
    const body = JSON.stringify(c.payload());
    const good = sdkSignature(body, KEY);
    const hex = Buffer.from(good, 'base64').toString('hex');
    const malformed = [
      `${good.slice(0, 42)}!=`, // 44 characters, not base64
      good.replaceAll('=', ''), // unpadded
      good.slice(0, 40), // too short
      `${good}AAAA`, // too long
      hex, // the right digest in the wrong encoding
      Buffer.from(good, 'base64').toString('base64url').replaceAll('=', ''),
      `sha256=${good}`,
    ];
    for (const signature of malformed) {
      const error = expectFailure(() => c.verify(body, headersFor(body, KEY, { 'X-Signature': signature }), KEY), 'bad_signature');
      expect(error.message).toMatch(/X-Signature/);
      expect(error.message).not.toContain(signature);
    }
    const lengthError = failure(() => c.verify(body, headersFor(body, KEY, { 'X-Signature': hex }), KEY));
    expect(lengthError.message).toContain('64 characters');
  });

  it('rejects a wrong or missing Content-Type, after the signature', () => {
    const body = JSON.stringify(c.payload());
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/jsonp', 'application/json-seq', 'application/json; charset=iso-8859-1']) {
      const error = expectFailure(() => c.verify(body, headersFor(body, KEY, { 'Content-Type': type }), KEY), 'wrong_content_type');
      expect(error.message).toMatch(/Content-Type/);
    }
    const { 'Content-Type': _dropped, ...untyped } = headersFor(body);
    expectFailure(() => c.verify(body, untyped, KEY), 'wrong_content_type');
    // A body with a bad signature is refused for its signature first.
    expectFailure(
      () => c.verify(body, headersFor(body, OTHER_KEY, { 'Content-Type': 'text/plain' }), KEY),
      'bad_signature',
    );
    for (const type of ['application/json', 'Application/JSON', 'application/json; charset=utf-8', 'application/json;charset="UTF-8"']) {
      expect(c.verify(body, headersFor(body, KEY, { 'Content-Type': type }), KEY).payload).toEqual(JSON.parse(body));
    }
  });

  it('rejects a signed body that is not JSON, empty, or not UTF-8', () => {
    for (const body of ['not json', '{"status": "SUCCESS",', '', '   ']) {
      const error = expectFailure(() => c.verify(body, headersFor(body), KEY), 'malformed_json');
      if (body.trim() !== '') expect(error.message).not.toContain(body);
    }
    const notUtf8 = Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]);
    const error = expectFailure(() => c.verify(notUtf8, headersFor(notUtf8), KEY), 'malformed_json');
    expect(error.message).toBe('the body is not valid UTF-8');
  });

  it('rejects signed JSON that violates the schema: unknown status, missing field, extra field, wrong type', () => {
    const violations: [string, (payload: Json) => void, string][] = [
      ['unknown status', (p) => { c.holder(p).status = 'REVERSED'; }, '/status'],
      ['missing id', (p) => { delete c.holder(p)[c.idField]; }, ''],
      ['extra field', (p) => { p.unexpected = true; }, ''],
      ['wrong type', (p) => { c.holder(p)[c.idField] = 42; }, `/${c.idField}`],
    ];
    for (const [label, change, path] of violations) {
      const payload = c.payload();
      change(payload);
      const body = JSON.stringify(payload);
      const error = expectFailure(() => c.verify(body, headersFor(body), KEY), 'invalid_payload');
      expect(error.issues.length, label).toBeGreaterThan(0);
      expect(error.issues.some((issue) => issue.path.endsWith(path)), `${label}: ${error.message}`).toBe(true);
      expect(error.message).not.toContain(body);
    }
    for (const value of [[], 'SUCCESS', null, 42]) {
      const body = JSON.stringify(value);
      expectFailure(() => c.verify(body, headersFor(body), KEY), 'invalid_payload');
    }
  });

  it('rejects a body over the limit before anything else, and accepts one exactly at it', () => {
    const payload = c.payload();
    const json = JSON.stringify(payload);
    const atLimit = json.padEnd(DEFAULT_MAX_BODY_BYTES, ' ');
    expect(Buffer.byteLength(atLimit)).toBe(DEFAULT_MAX_BODY_BYTES);
    expect(c.verify(atLimit, headersFor(atLimit), KEY).payload).toEqual(payload);
    const over = `${atLimit} `;
    const error = expectFailure(() => c.verify(over, headersFor(over), KEY), 'payload_too_large');
    expect(error.message).toBe(`the body has ${DEFAULT_MAX_BODY_BYTES + 1} bytes, more than the limit of ${DEFAULT_MAX_BODY_BYTES}`);
    // Unsigned: still too large (the size is checked first).
    expectFailure(() => c.verify(Buffer.alloc(DEFAULT_MAX_BODY_BYTES + 1, 0x20), {}, KEY), 'payload_too_large');
    // A custom limit counts bytes, not characters.
    const small = JSON.stringify(payload);
    expectFailure(() => c.verify(small, headersFor(small), KEY, { maxBodyBytes: Buffer.byteLength(small) - 1 }), 'payload_too_large');
    expect(c.verify(small, headersFor(small), KEY, { maxBodyBytes: Buffer.byteLength(small) }).payload).toEqual(payload);
  });

  it('finds headers in any case, in Headers, in arrays and in IncomingHttpHeaders form', () => {
    const payload = c.payload();
    const body = JSON.stringify(payload);
    const signature = sdkSignature(body, KEY);
    const forms: WebhookHeaders[] = [
      { 'content-type': 'application/json', 'x-signature': signature, 'x-event-id': 'evt_0001' },
      { 'CONTENT-TYPE': 'application/json', 'X-SIGNATURE': signature, 'X-EVENT-ID': 'evt_0001' },
      { 'Content-Type': ['application/json'], 'x-Signature': [signature], 'X-Event-Id': ['evt_0001', 'evt_0001'] },
      new Headers({ 'CONTENT-TYPE': 'application/json', 'X-Signature': signature, 'x-event-id': 'evt_0001' }),
    ];
    for (const headers of forms) {
      const event = c.verify(body, headers, KEY);
      expect(event.payload).toEqual(payload);
      expect(event.eventId).toBe('evt_0001');
    }
    // The same header twice with different values is not one signature.
    expectFailure(
      () => c.verify(body, { 'content-type': 'application/json', 'x-signature': [signature, sdkSignature(body, OTHER_KEY)] }, KEY),
      'bad_signature',
    );
    expectFailure(
      () => c.verify(body, { 'content-type': 'application/json', 'X-Signature': signature, 'x-signature': sdkSignature(body, OTHER_KEY) }, KEY),
      'bad_signature',
    );
  });

  it('gives no event id without X-Event-Id, and refuses one that breaks its schema', () => {
    const body = JSON.stringify(c.payload());
    const { 'X-Event-Id': _dropped, ...headers } = headersFor(body);
    const event = c.verify(body, headers, KEY);
    expect(event.eventId).toBeUndefined();
    expect('eventId' in event).toBe(false);
    expectFailure(() => c.verify(body, { ...headers, 'X-Event-Id': 'e'.repeat(65) }, KEY), 'invalid_payload');
    expectFailure(() => c.verify(body, { ...headers, 'X-Event-Id': ['evt_1', 'evt_2'] }, KEY), 'invalid_payload');
  });

  it('treats a raw body of another type as a programming error', () => {
    const payload = c.payload();
    expect(() => c.verify(payload as unknown as string, headersFor(JSON.stringify(payload)), KEY)).toThrow(TypeError);
    expect(() => c.verify(payload as unknown as string, headersFor(JSON.stringify(payload)), KEY)).toThrow(/raw body/);
    const body = JSON.stringify(payload);
    expect(() => c.verify(body, headersFor(body), KEY, { maxBodyBytes: 0 })).toThrow(RangeError);
  });
});

describe('verify: web webhook status signature (D22)', () => {
  it('rejects a body whose status signature is wrong even though X-Signature holds', () => {
    const cases: Json[] = [
      webPayload('web_20261122_0007', 'SUCCESS', OTHER_KEY), // signed with another key
      { ...webPayload('web_20261122_0007', 'FAILURE'), status: 'SUCCESS' }, // the signature of another status
      { ...webPayload('web_20261122_0008', 'SUCCESS'), transactionId: 'web_20261122_0007' }, // of another id
    ];
    for (const payload of cases) {
      const body = JSON.stringify(payload);
      const error = expectFailure(() => verifyWebWebhook(body, headersFor(body), KEY), 'bad_signature');
      expect(error.message).toMatch(/status signature/);
    }
  });

  it('rejects a body signature that is not a signature at all as invalid_payload (the schema checks its form)', () => {
    const body = JSON.stringify({ ...webPayload('web_20261122_0007', 'SUCCESS'), signature: 'abc' });
    const error = expectFailure(() => verifyWebWebhook(body, headersFor(body), KEY), 'invalid_payload');
    expect(error.issues.some((issue) => issue.path === '/signature')).toBe(true);
  });

  it('requires the X-Signature header, since the document defines it as required', () => {
    const doc = document('web') as { components: { parameters: Record<string, { name: string; required?: boolean }> } };
    expect(Object.values(doc.components.parameters).find((p) => p.name === 'X-Signature')?.required).toBe(true);
    const body = JSON.stringify(webPayload('web_20261122_0007', 'SUCCESS'));
    expectFailure(() => verifyWebWebhook(body, { 'content-type': 'application/json' }, KEY), 'missing_signature');
  });
});

describe('verify: gateway webhook kinds', () => {
  it('refuses a body that is neither { transaction } nor { refund }, or both', () => {
    const transaction = example('gateway', 'transactionUpdated', 'success');
    const refund = example('gateway', 'refundUpdated', 'succeeded');
    for (const payload of [{}, { transactions: transaction.transaction }, { ...transaction, ...refund }]) {
      const body = JSON.stringify(payload);
      const error = expectFailure(() => verifyGatewayWebhook(body, headersFor(body), KEY), 'invalid_payload');
      expect(error.message).toContain('matches none of the gateway webhooks (transactionUpdated, refundUpdated)');
      expect(error.issues.length).toBeGreaterThan(0);
    }
  });

  it('names the webhook by the schema the body matches, and words the issues of the closest one', () => {
    const refund = example('gateway', 'refundUpdated', 'failed');
    const body = JSON.stringify(refund);
    expect(verifyGatewayWebhook(body, headersFor(body), KEY).name).toBe('refundUpdated');
    const broken = JSON.stringify({ refund: { ...(refund.refund as object), amount: 'fifty' } });
    const error = expectFailure(() => verifyGatewayWebhook(broken, headersFor(broken), KEY), 'invalid_payload');
    expect(error.message).toContain('as a refundUpdated webhook');
    expect(error.issues.map(({ path }) => path)).toContain('/refund/amount');
  });

  it('narrows the payload by kind', () => {
    const body = JSON.stringify(example('gateway', 'refundUpdated', 'failed'));
    const event = verifyGatewayWebhook(body, headersFor(body), KEY);
    if (event.kind === 'refund') {
      expectTypeOf(event.payload).toEqualTypeOf<GatewayRefundWebhookPayload>();
      expect(event.payload.refund.status).toBe('FAILED');
    } else {
      expectTypeOf(event.payload).toEqualTypeOf<GatewayTransactionWebhookPayload>();
      throw new Error('expected a refund');
    }
  });
});

/** The JSON body of a webhook operation, as openapi-typescript typed its schema. */
type BodyOf<W> = W extends { post: { requestBody: { content: { 'application/json': infer B } } } } ? B : never;
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/**
 * True when, for every webhook of the family, the verifier's payload and the sandbox's `send`
 * payload are exactly the type of its schema in generated/types/<family>.d.ts.
 */
type AgreesWithSchemas<F extends 'gateway' | 'sdk' | 'web', Document> = {
  [E in WebhookName<F>]: Same<Extract<VerifiedWebhook<F>, { name: E }>['payload'], BodyOf<Document[E & keyof Document]>> extends true
    ? Same<Parameters<SendWebhook<F>>[1], VerifiedWebhook<F>['payload']>
    : false;
}[WebhookName<F>];

describe('types', () => {
  it('of every webhook payload, verified or sent, are the types of its schema', () => {
    const agree: [AgreesWithSchemas<'gateway', GatewayDocument>, AgreesWithSchemas<'sdk', SdkDocument>, AgreesWithSchemas<'web', WebDocument>] = [true, true, true];
    const named: [
      Same<SdkWebhookPayload, BodyOf<SdkDocument['transactionStatus']>>,
      Same<WebWebhookPayload, BodyOf<WebDocument['transactionStatus']>>,
      Same<GatewayTransactionWebhookPayload, BodyOf<GatewayDocument['transactionUpdated']>>,
      Same<GatewayRefundWebhookPayload, BodyOf<GatewayDocument['refundUpdated']>>,
    ] = [true, true, true, true];
    expect([...agree, ...named]).toEqual([true, true, true, true, true, true, true]);
  });

  it('come from the generated modules', () => {
    expectTypeOf<Extract<VerifiedSdkWebhook, { name: 'transactionStatus' }>['payload']>().toEqualTypeOf<SdkWebhookPayload>();
    expectTypeOf<Extract<VerifiedWebWebhook, { name: 'transactionStatus' }>['payload']>().toEqualTypeOf<WebWebhookPayload>();
    expectTypeOf<SdkWebhookPayload['merchantTransactionId']>().toBeString();
    expectTypeOf<WebWebhookPayload['status']>().toEqualTypeOf<'SUCCESS' | 'FAILURE' | 'CANCELLED'>();
    expectTypeOf<VerifiedGatewayWebhook['kind']>().toEqualTypeOf<'transaction' | 'refund'>();
    expectTypeOf<VerifiedGatewayWebhook['name']>().toEqualTypeOf<'transactionUpdated' | 'refundUpdated'>();
    expectTypeOf<'transactionStatus'>().toExtend<VerifiedSdkWebhook['name']>();
    const handler = createWebhookHandler({
      family: 'gateway',
      secret: KEY,
      onEvent: (event) => {
        expectTypeOf(event).toEqualTypeOf<VerifiedGatewayWebhook>();
      },
    });
    expectTypeOf(handler).parameter(0).toEqualTypeOf<IncomingMessage>();
  });
});

// ---------------------------------------------------------------------------------------------
// The Node handler through a real server.

interface Running {
  url: string;
  server: Server;
}

const servers: Server[] = [];

async function serve(listener: Parameters<typeof createServer>[1]): Promise<Running> {
  const server = createServer(listener);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hook`, server };
}

afterAll(async () => {
  await Promise.all(
    servers.map((server) => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); })),
  );
});

async function post(url: string, body: string | Buffer, headers: Record<string, string>): Promise<{ status: number; text: string; json: unknown }> {
  const response = await fetch(url, { method: 'POST', body: typeof body === 'string' ? body : new Uint8Array(body), headers });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  return { status: response.status, text, json };
}

describe.each(CASES)('handler: $label webhook over HTTP', (c) => {
  const onEvent = vi.fn();
  const onError = vi.fn();
  let running: Running;

  beforeAll(async () => {
    running = await serve(createWebhookHandler({ family: c.family, secret: KEY, onEvent, onError, maxBodyBytes: 64 * 1024 }));
  });
  afterEach(() => {
    onEvent.mockReset();
    onError.mockReset();
  });

  it('answers 200 and calls onEvent exactly once with the verified event', async () => {
    const payload = c.payload();
    const body = JSON.stringify(payload);
    const answer = await post(running.url, body, headersFor(body));
    expect(answer.status).toBe(200);
    expect(onEvent).toHaveBeenCalledTimes(1);
    const event = onEvent.mock.calls[0]?.[0] as { payload: unknown; eventId?: string; kind?: string };
    expect(event.payload).toEqual(payload);
    expect(event.eventId).toBe('evt_0001');
    if (c.kind !== undefined) expect(event.kind).toBe(c.kind);
    expect(onError).not.toHaveBeenCalled();
  });

  it('answers 401 for a missing or bad signature, without calling onEvent', async () => {
    const body = JSON.stringify(c.payload());
    const { 'X-Signature': _dropped, ...unsigned } = headersFor(body);
    const requests: [Record<string, string>, string, WebhookFailureReason][] = [
      [unsigned, body, 'missing_signature'],
      [headersFor(body, OTHER_KEY), body, 'bad_signature'],
      [headersFor(body), body.replace('SUCCESS', 'FAILURE'), 'bad_signature'],
      [headersFor(body, KEY, { 'X-Signature': 'not-base64!' }), body, 'bad_signature'],
    ];
    for (const [headers, sent, reason] of requests) {
      const answer = await post(running.url, sent, headers);
      expect(answer.status).toBe(401);
      expect(answer.json).toEqual({ error: reason, message: expect.stringMatching(/X-Signature/) });
      expect(answer.text).not.toContain(KEY);
    }
    expect(onEvent).not.toHaveBeenCalled();
    expect(onError).toHaveBeenCalledTimes(requests.length);
    expect(onError.mock.calls.every(([error]) => error instanceof WebhookVerificationError)).toBe(true);
  });

  it('answers 400 for a wrong content type, malformed JSON, an invalid payload, a body too large', async () => {
    const payload = c.payload();
    const invalid = c.payload();
    c.holder(invalid).status = 'REVERSED';
    const valid = JSON.stringify(payload);
    const requests: [string | Buffer, Record<string, string>, WebhookFailureReason][] = [
      [valid, headersFor(valid, KEY, { 'Content-Type': 'text/plain' }), 'wrong_content_type'],
      ['{"nope"', headersFor('{"nope"'), 'malformed_json'],
      [JSON.stringify(invalid), headersFor(JSON.stringify(invalid)), 'invalid_payload'],
      [valid.padEnd(64 * 1024 + 1, ' '), headersFor(valid.padEnd(64 * 1024 + 1, ' ')), 'payload_too_large'],
    ];
    // Each 400 says what was wrong, in words that name the header, the JSON, the field or the limit.
    const says: Record<string, RegExp> = {
      wrong_content_type: /Content-Type is "text\/plain"; expected application\/json/,
      malformed_json: /not valid JSON/,
      invalid_payload: /status/,
      payload_too_large: /limit of 65536 bytes/,
    };
    for (const [body, headers, reason] of requests) {
      const answer = await post(running.url, body, headers);
      expect(answer.status, reason).toBe(400);
      expect(answer.json).toEqual({ error: reason, message: expect.stringMatching(says[reason]!) });
      expect(answer.text).not.toContain(KEY);
    }
    expect(onEvent).not.toHaveBeenCalled();
  });
});

describe('handler behaviour', () => {
  const body = JSON.stringify(example('sdk', 'transactionStatus', 'success'));

  it('answers 500 with no message or stack when onEvent throws, so that the service retries', async () => {
    const onError = vi.fn();
    const secretMessage = 'database password hunter2 at db.internal';
    const running = await serve(
      createWebhookHandler({
        family: 'sdk',
        secret: KEY,
        onError,
        onEvent: async () => {
          throw new Error(secretMessage);
        },
      }),
    );
    const answer = await post(running.url, body, headersFor(body));
    expect(answer.status).toBe(500);
    expect(answer.json).toEqual({ error: 'handler_failed' });
    expect(answer.text).not.toContain('hunter2');
    expect(answer.text).not.toMatch(/\bat\b|Error|\.ts|\.js/);
    expect(onError).toHaveBeenCalledTimes(1);
    expect((onError.mock.calls[0]?.[0] as Error).message).toBe(secretMessage);
  });

  it('waits for onEvent before answering 200', async () => {
    const order: string[] = [];
    const running = await serve(
      createWebhookHandler({
        family: 'sdk',
        secret: KEY,
        onEvent: async () => {
          await new Promise((resolve) => setTimeout(resolve, 50));
          order.push('onEvent done');
        },
      }),
    );
    const answer = await post(running.url, body, headersFor(body));
    order.push('answered');
    expect(answer.status).toBe(200);
    expect(order).toEqual(['onEvent done', 'answered']);
  });

  it('logs what onEvent threw to console.error by default, and nothing for refused requests', async () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const running = await serve(
        createWebhookHandler({ family: 'sdk', secret: KEY, onEvent: () => { throw new Error('boom'); } }),
      );
      expect((await post(running.url, body, headersFor(body, OTHER_KEY))).status).toBe(401);
      expect(spy).not.toHaveBeenCalled();
      expect((await post(running.url, body, headersFor(body))).status).toBe(500);
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
  });

  it('answers 405 to another method', async () => {
    const onEvent = vi.fn();
    const running = await serve(createWebhookHandler({ family: 'sdk', secret: KEY, onEvent }));
    const response = await fetch(running.url);
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(await response.json()).toEqual({ error: 'method_not_allowed', message: 'a webhook is sent with POST (got "GET")' });
    expect(onEvent).not.toHaveBeenCalled();
  });

  it('uses req.body when a raw parser left the bytes or the text (express.raw, express.text)', async () => {
    const onEvent = vi.fn();
    const handler = createWebhookHandler({ family: 'sdk', secret: KEY, onEvent });
    for (const asText of [false, true]) {
      const running = await serve((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          const raw = Buffer.concat(chunks);
          Object.assign(req, { body: asText ? raw.toString('utf8') : raw });
          handler(req, res);
        });
      });
      const answer = await post(running.url, body, headersFor(body));
      expect(answer.status).toBe(200);
    }
    expect(onEvent).toHaveBeenCalledTimes(2);
  });

  it('answers 400 raw_body_required, not 500, when a JSON parser already consumed the body', async () => {
    const onEvent = vi.fn();
    const onError = vi.fn();
    const handler = createWebhookHandler({ family: 'sdk', secret: KEY, onEvent, onError });
    const running = await serve((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        // What express.json() does.
        Object.assign(req, { body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown, _body: true });
        handler(req, res);
      });
    });
    const answer = await post(running.url, body, headersFor(body));
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({ error: 'raw_body_required', message: expect.stringMatching(/express\.raw/) });
    expect(onEvent).not.toHaveBeenCalled();
    const error = onError.mock.calls[0]?.[0] as Error;
    expect(error).toBeInstanceOf(WebhookRawBodyError);
    expect(error.message).toMatch(/express\.raw/);
  });

  it('reads the stream itself when an earlier JSON parser left req.body = {} unread (body-parser 1.x on another type)', async () => {
    const onEvent = vi.fn();
    const handler = createWebhookHandler({ family: 'sdk', secret: KEY, onEvent });
    const running = await serve((req, res) => {
      Object.assign(req, { body: {} });
      handler(req, res);
    });
    expect((await post(running.url, body, headersFor(body))).status).toBe(200);
    expect(onEvent).toHaveBeenCalledTimes(1);
  });

  it('stops reading a chunked body past the limit and answers 400 payload_too_large', async () => {
    const onEvent = vi.fn();
    let received = 0;
    const handler = createWebhookHandler({ family: 'sdk', secret: KEY, onEvent, maxBodyBytes: 1024 });
    const running = await serve((req, res) => {
      req.on('data', (chunk: Buffer) => {
        received += chunk.length;
      });
      handler(req, res);
    });
    const { port } = running.server.address() as AddressInfo;
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/hook', method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Signature': sdkSignature(body, KEY) } });
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      // Chunked (no Content-Length): 600 bytes, then 600 more, then the client waits.
      req.write(Buffer.alloc(600, 0x20));
      setTimeout(() => req.write(Buffer.alloc(600, 0x20)), 20);
    });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toEqual({ error: 'payload_too_large', message: 'the body is longer than the limit of 1024 bytes' });
    expect(received).toBeLessThanOrEqual(1200);
    expect(onEvent).not.toHaveBeenCalled();
  });

  it('answers 400 payload_too_large from Content-Length alone, before reading', async () => {
    const onEvent = vi.fn();
    const running = await serve(createWebhookHandler({ family: 'sdk', secret: KEY, onEvent }));
    const big = `${body}${' '.repeat(DEFAULT_MAX_BODY_BYTES)}`;
    const answer = await post(running.url, big, headersFor(big));
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ error: 'payload_too_large', message: expect.stringMatching(/limit/) });
    expect(onEvent).not.toHaveBeenCalled();
  });

  it('drops a request aborted mid-body quietly and keeps serving', async () => {
    const onEvent = vi.fn();
    const onError = vi.fn();
    const running = await serve(createWebhookHandler({ family: 'sdk', secret: KEY, onEvent, onError }));
    const { port } = running.server.address() as AddressInfo;
    await new Promise<void>((resolve) => {
      const req = request({ host: '127.0.0.1', port, path: '/hook', method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Length': '1000' } });
      req.on('error', () => resolve());
      req.write('{"merchantTransactionId"', () => {
        setTimeout(() => {
          req.destroy();
          resolve();
        }, 20);
      });
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(onEvent).not.toHaveBeenCalled();
    expect(onError).not.toHaveBeenCalled();
    expect((await post(running.url, body, headersFor(body))).status).toBe(200);
    expect(onEvent).toHaveBeenCalledTimes(1);
  });

  it('handles concurrent deliveries independently', async () => {
    const onEvent = vi.fn();
    const running = await serve(createWebhookHandler({ family: 'sdk', secret: KEY, onEvent }));
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, index) => {
        const text = JSON.stringify({ merchantTransactionId: `ord_${index}`, status: 'SUCCESS' });
        return post(running.url, text, headersFor(text, index % 2 === 0 ? KEY : OTHER_KEY));
      }),
    );
    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 20 }, (_, index) => (index % 2 === 0 ? 200 : 401)));
    expect(onEvent).toHaveBeenCalledTimes(10);
  });

  it('refuses bad options when created', () => {
    const onEvent = () => undefined;
    expect(() => createWebhookHandler({ family: 'sdk', secret: '', onEvent })).toThrow(TypeError);
    expect(() => createWebhookHandler({ family: 'nope' as 'sdk', secret: KEY, onEvent })).toThrow(TypeError);
    expect(() => createWebhookHandler({ family: 'toString' as 'sdk', secret: KEY, onEvent })).toThrow(TypeError);
    expect(() => createWebhookHandler({ family: 'sdk', secret: KEY, onEvent, maxBodyBytes: -1 })).toThrow(RangeError);
  });
});

// ---------------------------------------------------------------------------------------------

describe('createDeduplicator', () => {
  it('reports a key as seen once recorded, until its TTL passes', () => {
    let now = 1_000;
    const dedupe = createDeduplicator({ ttlMs: 100, now: () => now });
    expect(dedupe.seen('evt_1')).toBe(false);
    expect(dedupe.seen('evt_1')).toBe(true);
    expect(dedupe.seen('evt_2')).toBe(false);
    now += 99;
    expect(dedupe.seen('evt_1')).toBe(true);
    now += 1;
    expect(dedupe.size).toBe(0);
    expect(dedupe.seen('evt_1')).toBe(false);
    expect(dedupe.seen('evt_1')).toBe(true);
  });

  it('forgets the oldest keys beyond max, and a key on request', () => {
    const dedupe = createDeduplicator({ max: 2 });
    expect(dedupe.seen('a')).toBe(false);
    expect(dedupe.seen('b')).toBe(false);
    expect(dedupe.seen('c')).toBe(false);
    expect(dedupe.size).toBe(2);
    expect(dedupe.seen('a')).toBe(false);
    dedupe.forget('c');
    expect(dedupe.seen('c')).toBe(false);
  });

  it('drops a replayed delivery in onEvent, keyed on the signed pair', async () => {
    const dedupe = createDeduplicator();
    const processed: string[] = [];
    const running = await serve(
      createWebhookHandler({
        family: 'sdk',
        secret: KEY,
        onEvent: (event) => {
          if (event.name !== 'transactionStatus') return;
          const key = `${event.payload.merchantTransactionId}|${event.payload.status}`;
          if (dedupe.seen(key)) return;
          processed.push(key);
        },
      }),
    );
    const text = JSON.stringify({ merchantTransactionId: 'ord_9', status: 'SUCCESS' });
    // A retry and a replay with a forged X-Event-Id: the same signed pair.
    expect((await post(running.url, text, headersFor(text, KEY, { 'X-Event-Id': 'evt_a' }))).status).toBe(200);
    expect((await post(running.url, text, headersFor(text, KEY, { 'X-Event-Id': 'evt_b' }))).status).toBe(200);
    expect(processed).toEqual(['ord_9|SUCCESS']);
  });

  it('refuses bad options', () => {
    expect(() => createDeduplicator({ ttlMs: 0 })).toThrow(RangeError);
    expect(() => createDeduplicator({ max: 0 })).toThrow(RangeError);
  });
});
