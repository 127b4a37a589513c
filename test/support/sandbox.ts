/**
 * Helpers of the sandbox tests: an in-process sandbox on a free port, signed calls with the raw
 * `fetch`, and the self-check: every answer of a contract operation is validated against the
 * bundled document's response schema for its status (test/sandbox/contract.test.ts tests the check).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, expect, inject } from 'vitest';
import { sdkSignature, webSignature } from '../../src/signature.js';
import { createSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/server.js';
import type { Logger } from '../../src/sandbox/router.js';
import { APPROVED_TEST_USER, TEST_CREDENTIALS } from '../../src/sandbox/fixtures.js';
import { loadContract, validateResponse, type Contract } from '../../src/sandbox/validation.js';
import { matchOperation } from './contract-paths.js';
import { createTestDatabase } from './postgres.js';

export const PARTNER_ID: string = TEST_CREDENTIALS.partner.id;
export const PRIVATE_KEY: string = TEST_CREDENTIALS.partner.privateKey;
const { username: extrasUser, password: extrasPassword } = TEST_CREDENTIALS.extras;
export const EXTRAS_AUTH = `Basic ${Buffer.from(`${extrasUser}:${extrasPassword}`).toString('base64')}`;

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /**
   * The parsed JSON body (undefined when not JSON). An error body comes without its `requestId`:
   * `request()` has checked that it is there and equals the `X-Request-Id` header (D29).
   */
  body: any;
  /** The contract operation the request matched, if any. */
  operationId: string | undefined;
}

export interface TestSandbox {
  sandbox: Sandbox;
  url: string;
  /** Errors the sandbox logged (an unexpected exception shows here). */
  loggedErrors: string[];
  /** A request; the answer is checked against the contract when the path is an operation's. */
  request(method: string, pathAndQuery: string, init?: { body?: string | Uint8Array<ArrayBuffer>; headers?: Record<string, string> }): Promise<Answer>;
  /** A signed SDK-flow call (X-Partnerid + X-Signature over the exact body). */
  sdk(path: string, body: unknown, options?: SignedOptions): Promise<Answer>;
  /** A signed web-flow call (X-Partner-Id + X-Signature over body + path and query). */
  web(method: 'GET' | 'POST', pathAndQuery: string, body?: unknown, options?: SignedOptions): Promise<Answer>;
  /** An extras call with the extras test credentials. */
  extras(pathAndQuery: string, body?: unknown, options?: { authorization?: string | null }): Promise<Answer>;
  /** POST /sandbox/clock/advance. */
  advance(ms: number): Promise<void>;
  deliveries(transactionId?: string): Promise<any[]>;
  close(): Promise<void>;
}

interface SignedOptions {
  partnerId?: string | null;
  /** A signature to send instead of the right one; null: no X-Signature header. */
  signature?: string | null;
  key?: string;
  contentType?: string | null;
}

let contracts: Promise<Contract[]> | undefined;
function allContracts(): Promise<Contract[]> {
  contracts ??= Promise.all(['sdk', 'web', 'extras', 'gateway'].map((family) => loadContract(family)));
  return contracts;
}

/** Validates one answer against the contract; returns the matched operationId. */
/**
 * A fetch for the package's clients that checks every answer against the bundled documents: the
 * operation must exist and the answer must be documented and valid.
 */
export async function validatingFetch(request: Request): Promise<Response> {
  const url = new URL(request.url);
  const response = await fetch(request);
  const text = await response.clone().text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  const operationId = await checkAgainstContract(request.method, `${url.pathname}${url.search}`, {
    status: response.status,
    headers: response.headers,
    text,
    body,
  });
  expect(operationId, `${request.method} ${url.pathname} is an operation of the documents`).toBeDefined();
  return response;
}

