/**
 * The example merchant (examples/merchant/server.ts) against the sandbox, without a browser: its
 * server routes initiate, check the status (and its signature) and refund through the web client.
 * test/e2e/checkout.test.ts drives the same shop in Chromium.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMerchant } from '../../examples/merchant/server.js';
import { startSandbox, type TestSandbox } from '../support/sandbox.js';

let t: TestSandbox;
let merchant: Awaited<ReturnType<typeof startMerchant>>;

beforeAll(async () => {
  t = await startSandbox();
  merchant = await startMerchant({ port: 0, sandboxUrl: t.url, partnerId: 'partner_test', privateKey: 'test_private_key' });
});
afterAll(async () => {
  await merchant?.close();
  await t?.close();
});

describe('the example merchant', () => {
  it('initiates, reads the verified status, and refunds a confirmed order once', async () => {
    const checkout = await fetch(`${merchant.url}/api/checkout`, { method: 'POST' });
    expect(checkout.status).toBe(200);
    const { transactionId } = (await checkout.json()) as { transactionId: string };
    const order = async () => (await fetch(`${merchant.url}/api/orders/${transactionId}`)).json();
    expect(await order()).toMatchObject({ transactionId, status: 'PENDING', signatureVerified: true });

    const early = await fetch(`${merchant.url}/api/orders/${transactionId}/refund`, { method: 'POST' });
    expect([early.status, await early.json()]).toEqual([409, { error: 'TRANSACTION_NOT_REFUNDABLE' }]);

    const confirmed = await t.request('POST', `/sandbox/web/transactions/${transactionId}/confirm`);
    expect(confirmed.body.redirectTo).toBe(`${merchant.url}/?order=${transactionId}&txnId=${transactionId}&txnStatus=SUCCESS`);
    expect(await order()).toMatchObject({ status: 'SUCCESS', signatureVerified: true });

    const refund = await fetch(`${merchant.url}/api/orders/${transactionId}/refund`, { method: 'POST' });
    expect([refund.status, await refund.json()]).toEqual([200, { refunded: true }]);
    const view = await t.request('GET', `/sandbox/web/transactions/${transactionId}`);
    expect(view.body.refundedAmount).toBe(view.body.amount);
    const again = await fetch(`${merchant.url}/api/orders/${transactionId}/refund`, { method: 'POST' });
    expect([again.status, await again.json()]).toEqual([409, { error: 'ALREADY_REFUNDED' }]);
  });
});
