/**
 * The Prism mocks (scripts/mock-servers.ts and the `npm run mock` CLI): every family answers its
 * documented examples, `Prefer` picks responses, and what the mock can check (Basic credentials,
 * the form of X-Signature, request bodies) is rejected when wrong, with a body in the family's error
 * format that names what is wrong (scripts/mock-proxy.ts) and is valid against the contract. The
 * CLI fails fast on a taken port and leaves no Prism behind when it is stopped.
 *
 * The CLI's SIGTERM is checked here with one family, and with all four in the slow group
 * (test/scripts/mock-cli.test.ts).
 *
 * Ports: each test takes a block of four free ports at a random offset from the usual ones
 * (4010-4013), so that a running `npm run mock`, or other tests, do not disturb it.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAMILIES, MOCK_PORTS, type Family } from '../../scripts/families.js';
import { MockStartError, startMocks, type RunningMocks } from '../../scripts/mock-servers.js';
import { sdkSignature, webSignature } from '../../src/signature.js';
import { loadContract, validateResponse } from '../../src/sandbox/validation.js';
import { matchOperation } from '../support/contract-paths.js';
import { expectCliStopsItsPrisms, finished, freeOffset, isAlive, occupy, portsAt, waitFor } from '../support/mock-processes.js';

const root = resolve(import.meta.dirname, '../..');
const PRIVATE_KEY = 'test_private_key';
const BASIC = `Basic ${Buffer.from('merchant_demo:secret_demo').toString('base64')}`;
const WELL_FORMED_SIGNATURE = 'qvSZ/F8ixk3Rb7Bq+pEWvRQ2HK0FmL+cMaf0+r8aXOk=';

type Json = Record<string, unknown>;
const documents = Object.fromEntries(
  FAMILIES.map((f) => [f, JSON.parse(readFileSync(join(root, 'generated', 'openapi', `${f}.json`), 'utf8')) as Json]),
) as Record<Family, Json>;

/** Follows a local `$ref` of the bundled document. */
function deref(document: Json, value: unknown): Json {
  let current = value as Json;
  for (let hops = 0; typeof current?.$ref === 'string' && hops < 20; hops++) {
    const pointer = (current.$ref as string).replace(/^#\//, '').split('/');
    current = pointer.reduce<unknown>((node, key) => (node as Json)[key.replace(/~1/g, '/').replace(/~0/g, '~')], document) as Json;
  }
  return current;
}

function operation(family: Family, operationId: string): { path: string; method: string; op: Json } {
  const paths = documents[family].paths as Record<string, Record<string, Json>>;
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (op.operationId === operationId) return { path, method: method.toUpperCase(), op };
    }
  }
  throw new Error(`${family} has no operation ${operationId}`);
}

/** The named examples of one response (or of the request body when status is 'request'). */
function examples(family: Family, operationId: string, status: string): Record<string, unknown> {
  const { op } = operation(family, operationId);
  const holder =
    status === 'request'
      ? deref(documents[family], op.requestBody)
      : deref(documents[family], (op.responses as Json)[status]);
  const media = (holder.content as Record<string, Json>)['application/json'] as Json;
  const named = (media.examples ?? {}) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(named).map(([name, ex]) => [name, deref(documents[family], ex).value]));
}

function firstExample(family: Family, operationId: string, status: string): unknown {
  const values = Object.values(examples(family, operationId, status));
  if (values.length === 0) throw new Error(`${family} ${operationId} ${status} has no example`);
  return values[0];
}

interface Answer {
  status: number;
  body: unknown;
  headers: Headers;
}