export async function checkAgainstContract(method: string, pathAndQuery: string, answer: Omit<Answer, 'operationId'>): Promise<string | undefined> {
  const pathname = pathAndQuery.split('?', 1)[0] ?? '/';
  for (const contract of await allContracts()) {
    const matched = matchOperation(contract, method, pathname);
    if (matched === undefined) continue;
    const { operation } = matched;
    // The shared sandbox's answer while its database is away: the sandbox's own, not the service's
    // (docs/sandbox.md, "A shared sandbox"); its body is checked by test/shared/faults.test.ts.
    if (answer.status === 503 && (answer.body?.message === 'SERVICE_UNAVAILABLE' || answer.body?.errorCode === 'SERVICE_UNAVAILABLE')) {
      return operation.operationId;
    }
    const result = validateResponse(operation, answer.status, answer.body, answer.headers.get('content-type') ?? '');
    expect(result.documented, `${operation.operationId} answered ${answer.status}, which its contract does not list`).toBe(true);
    expect(result.issues, `${operation.operationId} ${answer.status} body ${answer.text} violates the contract`).toEqual([]);
    return operation.operationId;
  }
  return undefined;
}

/**
 * Checks the request id of an answer (D29): every answer has an `X-Request-Id`, and every JSON error
 * body repeats it as `requestId`. Returns the body without `requestId`.
 */
