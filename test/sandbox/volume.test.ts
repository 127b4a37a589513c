/**
 * Volume without quadratic paths: 8,000 one-paisa refunds of one transaction (gateway and SDK),
 * 3,000 data pushes for one phone number read back a page at a time, and a merchant's list paged
 * through 1,500 transactions while another merchant has as many. Asserts behaviour; the time limit
 * of each test is generous (the earlier quadratic code did not finish 8,000 refunds in 50 s).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COLLECTIONS, type CheckRecord, type InvitationRecord, type MerchantRecord } from '../../src/sandbox/gateway/records.js';
import { GATEWAY } from '../../src/sandbox/gateway/values.js';
import { MemoryStore } from '../../src/sandbox/store.js';
import { sdkSignature } from '../../src/signature.js';
import { DEVICE, startGateway, type GatewayTest } from '../support/gateway.js';
import { EXTRAS_AUTH, initiateSdk, PARTNER_ID, PRIVATE_KEY } from '../support/sandbox.js';

let g: GatewayTest;
beforeAll(async () => {
  g = await startGateway();
});
afterAll(async () => {
  await g.close();
});

/** Runs `count` tasks, `width` at a time. */
async function inParallel<T>(count: number, width: number, task: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) {
        const index = next++;
        results[index] = await task(index);
      }
    }),
  );
  return results;
}

const post = async (url: string, headers: Record<string, string>, body: unknown) => {
  const response = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as any };
};

