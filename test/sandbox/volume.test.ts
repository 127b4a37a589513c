/**
 * Volume without quadratic paths: 8,000 one-paisa refunds of one transaction (gateway and SDK),
 * 3,000 data pushes for one phone number read back a page at a time, and a merchant's list paged
 * through 1,500 transactions while another merchant has as many. Asserts behaviour; the time limit
 * of each test is generous (the earlier quadratic code did not finish 8,000 refunds in 50 s).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
