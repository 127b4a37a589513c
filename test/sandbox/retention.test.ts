/**
 * Bounded history: final transactions beyond `retention.transactions` are forgotten, oldest first,
 * over every family together; pending ones never; completed deliveries beyond
 * `retention.deliveries` likewise. Timers of transactions that reached a final state are cancelled.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { initiateSdk, startSandbox, type TestSandbox } from '../support/sandbox.js';
import { startGateway, type GatewayTest } from '../support/gateway.js';
import { SDK_EXPIRY_MS, SDK_REFUNDS, SDK_TRANSACTIONS } from '../../src/sandbox/families/sdk.js';
import { WEB_REFUNDS } from '../../src/sandbox/families/web.js';

let t: TestSandbox | GatewayTest | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const status = async (s: TestSandbox, id: string) => (await s.sdk('/merchant/credit/checkTransactionStatus', { merchantTransactionId: id })).body.message;

describe('retention of final transactions', () => {
  it('forgets the oldest final SDK and web transactions beyond the limit, never a pending one', async () => {
    const s = await startSandbox({ config: { retention: { transactions: 20, deliveries: 15 } } });
    t = s;
    for (let index = 0; index < 30; index++) await initiateSdk(s, `ret_${index}`, 10_000);
    // 25 become final (in this order), 5 stay pending.
    for (let index = 0; index < 25; index++) {
      expect((await s.request('POST', `/sandbox/sdk/transactions/ret_${index}/confirm`)).status).toBe(200);
    }
    for (let index = 0; index < 5; index++) {
      expect((await s.request('GET', `/sandbox/sdk/transactions/ret_${index}`)).status).toBe(404);
      expect(await status(s, `ret_${index}`)).toBe('NO_SUCH_TRANSACTION');
    }
    for (let index = 5; index < 25; index++) expect(await status(s, `ret_${index}`)).toBe('SUCCESS');
    for (let index = 25; index < 30; index++) expect(await status(s, `ret_${index}`)).toBe('PENDING');

    // Web transactions share the same limit: 10 more final ones push out 10 more SDK ones.
    for (let index = 0; index < 10; index++) {
      const initiated = await s.web('POST', '/api/transaction', { id: `web_ret_${index}`, amount: 10_000, user: { name: 'A', phoneNumber: '+919000000001' } });
      expect(initiated.status).toBe(200);
      expect((await s.request('POST', `/sandbox/web/transactions/web_ret_${index}/cancel`)).status).toBe(200);
    }
    for (let index = 5; index < 15; index++) expect(await status(s, `ret_${index}`)).toBe('NO_SUCH_TRANSACTION');
    for (let index = 15; index < 25; index++) expect(await status(s, `ret_${index}`)).toBe('SUCCESS');
    for (let index = 25; index < 30; index++) expect(await status(s, `ret_${index}`)).toBe('PENDING');

    // Deliveries (not sent: no URL) keep the newest 15.
    const deliveries = await s.deliveries();
    expect(deliveries).toHaveLength(15);
    expect(deliveries.map((delivery) => delivery.transactionId)).toEqual([
      ...Array.from({ length: 5 }, (_, index) => `ret_${20 + index}`),
      ...Array.from({ length: 10 }, (_, index) => `web_ret_${index}`),
    ]);
  });

  it('forgets the refunds of the SDK and web transactions it forgets', async () => {
    const s = await startSandbox({ config: { retention: { transactions: 2 } } });
    t = s;
    const sdkRefunds = s.sandbox.store.collection(SDK_REFUNDS);
    const webRefunds = s.sandbox.store.collection(WEB_REFUNDS);
    await initiateSdk(s, 'refunded_sdk', 10_000);
    expect((await s.request('POST', '/sandbox/sdk/transactions/refunded_sdk/confirm')).status).toBe(200);
    for (const amount of [1_000, 2_000]) {
      expect((await s.sdk('/merchant/credit/refundTransaction', { merchantTransactionId: 'refunded_sdk', amount })).body).toEqual({ message: 'ok' });
    }
    const web = await s.web('POST', '/api/transaction', { id: 'refunded_web', amount: 10_000, user: { name: 'A', phoneNumber: '+919000000001' } });
    expect(web.status).toBe(200);
    expect((await s.request('POST', '/sandbox/web/transactions/refunded_web/confirm')).status).toBe(200);
    expect((await s.web('POST', '/api/refund', { transactionId: 'refunded_web', amount: 3_000 })).status).toBe(200);
    expect([sdkRefunds.size, webRefunds.size]).toEqual([2, 1]);

    // Two later final transactions push both out, with their refunds.
    for (const id of ['later_1', 'later_2']) {
      await initiateSdk(s, id, 10_000);
      expect((await s.request('POST', `/sandbox/sdk/transactions/${id}/cancel`)).status).toBe(200);
    }
    expect(await status(s, 'refunded_sdk')).toBe('NO_SUCH_TRANSACTION');
    expect([sdkRefunds.size, webRefunds.size]).toEqual([0, 0]);
  });

  it('keeps every pending transaction, however many', async () => {
    const s = await startSandbox({ config: { retention: { transactions: 5 } } });
    t = s;
    for (let index = 0; index < 40; index++) await initiateSdk(s, `pend_${index}`, 10_000);
    for (let index = 0; index < 40; index++) expect(await status(s, `pend_${index}`)).toBe('PENDING');
  });

  it('forgets the oldest final gateway transactions and their refunds; the list and settlement still answer', async () => {
    const g = await startGateway({ config: { retention: { transactions: 10 } } });
    t = g;
    const { credentials } = await g.onboard();
    const auth = credentials.auth;
    const paid = await g.successful(auth, 20_000);
    const refund = await g.call('POST', `/api/merchant/transaction/${paid}/refund`, auth, { refund: { id: 'r1', amount: 5_000 } });
    expect(refund.status).toBe(200);
    await g.advance(1_000);
    const pending = g.id('pending');
    expect((await g.createTransaction(auth, { id: pending, amount: 10_000 })).status).toBe(200);
    // 12 transactions created FAILED (a risk-declined user): final at once.
    const failed: string[] = [];
    for (let index = 0; index < 12; index++) {
      const id = g.id('declined');
      failed.push(id);
      const created = await g.createTransaction(auth, { id, amount: 10_000, phoneNumber: '+919000000002' });
      expect(created.body.transaction.status).toBe('FAILED');
    }
    // Final: the paid one and 12 failed = 13; the 3 oldest (the paid one, then 2 failed) are gone.
    expect((await g.call('GET', `/api/merchant/transaction/${paid}`, auth)).status).toBe(404);
    for (const id of failed.slice(0, 2)) expect((await g.call('GET', `/api/merchant/transaction/${id}`, auth)).status).toBe(404);
    for (const id of failed.slice(2)) expect((await g.call('GET', `/api/merchant/transaction/${id}`, auth)).status).toBe(200);
    expect((await g.transaction(auth, pending)).status).toBe('PENDING');
    const list = await g.call('GET', '/api/merchant/transaction?limit=100', auth);
    expect(list.body.transactions.map((transaction: { id: string }) => transaction.id)).toEqual([...failed.slice(2).reverse(), pending]);
    // The settlement sums were kept as they happened: forgetting the records does not change them.
    const today = new Date(g.sandbox.clock.now() + 330 * 60_000).toISOString().slice(0, 10);
    const tomorrow = new Date(Date.parse(`${today}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    const settlement = await g.call('GET', `/api/merchant/settlement?to=${tomorrow}`, auth);
    expect(settlement.body.settlements[0]).toMatchObject({ settlementDate: tomorrow, grossAmount: 20_000, refundedAmount: 5_000, transactionCount: 1 });
  });
});

describe('retention during a clock advance', () => {
  it('forgets nothing while an advance expires transactions, then the oldest beyond the limits', async () => {
    const s = await startSandbox({ config: { retention: { transactions: 10, deliveries: 10 } } });
    t = s;
    const transactions = s.sandbox.store.collection(SDK_TRANSACTIONS);
    for (let index = 0; index < 10; index++) {
      await initiateSdk(s, `done_${index}`, 10_000);
      expect((await s.request('POST', `/sandbox/sdk/transactions/done_${index}/confirm`)).status).toBe(200);
    }
    for (let index = 0; index < 30; index++) await initiateSdk(s, `expiring_${index}`, 10_000);
    // Read by a timer after every expiry, before the advance ends: nothing was forgotten yet.
    const clock = s.sandbox.clock;
    let during: { transactions: number; deliveries: number } | undefined;
    clock.schedule(clock.now() + SDK_EXPIRY_MS + 30_000, () => {
      during = { transactions: transactions.size, deliveries: s.sandbox.deliveries.size };
    });
    await s.advance(SDK_EXPIRY_MS + 60_000);
    expect(during).toEqual({ transactions: 40, deliveries: 40 });
    // After it: the newest 10 final transactions and deliveries are kept.
    // Trimming runs a few records at a time after the advance (in units of work on the shared store,
    // each a round trip to the database): wait for it, bounded at about five seconds.
    for (let turns = 0; transactions.size > 10 && turns < 500; turns++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(transactions.size).toBe(10);
    expect(await status(s, 'done_9')).toBe('NO_SUCH_TRANSACTION');
    expect(await status(s, 'expiring_19')).toBe('NO_SUCH_TRANSACTION');
    for (let index = 20; index < 30; index++) expect(await status(s, `expiring_${index}`)).toBe('FAILURE');
    const deliveries = await s.deliveries();
    expect(deliveries.map((delivery) => delivery.transactionId)).toEqual(Array.from({ length: 10 }, (_, index) => `expiring_${20 + index}`));
  });
});

describe('timers', () => {
  it('an SDK transaction that reaches a final state cancels its expiry timer', async () => {
    const s = await startSandbox();
    t = s;
    const before = s.sandbox.clock.pendingTimers;
    for (let index = 0; index < 50; index++) await initiateSdk(s, `timer_${index}`, 10_000);
    expect(s.sandbox.clock.pendingTimers).toBe(before + 50);
    for (let index = 0; index < 50; index++) await s.request('POST', `/sandbox/sdk/transactions/timer_${index}/cancel`);
    expect(s.sandbox.clock.pendingTimers).toBe(before);
  });

  it('a gateway transaction has one timer while pending and none once final', async () => {
    const g = await startGateway();
    t = g;
    const { credentials } = await g.onboard();
    const before = g.sandbox.clock.pendingTimers;
    const id = g.id('timer');
    await g.createTransaction(credentials.auth, { id, amount: 10_000 });
    expect(g.sandbox.clock.pendingTimers).toBe(before + 1);
    const stage = await g.stage(credentials.auth, id);
    const referenceId = stage.transactionStage.nextStep.options.userInputOptions[0].referenceId;
    for (let attempt = 0; attempt < 3; attempt++) {
      await g.call('POST', `/api/merchant/transaction/${id}/user-inputs/${referenceId}`, credentials.auth, { value: '999999' });
    }
    expect((await g.transaction(credentials.auth, id)).failureReason).toBe('OTP_ATTEMPTS_EXCEEDED');
    expect(g.sandbox.clock.pendingTimers).toBe(before);
  });
});
