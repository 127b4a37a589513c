/**
 * The typed clients: every operation against the Prism mock of its family, signing checked by a
 * local server that recomputes the signature from what it received, timeouts and opt-in retries.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Middleware } from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAMILIES } from '../../scripts/families.js';
import { startMocks, type RunningMocks } from '../../scripts/mock-servers.js';
import { freePorts } from '../support/processes.js';
import { createExtrasClient } from '../../src/clients/extras.js';
import {
  createMerchantApiClient,
  createTransactionalApiClient,
  isStageResponse,
  transactionalCredentials,
} from '../../src/clients/gateway.js';
import { createSdkClient } from '../../src/clients/sdk.js';
import { RequestTimeoutError } from '../../src/clients/transport.js';
import { createWebClient } from '../../src/clients/web.js';
import { retrySafety } from '../../src/clients/retry-safety.js';
import { operations as gatewayOperations } from '../../generated/operations/gateway.js';
import { operations as extrasOperations } from '../../generated/operations/extras.js';
import { sdkSignature, webSignature } from '../../src/signature.js';

const basic = { username: 'pg_test', password: 'pg_test_secret' };
const partner = { partnerId: 'partner_test', privateKey: 'test_private_key' };
const user = { name: 'Asha Rao', phoneNumber: '+919000000001' };
const device = { userAgent: 'Mozilla/5.0', ipAddress: '203.0.113.24' };
const prefer = (value: string) => ({ headers: { Prefer: value } });

let mocks: RunningMocks;

function mockUrl(family: 'gateway' | 'extras' | 'web' | 'sdk'): string {
  const url = mocks.urls[family];
  if (url === undefined) throw new Error(`the ${family} mock is not running`);
  return url;
}

beforeAll(async () => {
  mocks = await startMocks({ ports: await freePorts(FAMILIES) });
});

afterAll(async () => {
  await mocks?.stop();
});

describe('gateway clients against the mock', () => {
  it('calls every Merchant API operation', async () => {
    const client = createMerchantApiClient({ baseUrl: mockUrl('gateway'), credentials: basic });
    const created = await client.POST('/api/merchant', {
      body: {
        merchant: {
          id: 'm_1',
          brandName: 'Chai Point',
          entityName: 'Chai Point Pvt Ltd',
          brandHomePageUrl: 'https://chai.example.in',
          mccCode: 5812,
        },
      },
    });
    expect(created.response.status).toBe(201);
    expect(created.data?.merchant.stage).toBe('documentsPending');

    const read = await client.GET('/api/merchant/{id}', { params: { path: { id: 'm_1' } }, ...prefer('example=enabled') });
    expect(read.response.status).toBe(200);
    const credentials = read.data ? transactionalCredentials(read.data.merchant) : undefined;
    expect(credentials?.username).toEqual(expect.any(String));

    const uploaded = await client.POST('/api/merchant/{id}/document', {
      params: { path: { id: 'm_1' } },
      body: { documentType: 'PAN', document: { type: 'base64', value: 'JVBERi0xLjQK' } },
    });
    expect(uploaded.response.status).toBe(200);
    expect(uploaded.data?.merchant.id).toEqual(expect.any(String));

    const disabled = await client.POST('/api/merchant/{id}/disable', { params: { path: { id: 'm_1' } }, body: { reason: 'closed' } });
    expect(disabled.response.status).toBe(200);

    const access = await client.POST('/api/merchant/{id}/dashboard-access', {
      params: { path: { id: 'm_1' } },
      body: { dashboardUser: { name: 'Ravi', email: 'ravi@chai.example.in' } },
    });
    expect(access.response.status).toBe(201);
    expect(access.data?.dashboardAccess.loginUrl).toMatch(/^https?:\/\//);
  });

  it('calls every Transactional API operation', async () => {
    const client = createTransactionalApiClient({ baseUrl: mockUrl('gateway'), credentials: basic });
    const configuration = await client.GET('/api/merchant/configuration');
    expect(configuration.response.status).toBe(200);
    expect(configuration.data?.version).toBe(2);
    expect(configuration.data?.maxOrderAmount).toEqual(expect.any(Number));

    const check = await client.POST('/api/merchant/transaction/pre-eligibility', {
      body: { user, transaction: { amount: 150000 }, deviceInformation: device },
    });
    expect(check.response.status).toBe(200);
    expect(check.data?.preEligibilityCheck.id).toMatch(/^[0-9a-f-]{36}$/);

    const created = await client.POST('/api/merchant/transaction', {
      body: { transaction: { id: 'txn_1', amount: 150000, mode: 'TEST', notes: { order: { id: 7, items: ['a'] } } }, user },
    });
    expect(created.response.status).toBe(200);
    expect(created.data?.transaction.url).toMatch(/^https?:\/\//);

    const list = await client.GET('/api/merchant/transaction', { params: { query: { limit: 10 } } });
    expect(list.response.status).toBe(200);
    expect(Array.isArray(list.data?.transactions)).toBe(true);

    const plain = await client.GET('/api/merchant/transaction/{id}', { params: { path: { id: 'txn_1' } } });
    expect(plain.response.status).toBe(200);
    expect(plain.data && isStageResponse(plain.data)).toBe(false);

    const stage = await client.GET('/api/merchant/transaction/{id}', {
      params: { path: { id: 'txn_1' }, query: { include: 'stage' } },
      ...prefer('example=stagePayment'),
    });
    expect(stage.data && isStageResponse(stage.data) ? stage.data.transactionStage.nextStep.step : undefined).toBe('payment');

    const otp = await client.POST('/api/merchant/transaction/{transactionId}/user-inputs/{referenceId}', {
      params: { path: { transactionId: 'txn_1', referenceId: '0b8a3c1e-6a43-4f0e-9d1c-3b1c2f9e7a10' } },
      body: { value: '123456' },
    });
    expect(otp.response.status).toBe(200);

    const paid = await client.POST('/api/merchant/transaction/{transactionId}/payment/register-external', {
      params: { path: { transactionId: 'txn_1' } },
      body: { metaData: { paymentMode: 'UPI', pgPaymentId: 'pay_1', amount: 37500 } },
    });
    expect(paid.response.status).toBe(200);

    const refund = await client.POST('/api/merchant/transaction/{transactionId}/refund', {
      params: { path: { transactionId: 'txn_1' } },
      body: { refund: { amount: 50000 } },
    });
    expect(refund.response.status).toBe(200);
    expect(refund.data?.refund.amount).toEqual(expect.any(Number));

    const cancelled = await client.GET('/api/merchant/transaction/{transactionId}/cancel', {
      params: { path: { transactionId: 'txn_2' } },
    });
    expect(cancelled.response.status).toBe(200);
    expect(cancelled.data?.transaction.status).toBe('CANCELLED');

    const settlement = await client.GET('/api/merchant/settlement', { params: { query: {} } });
    expect(settlement.response.status).toBe(200);
    expect(Array.isArray(settlement.data?.settlements)).toBe(true);
  });

  it('types the documented errors', async () => {
    const client = createTransactionalApiClient({ baseUrl: mockUrl('gateway'), credentials: basic });
    const { data, error, response } = await client.POST('/api/merchant/transaction/{transactionId}/refund', {
      params: { path: { transactionId: 'txn_1' } },
      body: {},
      ...prefer('code=400'),
    });
    expect(response.status).toBe(400);
    expect(data).toBeUndefined();
    expect(['ALREADY_REFUNDED', 'BAD_REQUEST', 'DUPLICATE_ID', 'REFUND_AMOUNT_TOO_LARGE', 'TRANSACTION_NOT_REFUNDABLE']).toContain(error?.errorCode);
  });

  it('is answered 401 by the mock without valid credentials', async () => {
    const client = createMerchantApiClient({ baseUrl: mockUrl('gateway'), credentials: basic, headers: { Authorization: 'Bearer x' } });
    // The Basic middleware runs last and replaces any Authorization header given as an extra header.
    const read = await client.GET('/api/merchant/{id}', { params: { path: { id: 'm_1' } } });
    expect(read.response.status).toBe(200);
    const raw = await fetch(`${mockUrl('gateway')}/api/merchant/m_1`);
    expect(raw.status).toBe(401);
  });

  it('rejects unusable credentials at creation without echoing the password', () => {
    expect(() => createMerchantApiClient({ baseUrl: mockUrl('gateway'), credentials: { username: 'a:b', password: 'hunter2' } })).toThrow(
      /username/,
    );
    try {
      createTransactionalApiClient({ baseUrl: 'ftp://x', credentials: { username: 'u', password: 'hunter2' } });
      expect.unreachable();
    } catch (error) {
      expect(String(error)).toMatch(/baseUrl/);
      expect(String(error)).not.toContain('hunter2');
    }
  });
});

describe('extras client against the mock', () => {
  it('calls every extras operation', async () => {
    const client = createExtrasClient({ baseUrl: mockUrl('extras'), credentials: { username: 'extras_test', password: 'extras_test_secret' } });
    const info = await client.POST('/service/payments/merchant/user/credit/info', {
      params: { query: { userPhoneNumber: '+919000000001' } },
    });
    expect(info.response.status).toBe(200);
    expect(['registered', 'unregistered']).toContain(info.data?.registrationStatus);

    const identification = await client.POST('/service/database/merchant/user/feed/identification', {
      body: { userPhoneNumber: '+919000000001', identification: { panNumber: 'ABCDE1234F' } },
    });
    expect(identification.data?.message).toBe('ok');

    const data = await client.POST('/service/database/merchant/user/feed/merchant-data', {
      body: { userPhoneNumber: '+919000000001', data: [{ orders: 3 }] },
    });
    expect(data.data?.message).toBe('ok');
  });
});

describe('web client against the mock', () => {
  it('signs and calls every web operation', async () => {
    const client = createWebClient({ baseUrl: mockUrl('web'), ...partner });
    const initiated = await client.POST('/api/transaction', {
      body: { id: 'web_1', amount: 150000, user, redirect: { url: 'https://shop.example.in/done' } },
    });
    expect(initiated.response.status).toBe(200);
    expect(initiated.data?.redirectUrl).toMatch(/^https?:\/\//);

    const status = await client.GET('/api/transaction/status', { params: { query: { id: 'web_1' } } });
    expect(status.response.status).toBe(200);
    expect(['PENDING', 'SUCCESS', 'FAILURE', 'CANCELLED']).toContain(status.data?.status);

    const unsigned = createWebClient({ baseUrl: mockUrl('web'), ...partner, signStatusCheck: false });
    const unsignedStatus = await unsigned.GET('/api/transaction/status', { params: { query: { id: 'web_1' } } });
    expect(unsignedStatus.response.status).toBe(200);

    const refund = await client.POST('/api/refund', { body: { transactionId: 'web_1', amount: 50000 } });
    expect(refund.response.status).toBe(200);
    expect(refund.data?.message).toBe('ok');

    const script = await client.GET('/sdk.js', { parseAs: 'text' });
    expect(script.response.headers.get('content-type')).toMatch(/javascript/);
    expect(script.data).toEqual(expect.any(String));
  });
});

describe('sdk client against the mock', () => {
  it('signs and calls every SDK-flow operation', async () => {
    const client = createSdkClient({ baseUrl: mockUrl('sdk'), ...partner });
    const initiated = await client.POST('/merchant/credit/initiateTransaction', {
      body: { merchantTransactionId: 'ord_1', userPhoneNumber: '+919000000001', userId: 'u_1', amount: 250000 },
    });
    expect(initiated.response.status).toBe(201);
    expect(initiated.data?.message).toBe('TRANSACTION_INITIATED');

    const status = await client.POST('/merchant/credit/checkTransactionStatus', {
      body: { merchantTransactionId: 'ord_1' },
      ...prefer('example=pending'),
    });
    expect(status.data?.message).toBe('PENDING');

    const refund = await client.POST('/merchant/credit/refundTransaction', { body: { merchantTransactionId: 'ord_1', amount: 1000 } });
    expect(refund.data?.message).toBe('ok');

    const failed = await client.POST('/merchant/credit/refundTransaction', {
      body: { merchantTransactionId: 'ord_1' },
      ...prefer('code=400'),
    });
    expect(failed.response.status).toBe(400);
    expect(failed.error?.message).toEqual(expect.any(String));
  });
});

/** A local server that records what it received and answers with a handler. */
async function localServer(handler: (req: IncomingMessage, body: Buffer, res: ServerResponse) => void): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handler(req, Buffer.concat(chunks), res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

describe('signing over what is actually sent', () => {
  it('signs web requests over the received bytes and path with a base-URL prefix and an encoded query', async () => {
    const seen: { valid: boolean; path: string }[] = [];
    const { url, server } = await localServer((req, body, res) => {
      const expected = webSignature(body, req.url ?? '', partner.privateKey);
      seen.push({ valid: req.headers['x-signature'] === expected && req.headers['x-partner-id'] === partner.partnerId, path: req.url ?? '' });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ transactionId: 'a', status: 'PENDING', signature: expected }));
    });
    try {
      const client = createWebClient({ baseUrl: `${url}/prefix/v1`, ...partner });
      await client.GET('/api/transaction/status', { params: { query: { id: 'ord 1/ü+x' } } });
      await client.POST('/api/transaction', { body: { id: 'w_2', amount: 100, user: { name: 'नमस्ते 🙏', phoneNumber: '+919000000001' } } });
      await client.POST('/api/refund', { body: { transactionId: 'w_2', amount: 40 } });
      expect(seen).toHaveLength(3);
      expect(seen.every((s) => s.valid)).toBe(true);
      expect(seen[0]?.path).toMatch(/^\/prefix\/v1\/api\/transaction\/status\?id=ord/);
      expect(seen[1]?.path).toBe('/prefix/v1/api/transaction');
      expect(seen[2]?.path).toBe('/prefix/v1/api/refund');
    } finally {
      await close(server);
    }
  });

  it('leaves the status check unsigned with signStatusCheck: false, and signs everything else', async () => {
    const seen: { path: string; partnerId: unknown; signature: unknown }[] = [];
    const { url, server } = await localServer((req, _body, res) => {
      seen.push({ path: req.url ?? '', partnerId: req.headers['x-partner-id'], signature: req.headers['x-signature'] });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"message":"ok"}');
    });
    try {
      const client = createWebClient({ baseUrl: url, ...partner, signStatusCheck: false });
      await client.GET('/api/transaction/status', { params: { query: { id: 'w_3' } } });
      await client.POST('/api/refund', { body: { transactionId: 'w_3' } });
      expect(seen[0]).toEqual({ path: '/api/transaction/status?id=w_3', partnerId: partner.partnerId, signature: undefined });
      expect(seen[1]?.signature).toBe(webSignature('{"transactionId":"w_3"}', '/api/refund', partner.privateKey));
      expect(() => createWebClient({ baseUrl: url, ...partner, signStatusCheck: 'no' as unknown as boolean })).toThrow(/signStatusCheck/);
    } finally {
      await close(server);
    }
  });

  it('signs SDK-flow requests over the received bytes', async () => {
    let valid = false;
    const { url, server } = await localServer((req, body, res) => {
      valid = req.headers['x-signature'] === sdkSignature(body, partner.privateKey) && req.headers['x-partnerid'] === partner.partnerId;
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end('{"message":"TRANSACTION_INITIATED"}');
    });
    try {
      const client = createSdkClient({ baseUrl: url, ...partner });
      const result = await client.POST('/merchant/credit/initiateTransaction', {
        body: { merchantTransactionId: 'ord_é', userPhoneNumber: '+919000000001', userId: 'ü', amount: 100 },
      });
      expect(result.data?.message).toBe('TRANSACTION_INITIATED');
      expect(valid).toBe(true);
    } finally {
      await close(server);
    }
  });
});

