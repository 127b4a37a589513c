/**
 * The request log behind the dashboard: GET /sandbox/requests and /sandbox/requests/{id}, their
 * filters and paging, its bound in bytes, the secrets redacted as the log redacts them, the
 * dashboard's own reads left out; and the resend of a webhook delivery.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { APPROVED_TEST_USER } from '../../src/sandbox/fixtures.js';
import { basic, startGateway, type GatewayTest } from '../support/gateway.js';
import { initiateSdk, PARTNER_ID, startReceiver, startSandbox, waitFor, type Receiver, type TestSandbox } from '../support/sandbox.js';

let t: TestSandbox | GatewayTest | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  // The sandbox first (it stops its deliveries), then the receiver.
  for (const started of [t, receiver]) await started?.close();
  [t, receiver] = [undefined, undefined];
});

const requests = async (sandbox: TestSandbox, query = '') => {
  const answer = await sandbox.request('GET', `/sandbox/requests${query}`);
  expect(answer.status, answer.text).toBe(200);
  return answer.body as { requests: any[]; nextCursor: string | null; latest: number };
};

describe('GET /sandbox/requests', () => {
  it('lists a signed initiate with its family, operation, partner, status, transaction and request id, newest first', async () => {
    t = await startSandbox();
    await initiateSdk(t, 'log_1');
    await t.request('POST', '/sandbox/sdk/transactions/log_1/confirm');
    const page = await requests(t);
    expect(page.requests.map((entry) => entry.operation)).toEqual(['POST /sandbox/sdk/transactions/{merchantTransactionId}/confirm', 'initiateSdkTransaction']);
    const [, initiate] = page.requests;
    expect(initiate).toMatchObject({
      method: 'POST',
      path: '/merchant/credit/initiateTransaction',
      family: 'sdk',
      principal: `partner ${PARTNER_ID}`,
      transactionId: 'log_1',
      status: 201,
      reason: null,
    });
    expect(initiate.requestId).toMatch(/^req_[0-9a-f]{24}$/);
    expect(Date.parse(initiate.at)).toBeLessThanOrEqual(t.sandbox.clock.now());
    expect(page.latest).toBe(Number(page.requests[0].id.slice(3)));

    const detail = await t.request('GET', `/sandbox/requests/${initiate.id}`);
    expect(detail.status).toBe(200);
    expect(JSON.parse(detail.body.request.body)).toMatchObject({ merchantTransactionId: 'log_1', amount: 250_000 });
    expect(detail.body.request.headers).toContainEqual(['X-Partnerid', PARTNER_ID]);
    expect(JSON.parse(detail.body.response.body)).toEqual({ message: 'TRANSACTION_INITIATED' });
    expect(detail.body.response.headers['X-Request-Id']).toBe(initiate.requestId);
  });

  it('finds a 401 by the request id its error carried, with the reason, and never shows the credentials sent', async () => {
    t = await startSandbox();
    const wrong = basic('pg_test', 'not-the-password-7c1e');
    const answer = await t.request('GET', '/api/merchant/m_1', { headers: { Authorization: wrong, 'X-Request-Id': 'pg-7781' } });
    expect(answer.status).toBe(401);
    await initiateSdk(t, 'log_2');
    const page = await requests(t, '?requestId=pg-7781');
    expect(page.requests).toHaveLength(1);
    expect(page.requests[0]).toMatchObject({ status: 401, family: 'gateway', requestId: 'pg-7781' });
    expect(page.requests[0].reason).toMatch(/^Invalid HTTP Basic credentials/);
    const detail = await t.request('GET', `/sandbox/requests/${page.requests[0].id}`);
    expect(detail.body.request.headers).toContainEqual(['Authorization', 'Basic [redacted]']);
    expect(detail.text).not.toContain(wrong.slice('Basic '.length));
    expect(JSON.parse(detail.body.response.body)).toMatchObject({ errorCode: 'AUTHORIZATION_FAILED', requestId: 'pg-7781' });
  });

  it('filters by family, status (a code or a class) and transaction, and pages back with nextCursor', async () => {
    t = await startSandbox();
    for (let index = 0; index < 5; index++) await initiateSdk(t, `page_${index}`);
    await t.sdk('/merchant/credit/initiateTransaction', { merchantTransactionId: 'page_0', userPhoneNumber: APPROVED_TEST_USER.phoneNumber, userId: 'u', amount: 100 });
    await t.request('GET', '/sandbox/clock');
    expect((await requests(t, '?status=4xx')).requests.map((entry) => entry.transactionId)).toEqual(['page_0']);
    expect((await requests(t, '?status=201')).requests).toHaveLength(5);
    expect((await requests(t, '?family=sandbox')).requests.map((entry) => entry.path)).toEqual(['/sandbox/clock']);
    expect((await requests(t, '?transactionId=page_3')).requests).toHaveLength(1);

    const first = await requests(t, '?limit=3');
    expect(first.requests).toHaveLength(3);
    expect(first.nextCursor).not.toBeNull();
    const second = await requests(t, `?limit=3&before=${first.nextCursor}`);
    const third = await requests(t, `?limit=3&before=${second.nextCursor}`);
    const ids = [...first.requests, ...second.requests, ...third.requests].map((entry) => entry.id);
    expect(ids).toHaveLength(7);
    expect(new Set(ids).size).toBe(7);
    expect(third.nextCursor).toBeNull();

    // Live updates: only what came after `latest`.
    await t.request('GET', '/sandbox/clock');
    const newer = await requests(t, `?after=${first.latest}`);
    expect(newer.requests.map((entry) => entry.path)).toEqual(['/sandbox/clock']);
  });

  it('answers a bad filter or cursor 400 saying what to send, and an unknown id 404', async () => {
    t = await startSandbox();
    for (const [query, field] of [
      ['?limit=0', 'limit'],
      ['?limit=501', 'limit'],
      ['?family=shop', 'family'],
      ['?status=abc', 'status'],
      ['?before=x', 'before'],
      ['?before=3&after=1', 'after'],
      ['?status=401&status=402', 'status'],
    ] as const) {
      const answer = await t.request('GET', `/sandbox/requests${query}`);
      expect(answer.status, query).toBe(400);
      expect(answer.body.errorCode).toBe('BAD_REQUEST');
      expect(answer.body.message).toContain(field);
    }
    const missing = await t.request('GET', '/sandbox/requests/rq_99999');
    expect(missing.status).toBe(404);
    expect(missing.body.message).toContain('GET /sandbox/requests');
  });

  it('keeps within its byte budget: the oldest requests go first, and a big body is kept only in part', async () => {
    t = await startSandbox({ config: { limits: { requestLogBytes: 64 * 1024 } } });
    const big = JSON.stringify({ merchantTransactionId: 'big_1', userPhoneNumber: APPROVED_TEST_USER.phoneNumber, userId: 'u', amount: 100_000, pad: 'x'.repeat(40_000) });
    await t.sdk('/merchant/credit/initiateTransaction', big);
    const bigEntry = (await requests(t)).requests[0];
    const bigDetail = await t.request('GET', `/sandbox/requests/${bigEntry.id}`);
    expect(bigDetail.body.request).toMatchObject({ bytes: Buffer.byteLength(big), truncated: true });
    expect(bigDetail.body.request.body.length).toBeLessThan(17 * 1024);
    for (let index = 0; index < 300; index++) await t.request('GET', '/sandbox/clock');
    const all = await requests(t, '?limit=500');
    expect(all.requests.length).toBeGreaterThan(50);
    expect(all.requests.length).toBeLessThan(300);
    expect((await t.request('GET', `/sandbox/requests/${bigEntry.id}`)).status).toBe(404);
  });

  it('leaves out its own endpoints, the dashboard and the dashboard reads of other endpoints', async () => {
    t = await startSandbox();
    await t.request('GET', '/sandbox/clock', { headers: { 'X-Sandbox-Dashboard': 'read' } });
    await t.request('GET', '/sandbox/requests');
    await t.request('GET', '/sandbox/clock');
    const page = await requests(t);
    expect(page.requests.map((entry) => entry.path)).toEqual(['/sandbox/clock']);
  });

  it('takes its budget from --max-request-log-bytes or PAYLATER_MAX_REQUEST_LOG_BYTES, 16 MiB by default', async () => {
    const { resolveConfig } = await import('../../src/sandbox/config.js');
    const { runSandbox } = await import('../../src/cli/sandbox-command.js');
    expect(resolveConfig().limits.requestLogBytes).toBe(16 * 1024 * 1024);
    expect(resolveConfig({}, { PAYLATER_MAX_REQUEST_LOG_BYTES: '65536' }).limits.requestLogBytes).toBe(65_536);
    expect(() => resolveConfig({ limits: { requestLogBytes: 0 } })).toThrow(/--max-request-log-bytes must be a whole number/);
    await expect(runSandbox(['--max-request-log-bytes', 'lots'], { write: () => undefined, until: Promise.resolve() })).rejects.toThrow(/--max-request-log-bytes/);
  });

  it('answers 404 saying so when the sandbox runs without the log', async () => {
    t = await startSandbox({ requestLog: false });
    const answer = await t.request('GET', '/sandbox/requests');
    expect(answer.status).toBe(404);
    expect(answer.body.message).toContain('request log is off');
  });
});

describe('GET /dashboard', () => {
  it('serves the page with its script inlined under a policy of this origin only, linked from the landing page', async () => {
    t = await startSandbox();
    const page = await t.request('GET', '/dashboard');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const policy = page.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("connect-src 'self'");
    const nonce = /script-src 'nonce-([^']+)'/.exec(policy)?.[1];
    expect(nonce).toBeDefined();
    expect(page.text).toContain(`<script nonce="${nonce}">`);
    expect(page.text).toContain('/sandbox/requests');
    expect(page.text).not.toMatch(/<script[^>]+src=/);
    const landing = await t.request('GET', '/');
    expect(landing.text).toContain('<a href="/dashboard">');
  });
});

describe('secrets in the logged requests', () => {
  it('redacts passwords in answers, tokens in paths and webhook URLs in bodies, as the log does', async () => {
    const gateway = await startGateway();
    t = gateway;
    const hook = 'http://127.0.0.1:9/hooks/tok_secret_5521?key=k_8812';
    const { id, credentials } = await gateway.onboard({ defaultWebhookUrl: hook });
    await gateway.merchantApi('GET', `/api/merchant/${id}`);
    const invitation = await gateway.merchantApi('POST', `/api/merchant/${id}/dashboard-access`, { dashboardUser: { name: 'Asha', email: 'asha@example.in' } });
    expect(invitation.status, invitation.text).toBe(201);
    const loginPath = new URL(invitation.body.dashboardAccess.loginUrl as string).pathname;
    await gateway.request('GET', loginPath);
    const token = loginPath.split('/').pop()!;

    const page = await requests(gateway, '?limit=100');
    const details = await Promise.all(page.requests.map((entry) => gateway.request('GET', `/sandbox/requests/${entry.id}`)));
    const text = page.requests.map((entry) => JSON.stringify(entry)).join('\n') + details.map((detail) => detail.text).join('\n');
    for (const secret of [credentials.password, token, 'tok_secret_5521', 'k_8812', TEST_MERCHANT_PASSWORD]) expect(text).not.toContain(secret);
    expect(text).toContain('[redacted]');
    expect(text).toContain('http://127.0.0.1:9/... (sha256:');
    expect(page.requests.find((entry) => entry.path.startsWith('/sandbox/gateway/dashboard/invitations/'))?.path).toBe(
      '/sandbox/gateway/dashboard/invitations/[redacted]',
    );
    expect(page.requests.find((entry) => entry.path === `/api/merchant/${id}` && entry.method === 'GET')?.principal).toBe(`merchant ${id}`);
  });
});

const TEST_MERCHANT_PASSWORD = 'pg_test_secret';

describe('POST /sandbox/webhooks/deliveries/{id}/resend', () => {
  it('sends the same event again as a new delivery, which succeeds once the receiver answers 200', async () => {
    let healthy = false;
    receiver = await startReceiver(() => (healthy ? 200 : 500));
    t = await startSandbox({ config: { partner: { webhookUrl: receiver.url } } });
    await initiateSdk(t, 'resend_1');
    await t.request('POST', '/sandbox/sdk/transactions/resend_1/confirm');
    const failed = await waitFor(async () => (await t!.deliveries('resend_1')).find((delivery) => delivery.attempts.length === 1));
    expect(failed.attempts[0].statusCode).toBe(500);
    healthy = true;
    const answer = await t.request('POST', `/sandbox/webhooks/deliveries/${failed.id}/resend`);
    expect(answer.status, answer.text).toBe(201);
    expect(answer.body.resentFrom).toBe(failed.id);
    expect(answer.body.delivery).toMatchObject({ eventId: failed.eventId, body: failed.body });
    expect(answer.body.delivery.url).toMatch(/^http:\/\/127\.0\.0\.1:[0-9]+\/\.\.\. \(sha256:[0-9a-f]{8}\)$/);
    const resent = await waitFor(async () =>
      (await t!.deliveries('resend_1')).find((delivery) => delivery.id === answer.body.delivery.id && delivery.status === 'delivered'),
    );
    expect(resent.attempts.at(-1).statusCode).toBe(200);
    const last = receiver.received.at(-1)!;
    expect(last.headers['x-event-id']).toBe(failed.eventId);
    expect(last.headers['x-signature']).toBe(failed.headers['X-Signature']);
    expect((await t.request('POST', '/sandbox/webhooks/deliveries/dlv_nope/resend')).status).toBe(404);
  });
});