describe('at volume', () => {
  it('8,000 one-paisa gateway refunds of one transaction', { timeout: 120_000 }, async () => {
    const { credentials } = await g.onboard();
    const auth = credentials.auth;
    const id = await g.successful(auth, 8_000);
    const answers = await inParallel(8_000, 16, () => post(`${g.url}/api/merchant/transaction/${id}/refund`, { Authorization: auth }, { refund: { amount: 1 } }));
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(8_000);
    const last = await g.call('POST', `/api/merchant/transaction/${id}/refund`, auth, { refund: { amount: 1 } });
    expect(last.body.errorCode).toBe('ALREADY_REFUNDED');
    await g.advance(1_000);
    const transaction = await g.transaction(auth, id);
    expect(transaction.refundedAmount).toBe(8_000);
    expect(transaction.refunds).toHaveLength(8_000);
    expect(transaction.refunds.every((refund: { status: string }) => refund.status === 'SUCCESS')).toBe(true);
    // Each refund completed on time, each with its webhook, in order after the transaction's.
    expect(g.sandbox.deliveries.page({ transactionId: id, limit: 1000 }).deliveries[1]!.event).toBe('refundUpdated');
    expect(g.sandbox.deliveries.list({ transactionId: id })).toHaveLength(8_001);
  });

  it('8,000 one-paisa SDK refunds of one transaction', { timeout: 120_000 }, async () => {
    await initiateSdk(g, 'vol_sdk', 8_000);
    await g.request('POST', '/sandbox/sdk/transactions/vol_sdk/confirm');
    const body = (amount: number) => ({ merchantTransactionId: 'vol_sdk', amount });
    const answers = await inParallel(8_000, 16, () => {
      const payload = body(1);
      return post(`${g.url}/merchant/credit/refundTransaction`, { 'X-Partnerid': PARTNER_ID, 'X-Signature': sdkSignature(JSON.stringify(payload), PRIVATE_KEY) }, payload);
    });
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(8_000);
    const more = await g.sdk('/merchant/credit/refundTransaction', body(1));
    expect(more.body.message).toBe('ALREADY_REFUNDED');
    const view = await g.request('GET', '/sandbox/sdk/transactions/vol_sdk');
    expect(view.body).toMatchObject({ refundedAmount: 8_000, refundCount: 8_000 });
    expect(view.body.refunds).toHaveLength(100);
  });

  it('1,000 attempts on one pre-eligibility check, each cancelled: the check lists only the open ones', { timeout: 120_000 }, async () => {
    const { credentials } = await g.onboard();
    const auth = credentials.auth;
    const check = await g.check(auth, '+919000000101', 10_000);
    const checks = g.sandbox.store.collection<CheckRecord>(COLLECTIONS.checks);
    const open: number[] = [];
    await inParallel(1_000, 16, async (index) => {
      const id = `vol_attempt_${index}`;
      const created = await g.createTransaction(auth, { id, amount: 10_000, phoneNumber: '+919000000101', checkId: check.id });
      expect(created.status).toBe(200);
      open.push(checks.get(check.id)!.attempts.length);
      expect((await g.call('GET', `/api/merchant/transaction/${id}/cancel`, auth)).status).toBe(200);
    });
    // At most the 16 attempts running at once were listed; none is left.
    expect(Math.max(...open)).toBeLessThanOrEqual(16);
    expect(checks.get(check.id)!.attempts).toEqual([]);
    // The check still works: a new attempt goes through to SUCCESS.
    const last = await g.createTransaction(auth, { id: 'vol_attempt_last', amount: 10_000, phoneNumber: '+919000000101', checkId: check.id });
    expect(last.status).toBe(200);
    expect((await g.complete(auth, 'vol_attempt_last')).status).toBe('SUCCESS');
  });

  it('3,000 data pushes for one phone number, read back a page at a time', { timeout: 120_000 }, async () => {
    const phone = '+919876500001';
    await inParallel(3_000, 16, (index) =>
      post(`${g.url}/service/database/merchant/user/feed/merchant-data`, { Authorization: EXTRAS_AUTH }, { userPhoneNumber: phone, data: { index } }),
    );
    const seen: number[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const query: string = `?limit=1000${after === null ? '' : `&after=${after}`}`;
      const answer = await g.request('GET', `/sandbox/extras/users/${encodeURIComponent(phone)}${query}`);
      expect(answer.status).toBe(200);
      expect(answer.body.merchantDataCount).toBe(3_000);
      seen.push(...answer.body.merchantData.map((push: { data: { index: number } }) => push.data.index));
      after = answer.body.merchantDataNextCursor;
      pages++;
    } while (after !== null);
    expect(pages).toBe(3);
    expect([...seen].sort((a, b) => a - b)).toEqual(Array.from({ length: 3_000 }, (_, index) => index));
    const forged = await g.request('GET', `/sandbox/extras/users/${encodeURIComponent(phone)}?after=bm9wZQ`);
    expect(forged.status).toBe(400);
  });

  it("pages through one merchant's 1,500 transactions while another merchant has as many", { timeout: 120_000 }, async () => {
    const first = (await g.onboard()).credentials.auth;
    const second = (await g.onboard()).credentials.auth;
    const create = (auth: string, index: number) =>
      post(`${g.url}/api/merchant/transaction`, { Authorization: auth }, {
        transaction: { id: `vol_${index}`, amount: 10_000 },
        user: { name: 'Asha Rao', phoneNumber: index % 2 === 0 ? '+919000000001' : '+919000000002' },
        deviceInformation: DEVICE,
      });
    await inParallel(1_500, 16, (index) => create(first, index));
    await inParallel(1_500, 16, (index) => create(second, index));
    const ids: string[] = [];
    const createdAt: number[] = [];
    let cursor: string | null = null;
    do {
      const answer = await g.call('GET', `/api/merchant/transaction?limit=100${cursor === null ? '' : `&cursor=${cursor}`}`, first);
      expect(answer.status).toBe(200);
      for (const transaction of answer.body.transactions) {
        ids.push(transaction.id);
        createdAt.push(Date.parse(transaction.createdAt));
      }
      cursor = answer.body.nextCursor;
    } while (cursor !== null);
    expect(ids).toHaveLength(1_500);
    expect(new Set(ids).size).toBe(1_500);
    expect(createdAt.every((at, index) => index === 0 || at <= createdAt[index - 1]!)).toBe(true);
    const failed = await g.call('GET', '/api/merchant/transaction?limit=100&status=FAILED', first);
    expect(failed.body.transactions).toHaveLength(100);
    expect(failed.body.transactions.every((transaction: { status: string }) => transaction.status === 'FAILED')).toBe(true);
  });
});