describe("openapi-fetch's middleware", () => {
  /** The auth middleware of openapi-fetch's guide (docs/openapi-fetch/middleware-auth.md). */
  function guideAuthMiddleware(someAuthFunc: () => Promise<{ accessToken?: string }>): Middleware {
    let accessToken: string | undefined = undefined;
    return {
      async onRequest({ request }) {
        // fetch token, if it doesn't exist
        if (!accessToken) {
          const authRes = await someAuthFunc();
          if (authRes.accessToken) {
            accessToken = authRes.accessToken;
          } else {
            throw new Error('no access token');
          }
        }
        // add Authorization header to every request
        request.headers.set('Authorization', `Bearer ${accessToken}`);
        return request;
      },
    };
  }

  /** A logging middleware: what was asked and what came back. */
  function loggingMiddleware(log: string[]): Middleware {
    return {
      onRequest({ request, schemaPath }) {
        log.push(`-> ${request.method} ${schemaPath}`);
      },
      onResponse({ response, schemaPath }) {
        log.push(`<- ${response.status} ${schemaPath}`);
      },
    };
  }

  /** Records each request: its Authorization header and whether its signature covers what arrived. */
  async function signatureChecker(check: (req: IncomingMessage, body: Buffer) => boolean) {
    const seen: { authorization: unknown; valid: boolean; body: string }[] = [];
    const local = await localServer((req, body, res) => {
      seen.push({ authorization: req.headers.authorization, valid: check(req, body), body: body.toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"message":"SUCCESS"}');
    });
    return { ...local, seen };
  }

  it('works on the web client as the guide shows, and the signature covers what a middleware changed', async () => {
    const { url, server, seen } = await signatureChecker(
      (req, body) => req.headers['x-signature'] === webSignature(body, req.url ?? '', partner.privateKey) && req.headers['x-partner-id'] === partner.partnerId,
    );
    try {
      const log: string[] = [];
      let tokens = 0;
      const client = createWebClient({ baseUrl: url, ...partner });
      client.use(guideAuthMiddleware(async () => ({ accessToken: `token_${++tokens}` })), loggingMiddleware(log));
      await client.GET('/api/transaction/status', { params: { query: { id: 'w_mw' } } });
      await client.POST('/api/refund', { body: { transactionId: 'w_mw', amount: 10 } });
      // A middleware that replaces the body: the signature is computed over the new bytes.
      const rewrite: Middleware = {
        async onRequest({ request }) {
          const body = (await request.json()) as Record<string, unknown>;
          return new Request(request, { body: JSON.stringify({ ...body, amount: 20 }) });
        },
      };
      await client.POST('/api/refund', { body: { transactionId: 'w_mw', amount: 10 }, middleware: [rewrite] });
      expect(seen.map((s) => s.authorization)).toEqual(['Bearer token_1', 'Bearer token_1', 'Bearer token_1']);
      expect(seen.map((s) => s.valid)).toEqual([true, true, true]);
      expect(JSON.parse(seen[2]!.body)).toEqual({ transactionId: 'w_mw', amount: 20 });
      expect(log).toEqual([
        '-> GET /api/transaction/status',
        '<- 200 /api/transaction/status',
        '-> POST /api/refund',
        '<- 200 /api/refund',
        '-> POST /api/refund',
        '<- 200 /api/refund',
      ]);
    } finally {
      await close(server);
    }
  });

  it('works on the SDK client as the guide shows, still signing the exact bytes sent; eject takes it out again', async () => {
    const { url, server, seen } = await signatureChecker(
      (req, body) => req.headers['x-signature'] === sdkSignature(body, partner.privateKey) && req.headers['x-partnerid'] === partner.partnerId,
    );
    try {
      const log: string[] = [];
      const auth = guideAuthMiddleware(async () => ({ accessToken: 'sdk_token' }));
      const logging = loggingMiddleware(log);
      const client = createSdkClient({ baseUrl: url, ...partner });
      client.use(auth);
      client.use(logging);
      await client.POST('/merchant/credit/checkTransactionStatus', { body: { merchantTransactionId: 'ord_mw' } });
      await client.POST('/merchant/credit/refundTransaction', { body: { merchantTransactionId: 'ord_mw' } });
      client.eject(auth, logging);
      await client.POST('/merchant/credit/checkTransactionStatus', { body: { merchantTransactionId: 'ord_mw' } });
      expect(seen.map((s) => s.authorization)).toEqual(['Bearer sdk_token', 'Bearer sdk_token', undefined]);
      expect(seen.map((s) => s.valid)).toEqual([true, true, true]);
      // The refund still carries its explicit amount.
      expect(JSON.parse(seen[1]!.body)).toEqual({ merchantTransactionId: 'ord_mw', amount: 0 });
      expect(log).toEqual([
        '-> POST /merchant/credit/checkTransactionStatus',
        '<- 200 /merchant/credit/checkTransactionStatus',
        '-> POST /merchant/credit/refundTransaction',
        '<- 200 /merchant/credit/refundTransaction',
      ]);
    } finally {
      await close(server);
    }
  });

  it('works on the Basic-auth clients, whose own credentials are sent', async () => {
    const { url, server, seen } = await signatureChecker(() => true);
    try {
      const log: string[] = [];
      const gateway = createTransactionalApiClient({ baseUrl: url, credentials: basic });
      gateway.use(loggingMiddleware(log));
      await gateway.GET('/api/merchant/configuration');
      const extras = createExtrasClient({ baseUrl: url, credentials: basic });
      extras.use(loggingMiddleware(log));
      await extras.POST('/service/payments/merchant/user/credit/info', { params: { query: { userPhoneNumber: '+919000000001' } } });
      const basicHeader = `Basic ${Buffer.from(`${basic.username}:${basic.password}`).toString('base64')}`;
      expect(seen.map((s) => s.authorization)).toEqual([basicHeader, basicHeader]);
      expect(log).toEqual([
        '-> GET /api/merchant/configuration',
        '<- 200 /api/merchant/configuration',
        '-> POST /service/payments/merchant/user/credit/info',
        '<- 200 /service/payments/merchant/user/credit/info',
      ]);
    } finally {
      await close(server);
    }
  });
});

describe('timeouts and retries', () => {
  it('ends an attempt after timeoutMs with RequestTimeoutError', async () => {
    const { url, server } = await localServer(() => {
      /* never answers */
    });
    try {
      const client = createSdkClient({ baseUrl: url, ...partner, timeoutMs: 150 });
      await expect(client.POST('/merchant/credit/checkTransactionStatus', { body: { merchantTransactionId: 'x' } })).rejects.toBeInstanceOf(
        RequestTimeoutError,
      );
    } finally {
      server.closeAllConnections();
      await close(server);
    }
  });

  it('retries only requests that are safe to repeat, and only when asked', async () => {
    const hits = new Map<string, number>();
    const { url, server } = await localServer((req, _body, res) => {
      const key = `${req.method} ${req.url}`;
      const n = (hits.get(key) ?? 0) + 1;
      hits.set(key, n);
      res.writeHead(n < 3 ? 503 : 200, { 'content-type': 'application/json', 'retry-after': '0' });
      res.end(n < 3 ? '{"message":"INTERNAL_SERVER_ERROR"}' : '{"message":"SUCCESS"}');
    });
    try {
      const retrying = createSdkClient({ baseUrl: url, ...partner, retry: { retries: 3, minDelayMs: 1 } });
      const status = await retrying.POST('/merchant/credit/checkTransactionStatus', { body: { merchantTransactionId: 'x' } });
      expect(status.data?.message).toBe('SUCCESS');
      expect(hits.get('POST /merchant/credit/checkTransactionStatus')).toBe(3);

      const initiate = await retrying.POST('/merchant/credit/initiateTransaction', {
        body: { merchantTransactionId: 'y', userPhoneNumber: '+919000000001', userId: 'u', amount: 100 },
      });
      expect(initiate.response.status).toBe(503);
      expect(hits.get('POST /merchant/credit/initiateTransaction')).toBe(1);

      const gateway = createTransactionalApiClient({ baseUrl: url, credentials: basic, retry: { retries: 3, minDelayMs: 1 } });
      await gateway.POST('/api/merchant/transaction/{transactionId}/refund', { params: { path: { transactionId: 't' } }, body: { refund: { id: 'r1' } } });
      expect(hits.get('POST /api/merchant/transaction/t/refund')).toBe(3);
      hits.clear();
      await gateway.POST('/api/merchant/transaction/{transactionId}/refund', { params: { path: { transactionId: 't' } }, body: { refund: { amount: 5 } } });
      expect(hits.get('POST /api/merchant/transaction/t/refund')).toBe(1);
      // The configuration is a read, retried; the cancel is a GET that changes state, never repeated.
      await gateway.GET('/api/merchant/configuration');
      expect(hits.get('GET /api/merchant/configuration')).toBe(3);
      const cancel = await gateway.GET('/api/merchant/transaction/{transactionId}/cancel', { params: { path: { transactionId: 't' } } });
      expect(cancel.response.status).toBe(503);
      expect(hits.get('GET /api/merchant/transaction/t/cancel')).toBe(1);

      const web = createWebClient({ baseUrl: url, ...partner, retry: { retries: 3, minDelayMs: 1 } });
      const webRefund = await web.POST('/api/refund', { body: { transactionId: 'w' } });
      expect(webRefund.response.status).toBe(503);
      expect(hits.get('POST /api/refund')).toBe(1);

      const plain = createSdkClient({ baseUrl: url, ...partner });
      hits.clear();
      const once = await plain.POST('/merchant/credit/checkTransactionStatus', { body: { merchantTransactionId: 'z' } });
      expect(once.response.status).toBe(503);
      expect(hits.get('POST /merchant/credit/checkTransactionStatus')).toBe(1);
    } finally {
      await close(server);
    }
  });
});

describe('retry safety from the contract (x-retry-safe, D60)', () => {
  const body = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

  it('matches a request to its operation under the base path, literal paths first', () => {
    const safe = retrySafety(gatewayOperations, 'https://pg.example/prefix/v1/');
    const at = (method: string, path: string, json?: unknown) =>
      safe({ method, url: `https://pg.example/prefix/v1${path}?x=1`, body: json === undefined ? undefined : body(json) });
    expect(at('GET', '/api/merchant/transaction')).toBe(true);
    expect(at('HEAD', '/api/merchant/m_1')).toBe(true);
    expect(at('POST', '/api/merchant/transaction', {})).toBe(false);
    expect(at('GET', '/api/merchant/transaction/t_1/cancel')).toBe(false);
    expect(at('POST', '/api/merchant/m_1/disable')).toBe(true);
    expect(at('POST', '/api/merchant/transaction/t_1/refund', { refund: { id: 'r_1' } })).toBe(true);
    expect(at('POST', '/api/merchant/transaction/t_1/refund', { refund: { id: 7 } })).toBe(false);
    expect(at('POST', '/api/merchant/transaction/t_1/refund', { refund: {} })).toBe(false);
    // Outside the base path or the contract: never repeated.
    expect(safe({ method: 'GET', url: 'https://pg.example/api/merchant/m_1', body: undefined })).toBe(false);
    expect(at('GET', '/api/merchant/m_1/unknown')).toBe(false);
  });

  it('marks every operation, as generated from openapi/', () => {
    for (const operation of [...gatewayOperations, ...extrasOperations]) expect(typeof operation.retrySafe.safe).toBe('boolean');
    const safeIds = extrasOperations.filter((operation) => operation.retrySafe.safe).map((operation) => operation.operationId);
    expect(safeIds.sort()).toEqual(['getCreditInfo', 'pushIdentification']);
  });
});