function checkRequestId(answer: { status: number; headers: Headers; body: unknown }): any {
  const id = answer.headers.get('x-request-id');
  expect(id, 'every answer has an X-Request-Id').toMatch(/^[A-Za-z0-9._-]{1,64}$/);
  const { body } = answer;
  if (answer.status < 400 || body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const { requestId, ...rest } = body as Record<string, unknown>;
  expect(requestId, `the error body ${JSON.stringify(body)} repeats X-Request-Id`).toBe(id);
  return rest;
}

/**
 * The usual setup of a test file: one sandbox for the file, closed after it, and no error logged
 * by any test. The handle is filled in before the first test runs.
 */
export function useSandbox(options: SandboxOptions = {}): TestSandbox {
  const handle = {} as TestSandbox;
  beforeAll(async () => {
    Object.assign(handle, await startSandbox(options));
  });
  afterAll(async () => {
    await handle.close?.();
  });
  afterEach(() => {
    expect(handle.loggedErrors).toEqual([]);
  });
  return handle;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<TestSandbox> {
  const loggedErrors: string[] = [];
  const logger: Logger = {
    info: () => undefined,
    warn: () => undefined,
    error: (message, error) => loggedErrors.push(`${message}: ${error instanceof Error ? error.stack : String(error)}`),
  };
  // `npm run test:shared`: every sandbox on a fresh database of the run's PostgreSQL cluster.
  const postgresUrl = inject('postgresUrl');
  const onDatabase =
    postgresUrl !== undefined && options.store === undefined && options.databaseUrl === undefined
      ? { databaseUrl: await createTestDatabase(postgresUrl) }
      : {};
  const sandbox = await createSandbox({ logger, ...options, ...onDatabase });
  if ('databaseUrl' in onDatabase && !sandbox.stateDescription.startsWith('PostgreSQL')) {
    throw new Error(`the sandbox keeps its state ${sandbox.stateDescription}, not on the shared store`);
  }
  const url = await sandbox.listen(0, '127.0.0.1');

  const request: TestSandbox['request'] = async (method, pathAndQuery, init = {}) => {
    const response = await fetch(`${url}${pathAndQuery}`, {
      method,
      headers: init.headers ?? {},
      ...(init.body === undefined ? {} : { body: init.body }),
    });
    const text = await response.text();
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    const partial = { status: response.status, headers: response.headers, text, body };
    const operationId = await checkAgainstContract(method, pathAndQuery, partial);
    return { ...partial, body: checkRequestId(partial), operationId };
  };

  // The helpers that move the clock and read every delivery act as the operator of a hosted sandbox.
  const operator = (): Record<string, string> => (sandbox.access.hosted ? { Authorization: `Bearer ${sandbox.access.operatorToken}` } : {});
  const signedHeaders = (signature: string, options: SignedOptions, partnerHeader: string) => {
    const headers: Record<string, string> = {};
    if (options.contentType !== null) headers['Content-Type'] = options.contentType ?? 'application/json';
    if (options.partnerId !== null) headers[partnerHeader] = options.partnerId ?? PARTNER_ID;
    if (options.signature !== null) headers['X-Signature'] = options.signature ?? signature;
    return headers;
  };

  return {
    sandbox,
    url,
    loggedErrors,
    request,
    sdk(path, body, options = {}) {
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      const signature = sdkSignature(text, options.key ?? PRIVATE_KEY);
      return request('POST', path, { body: text, headers: signedHeaders(signature, options, 'X-Partnerid') });
    },
    web(method, pathAndQuery, body, options = {}) {
      const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
      const signature = webSignature(text, pathAndQuery, options.key ?? PRIVATE_KEY);
      const headers = signedHeaders(signature, method === 'GET' ? { ...options, contentType: null } : options, 'X-Partner-Id');
      return request(method, pathAndQuery, { ...(method === 'GET' ? {} : { body: text }), headers });
    },
    extras(pathAndQuery, body, options = {}) {
      const headers: Record<string, string> = {};
      if (options.authorization !== null) headers.Authorization = options.authorization ?? EXTRAS_AUTH;
      if (body !== undefined) headers['Content-Type'] = 'application/json';
      return request('POST', pathAndQuery, {
        headers,
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      });
    },
    async advance(ms) {
      const answer = await request('POST', '/sandbox/clock/advance', {
        body: JSON.stringify({ ms }),
        headers: { 'Content-Type': 'application/json', ...operator() },
      });
      expect(answer.status).toBe(200);
    },
    async deliveries(transactionId) {
      // Every page, following nextCursor.
      const all: any[] = [];
      let after: string | null = null;
      do {
        const query = new URLSearchParams({ limit: '1000' });
        if (transactionId !== undefined) query.set('transactionId', transactionId);
        if (after !== null) query.set('after', after);
        const answer = await request('GET', `/sandbox/webhooks/deliveries?${query}`, { headers: operator() });
        expect(answer.status).toBe(200);
        all.push(...(answer.body.deliveries as any[]));
        after = answer.body.nextCursor as string | null;
      } while (after !== null);
      return all;
    },
    close: () => sandbox.close(),
  };
}

/** Initiates an SDK transaction and checks it was accepted. */
export async function initiateSdk(t: TestSandbox, id: string, amount = 250_000): Promise<void> {
  const answer = await t.sdk('/merchant/credit/initiateTransaction', {
    merchantTransactionId: id,
    userPhoneNumber: APPROVED_TEST_USER.phoneNumber,
    userId: 'user_1',
    amount,
  });
  expect(answer.status, answer.text).toBe(201);
}

/** Polls `check` until it returns a value other than undefined (or fails after `timeoutMs`). */
export async function waitFor<T>(check: () => Promise<T | undefined> | T | undefined, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`waitFor: timed out after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export interface ReceivedWebhook {
  /** The path and query the request was sent to. */
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  answeredWith: number;
}

/**
 * A local webhook receiver; `answer(n)` chooses the status of the n-th request (0-based). A 3xx
 * answer carries `Location: /redirected` (of the receiver), so that a followed redirect would show
 * as a request to that path.
 */
export interface Receiver {
  url: string;
  received: ReceivedWebhook[];
  close(): Promise<void>;
}

export async function startReceiver(answer: (index: number, body: string) => number = () => 200): Promise<Receiver> {
  const received: ReceivedWebhook[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const status = answer(received.length, body);
      received.push({ url: request.url ?? '/', headers: request.headers, body, answeredWith: status });
      const redirect = status >= 300 && status < 400 ? { Location: '/redirected' } : {};
      response.writeHead(status, { 'Content-Type': 'text/plain', ...redirect });
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhook`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