describe('the sandbox limits of the Merchant API', () => {
  const merchantRecord = (id: string, now: number): MerchantRecord => ({
    id,
    brandName: 'Filler',
    entityName: 'Filler Pvt Ltd',
    brandHomePageUrl: 'https://filler.example.in',
    mccCode: 5812,
    hasLogo: false,
    hasFavicon: false,
    stage: 'documentsPending',
    documents: [],
    verifications: 0,
    dashboardUsers: [],
    createdAt: now,
    updatedAt: now,
  });

  it(`refuses a merchant beyond ${GATEWAY.maxMerchants} with 409 INVALID_STATE, and keeps the newest ${GATEWAY.keptInvitations} invitations`, async () => {
    // A store that already holds the limit of merchants and of invitations.
    const store = new MemoryStore();
    const merchants = store.collection<MerchantRecord>(COLLECTIONS.merchants);
    const invitations = store.collection<InvitationRecord>(COLLECTIONS.invitations);
    const now = Date.now();
    // Written in a unit of work, as every change of the store must be.
    store.unit(() => {
      for (let index = 0; index < GATEWAY.maxMerchants - 1; index++) merchants.set(`filler_${index}`, merchantRecord(`filler_${index}`, now));
      for (let index = 0; index < GATEWAY.keptInvitations; index++) {
        const token = `oldtoken${String(index).padStart(8, '0')}`;
        invitations.set(token, { token, merchantId: 'filler_0', email: `u${index}@filler.example.in`, name: 'U', createdAt: now - 1_000_000 + index, expiresAt: now + 1_000_000 });
      }
    });
    const limited = await startGateway({ store });
    try {
      const { id, answer } = await limited.createMerchant();
      expect(answer.status).toBe(201);
      const refused = await limited.merchantApi('POST', '/api/merchant', {
        merchant: { id: 'one_too_many', brandName: 'More', entityName: 'More Pvt Ltd', brandHomePageUrl: 'https://more.example.in', mccCode: 5812 },
      });
      expect(refused.status).toBe(409);
      expect(refused.body.errorCode).toBe('INVALID_STATE');
      expect(refused.body.message).toContain(`${GATEWAY.maxMerchants} merchants`);
      expect(merchants.size).toBe(GATEWAY.maxMerchants);

      // A new invitation pushes out the oldest one, whose login URL then answers 404.
      expect((await limited.request('GET', '/sandbox/gateway/dashboard/invitations/oldtoken00000000')).status).toBe(200);
      const invited = await limited.merchantApi('POST', `/api/merchant/${id}/dashboard-access`, { dashboardUser: { name: 'New', email: 'new@acme.example.in' } });
      expect(invited.status).toBe(201);
      expect(invitations.size).toBe(GATEWAY.keptInvitations);
      expect((await limited.request('GET', '/sandbox/gateway/dashboard/invitations/oldtoken00000000')).status).toBe(404);
      expect((await limited.request('GET', '/sandbox/gateway/dashboard/invitations/oldtoken00000001')).status).toBe(200);
      expect((await limited.request('GET', new URL(invited.body.dashboardAccess.loginUrl).pathname)).status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it(`refuses a dashboard user beyond ${GATEWAY.maxDashboardUsers} of one merchant with 409 INVALID_STATE`, async () => {
    const { id } = await g.createMerchant();
    for (let index = 0; index < GATEWAY.maxDashboardUsers; index++) {
      const answer = await g.merchantApi('POST', `/api/merchant/${id}/dashboard-access`, { dashboardUser: { name: 'User', email: `user${index}@acme.example.in` } });
      expect(answer.status).toBe(201);
    }
    const refused = await g.merchantApi('POST', `/api/merchant/${id}/dashboard-access`, { dashboardUser: { name: 'User', email: 'one.more@acme.example.in' } });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ errorCode: 'INVALID_STATE' });
    expect(refused.body.message).toContain(`${GATEWAY.maxDashboardUsers} dashboard users`);
  });
});