async function call(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  const response = await fetch(url, {
    method,
    headers: body === undefined ? headers : { 'Content-Type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body }),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: keep the text.
  }
  return { status: response.status, body: parsed, headers: response.headers };
}

let mocks: RunningMocks | undefined;
const base = (family: Family): string => {
  const url = mocks?.urls[family];
  if (!url) throw new Error(`the ${family} mock is not running`);
  return url;
};

// Requests built from the documents' own examples, one per family.
const gatewayGet = () => call(`${base('gateway')}/api/merchant/m_1`, 'GET', { Authorization: BASIC });
const extrasCreditPath = () => {
  const { path } = operation('extras', 'getCreditInfo');
  return `${path}?userPhoneNumber=${encodeURIComponent('+919000000001')}`;
};
const webBody = () => JSON.stringify(firstExample('web', 'initiateWebTransaction', 'request'));
const sdkBody = () => JSON.stringify(firstExample('sdk', 'initiateSdkTransaction', 'request'));
const sdkInitiate = (headers: Record<string, string>, body = sdkBody()) =>
  call(`${base('sdk')}/merchant/credit/initiateTransaction`, 'POST', { 'X-Partnerid': 'partner_demo', ...headers }, body);
const webInitiate = (headers: Record<string, string>, body = webBody()) =>
  call(`${base('web')}/api/transaction`, 'POST', { 'X-Partner-Id': 'partner_demo', ...headers }, body);

function violations(answer: Answer): string {
  return answer.headers.get('sl-violations') ?? '';
}

/** Checks an answer against the family's document: a documented status with a valid body. */
async function expectDocumented(family: Family, method: string, path: string, answer: Answer): Promise<void> {
  const contract = await loadContract(family);
  const operation = matchOperation(contract, method, path.split('?', 1)[0] ?? '/')?.operation;
  expect(operation, `${method} ${path} is an operation of ${family}`).toBeDefined();
  const result = validateResponse(operation!, answer.status, answer.body, answer.headers.get('content-type') ?? '');
  expect(result.documented, `${answer.status} is documented`).toBe(true);
  expect(result.issues, `${JSON.stringify(answer.body)} is valid`).toEqual([]);
}

describe('startMocks', () => {
  let ports: Record<Family, number>;
  beforeAll(async () => {
    ports = portsAt(await freeOffset());
    mocks = await startMocks({ ports });
  }, 90_000);

  afterAll(async () => {
    await mocks?.stop();
  });

  it('serves every family on the ports asked for', () => {
    for (const family of FAMILIES) {
      expect(mocks?.urls[family]).toBe(`http://127.0.0.1:${ports[family]}`);
      expect(mocks?.pids[family]).toBeGreaterThan(0);
    }
  });

  it('gateway: GET /api/merchant/{id} with Basic credentials answers the documented example', async () => {
    const answer = await gatewayGet();
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual(firstExample('gateway', 'getMerchant', '200'));
  });

  it('extras: credit info with Basic credentials answers the documented example', async () => {
    const answer = await call(`${base('extras')}${extrasCreditPath()}`, 'POST', { Authorization: BASIC });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual(firstExample('extras', 'getCreditInfo', '200'));
  });

  it('web: a signed POST /api/transaction answers the documented example', async () => {
    const body = webBody();
    const answer = await webInitiate({ 'X-Signature': webSignature(body, '/api/transaction', PRIVATE_KEY) }, body);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual(firstExample('web', 'initiateWebTransaction', '200'));
  });

  it('sdk: a signed initiate answers the documented example', async () => {
    const body = sdkBody();
    const answer = await sdkInitiate({ 'X-Signature': sdkSignature(body, PRIVATE_KEY) }, body);
    expect(answer.status).toBe(201);
    expect(answer.body).toEqual(firstExample('sdk', 'initiateSdkTransaction', '201'));
  });

  it('`Prefer: code=401` selects the documented 401 answer', async () => {
    const sdk = await sdkInitiate({ 'X-Signature': sdkSignature(sdkBody(), PRIVATE_KEY), Prefer: 'code=401' });
    expect(sdk.status).toBe(401);
    expect(sdk.body).toEqual(firstExample('sdk', 'initiateSdkTransaction', '401'));

    const gateway = await call(`${base('gateway')}/api/merchant/m_1`, 'GET', { Authorization: BASIC, Prefer: 'code=401' });
    expect(gateway.status).toBe(401);
    expect(gateway.body).toEqual(firstExample('gateway', 'getMerchant', '401'));
  });

  it('`Prefer: example=<name>` selects that example', async () => {
    const named = examples('gateway', 'getMerchant', '200');
    const last = Object.keys(named).at(-1) as string;
    expect(Object.keys(named).length).toBeGreaterThan(1);
    const gateway = await call(`${base('gateway')}/api/merchant/m_1`, 'GET', { Authorization: BASIC, Prefer: `example=${last}` });
    expect(gateway.status).toBe(200);
    expect(gateway.body).toEqual(named[last]);

    const status = JSON.stringify({ merchantTransactionId: 'ord_1' });
    const cancelled = await call(
      `${base('sdk')}/merchant/credit/checkTransactionStatus`,
      'POST',
      { 'X-Partnerid': 'partner_demo', 'X-Signature': sdkSignature(status, PRIVATE_KEY), Prefer: 'example=cancelled' },
      status,
    );
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toEqual(examples('sdk', 'checkSdkTransactionStatus', '200').cancelled);
  });

  it('an unknown path, example name or status is answered NOT_FOUND in the family format, listing what there is', async () => {
    const unknownPath = await call(`${base('sdk')}/merchant/credit/nope`, 'POST', { 'X-Partnerid': 'partner_demo' }, '{}');
    expect(unknownPath.status).toBe(404);
    expect(unknownPath.body).toEqual({
      message: 'NOT_FOUND',
      detail: expect.stringMatching(/^No operation of this mock has the path \/merchant\/credit\/nope\. It serves: .*POST \/merchant\/credit\/initiateTransaction/),
    });

    const names = Object.keys(examples('gateway', 'getMerchant', '200'));
    const unknownExample = await call(`${base('gateway')}/api/merchant/m_1`, 'GET', { Authorization: BASIC, Prefer: 'example=nope' });
    expect(unknownExample.status).toBe(404);
    const { errorCode, message } = unknownExample.body as { errorCode: string; message: string };
    expect(errorCode).toBe('NOT_FOUND');
    expect(message).toMatch(/^GET \/api\/merchant\/\{id\} has no example named 'nope'\. Its examples: .* \(Prefer: example=<name>\)\.$/);
    for (const name of names) expect(message).toContain(name);

    const unknownCode = await call(`${base('gateway')}/api/merchant/m_1`, 'GET', { Authorization: BASIC, Prefer: 'code=418' });
    expect(unknownCode.status).toBe(404);
    expect((unknownCode.body as { message: string }).message).toMatch(/^GET \/api\/merchant\/\{id\} documents no status 418\. Its statuses: 200, .*401.* \(Prefer: code=<status>\)\.$/);
    expect(JSON.stringify([unknownPath.body, unknownExample.body, unknownCode.body])).not.toContain('stoplight');
  });

  it('`Prefer: code=...` and `example=...` together select an error example', async () => {
    const named = examples('sdk', 'initiateSdkTransaction', '400');
    const name = Object.keys(named).at(-1) as string;
    const answer = await sdkInitiate({ 'X-Signature': sdkSignature(sdkBody(), PRIVATE_KEY), Prefer: `code=400, example=${name}` });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual(named[name]);
  });

  it('a request without Basic credentials is answered 401 (gateway and extras)', async () => {
    const gateway = await call(`${base('gateway')}/api/merchant/m_1`, 'GET', {});
    expect(gateway.status).toBe(401);
    const extras = await call(`${base('extras')}${extrasCreditPath()}`, 'POST', {});
    expect(extras.status).toBe(401);
  });

  it('Basic credentials of the wrong form (no colon) are answered 401', async () => {
    const answer = await call(`${base('gateway')}/api/merchant/m_1`, 'GET', {
      Authorization: `Basic ${Buffer.from('no-colon-here').toString('base64')}`,
    });
    expect(answer.status).toBe(401);
  });

  it("each family's Prism listens on its own loopback port, apart from the public ones, answering without the proxy's wording", async () => {
    const internal = Object.values(mocks!.internalPorts);
    expect(internal).toHaveLength(4);
    for (const port of internal) expect(Object.values(mocks!.ports)).not.toContain(port);
    // Prism itself, reached directly: its own answer to a rejected request (the first 400 example), not the proxy's.
    const headers = { 'X-Partnerid': 'partner_test' };
    const direct = await call(`http://127.0.0.1:${mocks!.internalPorts.sdk}/merchant/credit/initiateTransaction`, 'POST', headers, sdkBody());
    const proxied = await call(`${base('sdk')}/merchant/credit/initiateTransaction`, 'POST', headers, sdkBody());
    // Prism answers a missing X-Signature 400; the proxy answers 401, as the contract and the sandbox do (D28).
    expect([direct.status, proxied.status]).toEqual([400, 401]);
    expect(proxied.body).toEqual({
      message: 'AUTHORIZATION_FAILED',
      detail: 'X-Signature is missing: send the request signature, 44 characters of standard base64 (D28).',
    });
    expect(direct.body).not.toEqual(proxied.body);
  });

  it('a missing X-Signature is rejected (web and sdk)', async () => {
    const web = await webInitiate({});
    expect(web.status).toBeGreaterThanOrEqual(400);
    expect(web.status).toBeLessThan(500);
    expect(violations(web).toLowerCase()).toContain('x-signature');

    const sdk = await sdkInitiate({});
    expect(sdk.status).toBeGreaterThanOrEqual(400);
    expect(sdk.status).toBeLessThan(500);
    expect(violations(sdk).toLowerCase()).toContain('x-signature');
  });

  it('web: the status check answers on X-Partner-Id alone; a malformed X-Signature there is 400 (D21, D28)', async () => {
    const url = `${base('web')}/api/transaction/status?id=web_20261122_0007`;
    const unsigned = await call(url, 'GET', { 'X-Partner-Id': 'partner_test' });
    expect(unsigned.status).toBe(200);
    expect(unsigned.body).toEqual(firstExample('web', 'getWebTransactionStatus', '200'));
    const malformed = await call(url, 'GET', { 'X-Partner-Id': 'partner_test', 'X-Signature': 'ab'.repeat(32) });
    expect(malformed.status).toBe(400);
    expect(violations(malformed)).toContain('pattern');
  });

  it('a malformed X-Signature (hex, not base64 of 32 bytes) is rejected (web and sdk)', async () => {
    const hex = 'd2231c75465262f00e64f75ed8671b57761d1db9df896eb2258476f459441b70';
    const web = await webInitiate({ 'X-Signature': hex });
    expect(web.status).toBeGreaterThanOrEqual(400);
    expect(web.status).toBeLessThan(500);
    expect(violations(web)).toContain('pattern');

    const sdk = await sdkInitiate({ 'X-Signature': 'not-a-signature' });
    expect(sdk.status).toBeGreaterThanOrEqual(400);
    expect(sdk.status).toBeLessThan(500);
    expect(violations(sdk)).toContain('pattern');
  });

  it('a request without the partner id header is answered 401 (web and sdk)', async () => {
    const body = sdkBody();
    const sdk = await call(`${base('sdk')}/merchant/credit/initiateTransaction`, 'POST', { 'X-Signature': sdkSignature(body, PRIVATE_KEY) }, body);
    expect(sdk.status).toBe(401);
    const webPayload = webBody();
    const web = await call(`${base('web')}/api/transaction`, 'POST', { 'X-Signature': webSignature(webPayload, '/api/transaction', PRIVATE_KEY) }, webPayload);
    expect(web.status).toBe(401);
  });

  it('an invalid request is answered in the family format, naming every violation, valid against the contract', async () => {
    const bad = JSON.stringify({ amount: 'ten rupees' });
    const sdk = await sdkInitiate({ 'X-Signature': sdkSignature(bad, PRIVATE_KEY) }, bad);
    expect(sdk.status).toBe(400);
    expect(sdk.body).toEqual({
      message: 'BAD_REQUEST',
      detail:
        'Request is invalid: /merchantTransactionId is required; /userPhoneNumber is required; /userId is required; ' +
        '/amount must be a whole number of paise, an integer (₹1 = 100 paise: ₹1,500 is 150000).',
    });
    expect(violations(sdk)).toContain('amount'); // Prism's own report stays
    await expectDocumented('sdk', 'POST', '/merchant/credit/initiateTransaction', sdk);

    const web = await webInitiate({ 'X-Signature': webSignature(bad, '/api/transaction', PRIVATE_KEY) }, bad);
    expect(web.status).toBe(400);
    expect(web.body).toMatchObject({ message: 'BAD_REQUEST', detail: expect.stringContaining('/amount must be') });
    await expectDocumented('web', 'POST', '/api/transaction', web);

    const gateway = await call(`${base('gateway')}/api/merchant`, 'POST', { Authorization: BASIC }, JSON.stringify({ merchant: { id: 'm_1' } }));
    expect(gateway.status).toBe(400);
    expect(gateway.body).toEqual({
      errorCode: 'BAD_REQUEST',
      message: expect.stringMatching(/^Request is invalid: \/merchant\/brandName is required; .*\/merchant\/mccCode is required\.$/),
      details: ['brandName', 'entityName', 'brandHomePageUrl', 'mccCode'].map((name) => ({ field: `/merchant/${name}`, issue: 'is required' })),
    });
    await expectDocumented('gateway', 'POST', '/api/merchant', gateway);

    const path = `${operation('extras', 'getCreditInfo').path}?userPhoneNumber=+919000000001`;
    const extras = await call(`${base('extras')}${path}`, 'POST', { Authorization: BASIC });
    expect(extras.status).toBe(400);
    expect(extras.body).toMatchObject({
      errorCode: 'BAD_REQUEST',
      details: [{ field: 'userPhoneNumber', issue: expect.stringContaining('a bare + in a query string reads as a space: write it %2B') }],
    });
    await expectDocumented('extras', 'POST', path, extras);
  });

  it('a missing X-Signature: 401 as the sandbox answers it; a malformed one, a wrong Content-Type or invalid JSON: BAD_REQUEST saying so', async () => {
    const missing = await sdkInitiate({});
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({
      message: 'AUTHORIZATION_FAILED',
      detail: 'X-Signature is missing: send the request signature, 44 characters of standard base64 (D28).',
    });
    await expectDocumented('sdk', 'POST', '/merchant/credit/initiateTransaction', missing);

    // Explained as the sandbox explains it (D28), not as Prism's regular expression.
    const malformed = await webInitiate({ 'X-Signature': 'd2231c75465262f00e64' });
    expect(malformed.body).toEqual({
      message: 'BAD_REQUEST',
      detail:
        'Request is invalid: header X-Signature is malformed (20 characters): expected the standard base64 of the 32-byte SHA-256 digest, ' +
        '44 characters of A-Z, a-z, 0-9, "+" and "/" ending in "=". A hex digest, base64url or a trailing newline ' +
        "(Python's base64.encodebytes adds one; use base64.b64encode) is not accepted.",
    });
    await expectDocumented('web', 'POST', '/api/transaction', malformed);

    // An amount's violations say the unit, with the bounds in paise and rupees (D75).
    const amountOf = (amount: number) => JSON.stringify({ merchantTransactionId: 'ord_1', userPhoneNumber: '+919000000001', userId: 'u_1', amount });
    const fractional = await sdkInitiate({ 'X-Signature': sdkSignature(amountOf(1500.5), PRIVATE_KEY) }, amountOf(1500.5));
    expect(fractional.body).toEqual({
      message: 'BAD_REQUEST',
      detail: 'Request is invalid: /amount must be a whole number of paise, an integer (₹1 = 100 paise: ₹1,500 is 150000).',
    });
    const small = await sdkInitiate({ 'X-Signature': sdkSignature(amountOf(15), PRIVATE_KEY) }, amountOf(15));
    expect(small.body).toEqual({
      message: 'BAD_REQUEST',
      detail: 'Request is invalid: /amount must be at least 100 paise (₹1); amounts are integers in paise (₹1 = 100 paise: ₹1,500 is 150000).',
    });
    const webAmount = JSON.stringify({ id: 'web_1', amount: 1500.5, user: { name: 'Asha Rao', phoneNumber: '+919000000001' } });
    const web = await webInitiate({ 'X-Signature': webSignature(webAmount, '/api/transaction', PRIVATE_KEY) }, webAmount);
    expect(web.body).toEqual({
      message: 'BAD_REQUEST',
      detail: 'Request is invalid: /amount must be a whole number of paise, an integer (₹1 = 100 paise: ₹1,500 is 150000).',
    });
    const large = await sdkInitiate({ 'X-Signature': sdkSignature(amountOf(20_000_000), PRIVATE_KEY) }, amountOf(20_000_000));
    expect((large.body as { detail: string }).detail).toContain('/amount must be at most 10,000,000 paise (₹1,00,000); amounts are integers in paise');

    const text = await call(`${base('sdk')}/merchant/credit/initiateTransaction`, 'POST', {
      'X-Partnerid': 'partner_demo',
      'X-Signature': WELL_FORMED_SIGNATURE,
      'Content-Type': 'text/plain',
    }, 'hello');
    expect(text.body).toEqual({ message: 'BAD_REQUEST', detail: 'Request is invalid: header Content-Type must be application/json.' });

    const json = await sdkInitiate({ 'X-Signature': WELL_FORMED_SIGNATURE }, '{not json');
    expect([json.status, json.body]).toEqual([400, { message: 'BAD_REQUEST', detail: 'The request body is not valid JSON.' }]);
    await expectDocumented('sdk', 'POST', '/merchant/credit/initiateTransaction', json);

    const gateway = await call(`${base('gateway')}/api/merchant/transaction?limit=abc`, 'GET', { Authorization: BASIC });
    expect(gateway.body).toEqual({
      errorCode: 'BAD_REQUEST',
      message: 'Request is invalid: query parameter limit must be integer.',
      details: [{ field: 'limit', issue: 'must be integer' }],
    });
    await expectDocumented('gateway', 'GET', '/api/merchant/transaction', gateway);
  });

  it('missing credentials: the 401 says what is missing, in the family format', async () => {
    const body = sdkBody();
    const sdk = await call(`${base('sdk')}/merchant/credit/initiateTransaction`, 'POST', { 'X-Signature': sdkSignature(body, PRIVATE_KEY) }, body);
    expect(sdk.body).toEqual({
      message: 'AUTHORIZATION_FAILED',
      detail: 'X-Partnerid is missing: send your partner id in X-Partnerid (the mock checks that it is present only).',
    });
    await expectDocumented('sdk', 'POST', '/merchant/credit/initiateTransaction', sdk);
    const web = await call(`${base('web')}/api/transaction`, 'POST', { 'X-Signature': WELL_FORMED_SIGNATURE }, webBody());
    expect(web.body).toMatchObject({ message: 'AUTHORIZATION_FAILED', detail: expect.stringMatching(/^X-Partner-Id is missing/) });
    const gateway = await call(`${base('gateway')}/api/merchant/m_1`, 'GET', {});
    expect(gateway.body).toEqual({ errorCode: 'AUTHORIZATION_FAILED', message: expect.stringMatching(/^Missing or malformed HTTP Basic credentials/) });
    await expectDocumented('gateway', 'GET', '/api/merchant/m_1', gateway);
  });

  it('an invalid body is rejected with the violations named', async () => {
    const bad = JSON.stringify({ amount: 'ten rupees' });
    const sdk = await sdkInitiate({ 'X-Signature': sdkSignature(bad, PRIVATE_KEY) }, bad);
    expect(sdk.status).toBe(400);
    expect(violations(sdk)).toContain('amount');

    const web = await webInitiate({ 'X-Signature': webSignature(bad, '/api/transaction', PRIVATE_KEY) }, bad);
    expect(web.status).toBe(400);
    expect(violations(web)).toContain('amount');

    const gateway = await call(`${base('gateway')}/api/merchant`, 'POST', { Authorization: BASIC }, JSON.stringify({ merchant: {} }));
    expect(gateway.status).toBe(400);
    expect(violations(gateway)).toContain('required');
  });

  // Last: it ends these mocks. Stopping the four started above rather than starting others saves
  // their Prism processes, the costliest part of this file.
  it('reports a Prism that dies on its own; stop() then closes keep-alive connections at once and ends every Prism it started', async () => {
    const started = mocks!;
    const pids = Object.values(started.pids);
    expect(pids).toHaveLength(FAMILIES.length);
    for (const pid of pids) expect(isAlive(pid)).toBe(true);
    // A keep-alive connection to one family, left open.
    const agent = new Agent({ keepAlive: true });
    let socketClosed = false;
    try {
      await new Promise<void>((resolveRequest, reject) => {
        const outgoing = request(`${started.urls.sdk}/merchant/credit/checkTransactionStatus`, { method: 'POST', agent }, (response) => {
          response.socket.once('close', () => (socketClosed = true));
          response.resume();
          response.on('end', () => resolveRequest());
        });
        outgoing.on('error', reject);
        outgoing.end('{}');
      });
      // The CLI then stops the others and exits 1.
      process.kill(started.pids.web as number, 'SIGKILL');
      const exit = await started.unexpectedExit;
      expect(exit.family).toBe('web');
      expect(exit.signal).toBe('SIGKILL');
      // What Prism printed before it died is kept for the message (its last lines may still be in
      // flight): its start line, or, after the requests above, its own log lines.
      expect(exit.output).toMatch(/Prism|\[HTTP SERVER\] \w+ \/\S+/);
      expect(isAlive(started.pids.sdk as number)).toBe(true);
    } finally {
      await started.stop();
    }
    await waitFor(() => socketClosed, 2_000, () => 'the keep-alive connection is still open');
    agent.destroy();
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
  }, 60_000);
});

describe('startMocks failures', () => {
  it('refuses a port in use, naming the port and the family', async () => {
    const port = portsAt(await freeOffset()).web;
    const blocker = await occupy(port);
    try {
      const error = await startMocks({ families: ['web'], ports: { web: port } }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(MockStartError);
      expect((error as Error).message).toContain(`Port ${port} (web) is already in use`);
      expect((error as MockStartError).port).toBe(port);
    } finally {
      blocker.close();
    }
  });

});

describe('npm run mock (the CLI)', () => {
  // The offset from PAYLATER_MOCK_PORT_OFFSET here (the README's snippets read it too); the option
  // in the stop checks below.
  it('exits 1 with a clear message when a port is in use', async () => {
    const offset = await freeOffset();
    const port = portsAt(offset).sdk;
    const blocker = await occupy(port);
    try {
      const cli = spawn(process.execPath, ['--import', 'tsx', 'scripts/mock.ts', '--family', 'sdk'], {
        cwd: root,
        env: { ...process.env, PAYLATER_MOCK_PORT_OFFSET: String(offset) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const result = await finished(cli, 45_000);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        `Port ${port} (sdk) is already in use on 127.0.0.1. Choose other ports with --port-offset <n> (npm run mock -- --port-offset 100 serves on 4113), or fewer families with --family.`,
      );
      expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
    } finally {
      blocker.close();
    }
  }, 60_000);

  it('exits 2 naming PAYLATER_MOCK_PORT_OFFSET when its value is not an offset', async () => {
    const cli = spawn(process.execPath, ['--import', 'tsx', 'scripts/mock.ts', '--family', 'sdk'], {
      cwd: root,
      env: { ...process.env, PAYLATER_MOCK_PORT_OFFSET: '100x' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const result = await finished(cli, 45_000);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("mock: PAYLATER_MOCK_PORT_OFFSET must be an integer that keeps every port within 1-65535 (got '100x').");
  }, 60_000);

  // One family here; all four in the slow group (test/scripts/mock-cli.test.ts).
  it('leaves no Prism process behind after SIGTERM (one family)', async () => {
    await expectCliStopsItsPrisms(['sdk']);
  }, 120_000);
});
