/**
 * Refunds (D18) and their webhooks (D23), and settlement information (D19), in the gateway sandbox.
 * Every answer is validated against the bundled document.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { COLLECTIONS, transactionKey, type TransactionRecord } from '../../src/sandbox/gateway/records.js';
import { checkWebhook, startGateway, type Credentials, type GatewayTest } from '../support/gateway.js';
import { startReceiver, waitFor, type Receiver } from '../support/sandbox.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const IST = 330 * 60_000;

let t: GatewayTest;
let merchantHook: Receiver;
let transactionHook: Receiver;
let refundHook: Receiver;
let merchant: { id: string; credentials: Credentials };
let auth: string;

beforeAll(async () => {
  t = await startGateway();
  [merchantHook, transactionHook, refundHook] = await Promise.all([startReceiver(), startReceiver(), startReceiver()]);
  merchant = await t.onboard({ defaultWebhookUrl: merchantHook.url });
  auth = merchant.credentials.auth;
});
afterAll(async () => {
  await t.close();
  await Promise.all([merchantHook.close(), transactionHook.close(), refundHook.close()]);
});
afterEach(() => {
  expect(t.loggedErrors).toEqual([]);
});

const refund = (transactionId: string, body: unknown, as = auth) =>
  t.call('POST', `/api/merchant/transaction/${transactionId}/refund`, as, body);

const refundEvents = (receiver: Receiver, transactionId: string) =>
  receiver.received.filter((item) => JSON.parse(item.body).refund?.transactionId === transactionId);

describe('refunds (D18)', () => {
  it('refunds only a SUCCESS transaction (400 TRANSACTION_NOT_REFUNDABLE otherwise) and answers 404 for an unknown one', async () => {
    const pending = t.id('rp');
    await t.createTransaction(auth, { id: pending, amount: 10_000 });
    const notYet = await refund(pending, {});
    expect(notYet.status).toBe(400);
    expect(notYet.body.errorCode).toBe('TRANSACTION_NOT_REFUNDABLE');
    const failed = t.id('rf');
    await t.createTransaction(auth, { id: failed, amount: 10_000, phoneNumber: '+919000000002' });
    expect((await refund(failed, { refund: { amount: 100 } })).body.errorCode).toBe('TRANSACTION_NOT_REFUNDABLE');
    const unknown = await refund('no_such_transaction', {});
    expect(unknown.status).toBe(404);
    expect(unknown.body.errorCode).toBe('NO_SUCH_TRANSACTION');
  });

  it('answers a transaction that has 10,000 refunds 400 TRANSACTION_NOT_REFUNDABLE too: a refund that cannot be made has one code (D250)', async () => {
    const id = await t.successful(auth, 20_000);
    // The count as 10,000 refunds leave it (playing them all is the volume test's job, not this one's).
    const transactions = t.sandbox.store.collection<TransactionRecord>(COLLECTIONS.transactions);
    const key = transactionKey(merchant.id, id);
    // In a unit of work: the shared store refuses a change outside one.
    await t.sandbox.store.unit(() => transactions.set(key, { ...transactions.get(key)!, refundCount: 10_000 }));
    const answer = await refund(id, { refund: { amount: 100 } });
    expect([answer.status, answer.body.errorCode]).toEqual([400, 'TRANSACTION_NOT_REFUNDABLE']);
    expect(answer.body.message).toContain('10,000 refunds');
  });

  it('refunds the whole remainder for an absent or 0 amount, then answers 400 ALREADY_REFUNDED (D02)', async () => {
    const id = await t.successful(auth, 20_000);
    const partial = await refund(id, { refund: { amount: 5_000 } });
    expect(partial.status).toBe(200);
    expect(partial.body.refund.id).toMatch(/^rfnd_/);
    const zero = await refund(id, { refund: { amount: 0 } });
    expect(zero.status).toBe(200);
    expect(zero.body.refund).toMatchObject({ amount: 15_000, status: 'PENDING', transactionId: id });
    const nothing = await refund(id, {});
    expect(nothing.status).toBe(400);
    expect(nothing.body.errorCode).toBe('ALREADY_REFUNDED');
    const one = await refund(id, { refund: { amount: 1 } });
    expect(one.body.errorCode).toBe('ALREADY_REFUNDED');
    const transaction = await t.transaction(auth, id);
    expect(transaction.refundedAmount).toBe(20_000);
    expect(transaction.status).toBe('SUCCESS');
  });

  it('answers 400 REFUND_AMOUNT_TOO_LARGE above the remainder (D02) and 400 BAD_REQUEST for an amount out of the schema', async () => {
    const id = await t.successful(auth, 20_000);
    expect((await refund(id, { refund: { amount: 20_001 } })).body.errorCode).toBe('REFUND_AMOUNT_TOO_LARGE');
    await refund(id, { refund: { amount: 19_000 } });
    const tooLarge = await refund(id, { refund: { amount: 1_001 } });
    expect(tooLarge.status).toBe(400);
    expect(tooLarge.body.errorCode).toBe('REFUND_AMOUNT_TOO_LARGE');
    expect(tooLarge.body.message).toContain('remaining unrefunded amount of 1,000 paise (₹10)');
    for (const amount of [-1, 1.5, 10_000_001]) {
      const invalid = await refund(id, { refund: { amount } });
      expect(invalid.status, String(amount)).toBe(400);
      expect(invalid.body.errorCode).toBe('BAD_REQUEST');
    }
    expect((await refund(id, { refund: { id: 'has space' } })).status).toBe(400);
  });

  it('is idempotent by refund.id: same id and amount answer 200 with the same refund; another amount 400 DUPLICATE_ID', async () => {
    const id = await t.successful(auth, 30_000);
    const first = await refund(id, { refund: { id: 'r-1', amount: 10_000 } });
    expect(first.status).toBe(200);
    const repeat = await refund(id, { refund: { id: 'r-1', amount: 10_000 } });
    expect(repeat.status).toBe(200);
    expect(repeat.body).toEqual(first.body);
    const other = await refund(id, { refund: { id: 'r-1', amount: 9_000 } });
    expect(other.status).toBe(400);
    expect(other.body.errorCode).toBe('DUPLICATE_ID');

    const all = await refund(id, { refund: { id: 'r-all' } });
    expect(all.body.refund.amount).toBe(20_000);
    expect((await refund(id, { refund: { id: 'r-all' } })).status).toBe(200);
    expect((await refund(id, { refund: { id: 'r-all', amount: 20_000 } })).status).toBe(200);
    // The same refund id on another transaction is another refund.
    const second = await t.successful(auth, 30_000);
    expect((await refund(second, { refund: { id: 'r-1', amount: 10_000 } })).status).toBe(200);
    expect((await t.transaction(auth, second)).refunds).toHaveLength(1);

    const transaction = await t.transaction(auth, id);
    expect(transaction.refundedAmount).toBe(30_000);
    expect(transaction.refunds.map((item: { id: string }) => item.id)).toEqual(['r-1', 'r-all']);
  });

  it('moves a refund from PENDING to SUCCESS after 1 s and sends the refund webhook down the URL chain', async () => {
    // Per-refund URL, else the transaction's URL, else the merchant's default.
    const id = t.id('rw');
    await t.createTransaction(auth, { id, amount: 40_000, webhookUrl: transactionHook.url });
    await t.complete(auth, id);
    const own = await refund(id, { refund: { id: 'own', amount: 1_000 }, createConfiguration: { webhookUrl: refundHook.url } });
    const inherited = await refund(id, { refund: { id: 'inherited', amount: 2_000 } });
    expect(own.body.refund.status).toBe('PENDING');
    expect(inherited.body.refund.status).toBe('PENDING');
    await t.advance(1_000);
    const transaction = await t.transaction(auth, id);
    expect(transaction.refunds.map((item: { status: string }) => item.status)).toEqual(['SUCCESS', 'SUCCESS']);
    expect(Date.parse(transaction.refunds[0].updatedAt) - Date.parse(transaction.refunds[0].createdAt)).toBe(1_000);

    await waitFor(() => (refundEvents(refundHook, id).length === 1 ? true : undefined));
    const ownEvent = await checkWebhook(refundEvents(refundHook, id)[0]!, 'notifyRefundUpdated', merchant.credentials.password);
    expect(ownEvent.refund).toEqual(transaction.refunds[0]);
    await waitFor(() => (refundEvents(transactionHook, id).length === 1 ? true : undefined));
    const inheritedEvent = await checkWebhook(refundEvents(transactionHook, id)[0]!, 'notifyRefundUpdated', merchant.credentials.password);
    expect(inheritedEvent.refund).toMatchObject({ id: 'inherited', status: 'SUCCESS', amount: 2_000 });

    const byDefault = await t.successful(auth, 10_000);
    await refund(byDefault, {});
    await t.advance(1_000);
    await waitFor(() => (refundEvents(merchantHook, byDefault).length === 1 ? true : undefined));
    await checkWebhook(refundEvents(merchantHook, byDefault)[0]!, 'notifyRefundUpdated', merchant.credentials.password);

    // One ordering key per transaction: the transaction event first, then the refunds.
    const deliveries = await t.deliveries(id);
    expect(deliveries.map((delivery) => delivery.event)).toEqual(['transactionUpdated', 'refundUpdated', 'refundUpdated']);
  });

  it('POST /sandbox/.../refunds/{refundId}/fail fails a PENDING refund: FAILED, not counted, webhook sent', async () => {
    const id = await t.successful(auth, 10_000);
    await refund(id, { refund: { id: 'doomed', amount: 4_000 }, createConfiguration: { webhookUrl: refundHook.url } });
    const failed = await t.request('POST', `/sandbox/gateway/transactions/${merchant.id}/${id}/refunds/doomed/fail`);
    expect(failed.status).toBe(200);
    expect(failed.body.refund.status).toBe('FAILED');
    const again = await t.request('POST', `/sandbox/gateway/transactions/${merchant.id}/${id}/refunds/doomed/fail`);
    expect(again.status).toBe(409);
    const transaction = await t.transaction(auth, id);
    expect(transaction.refundedAmount).toBe(0);
    expect((await refund(id, {})).body.refund.amount).toBe(10_000);
    await waitFor(() => (refundEvents(refundHook, id).length === 1 ? true : undefined));
    const event = await checkWebhook(refundEvents(refundHook, id)[0]!, 'notifyRefundUpdated', merchant.credentials.password);
    expect(event.refund).toMatchObject({ id: 'doomed', status: 'FAILED' });
  });
});

describe('settlement (D19)', () => {
  const istDate = (at: number) => new Date(at + IST).toISOString().slice(0, 10);
  const addDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY).toISOString().slice(0, 10);
  const settlement = (query: string, as: string) => t.call('GET', `/api/merchant/settlement${query}`, as);

  it('reports a day\'s sales and refunds, T+1, with a 2 % fee, and SETTLED with a utr once the day passed', async () => {
    // Start one hour after an IST midnight, so that everything below falls on one IST day.
    const nowMs = (await t.request('GET', '/sandbox/clock')).body.nowMs as number;
    const sinceMidnight = (nowMs + IST) % DAY;
    await t.advance(DAY - sinceMidnight + HOUR);

    const payer = await t.onboard({
      settlementDetails: { accountNumber: '001234567890', ifscCode: 'HDFC0001234', beneficiaryName: 'Acme', mdrChargedOnMerchant: true },
    });
    const payerAuth = payer.credentials.auth;
    const first = await t.successful(payerAuth, 100_000);
    await t.successful(payerAuth, 50_001);
    await refund(first, { refund: { amount: 20_000 } }, payerAuth);
    await t.advance(1_000);
    const day = istDate((await t.request('GET', '/sandbox/clock')).body.nowMs);
    const payout = addDays(day, 1);

    expect((await settlement('', payerAuth)).body.settlements).toEqual([]);
    const pending = await settlement(`?from=${day}&to=${payout}`, payerAuth);
    expect(pending.status).toBe(200);
    expect(pending.operationId).toBe('getSettlement');
    expect(pending.body.settlements).toEqual([
      {
        settlementDate: payout,
        status: 'PENDING',
        grossAmount: 150_001,
        refundedAmount: 20_000,
        feeAmount: 3_000,
        netAmount: 127_001,
        transactionCount: 2,
      },
    ]);

    await t.advance(DAY);
    const stillPending = await settlement(`?to=${payout}`, payerAuth);
    expect(stillPending.body.settlements[0].status).toBe('PENDING');

    await t.advance(DAY);
    const settled = await settlement('', payerAuth);
    expect(settled.body.settlements).toHaveLength(1);
    expect(settled.body.settlements[0]).toMatchObject({ settlementDate: payout, status: 'SETTLED', netAmount: 127_001 });
    expect(settled.body.settlements[0].utr).toMatch(/^[A-Za-z0-9]{12,22}$/);
    expect((await settlement('', payerAuth)).body.settlements[0].utr).toBe(settled.body.settlements[0].utr);

    // A refund today lands in tomorrow's entry; net may be negative. Newest first.
    await refund(first, { refund: { amount: 60_000 } }, payerAuth);
    await t.advance(1_000);
    const today = istDate((await t.request('GET', '/sandbox/clock')).body.nowMs);
    const both = await settlement(`?from=${payout}&to=${addDays(today, 1)}`, payerAuth);
    expect(both.body.settlements.map((entry: { settlementDate: string }) => entry.settlementDate)).toEqual([addDays(today, 1), payout]);
    expect(both.body.settlements[0]).toMatchObject({
      status: 'PENDING',
      grossAmount: 0,
      refundedAmount: 60_000,
      feeAmount: 0,
      netAmount: -60_000,
      transactionCount: 0,
    });
  });

  it('charges no fee when the merchant does not bear the MDR (or gave no settlement details)', async () => {
    const id = await t.successful(auth, 10_000);
    const record = await t.transaction(auth, id);
    const payout = addDays(istDate(Date.parse(record.updatedAt)), 1);
    const answer = await settlement(`?from=${payout}&to=${payout}`, auth);
    expect(answer.body.settlements[0]).toMatchObject({ feeAmount: 0 });
    expect(answer.body.settlements[0].netAmount).toBe(answer.body.settlements[0].grossAmount - answer.body.settlements[0].refundedAmount);
  });

  it('answers 400 for a malformed date, a reversed range or one longer than 31 days', async () => {
    for (const query of ['?from=2026-02-30', '?from=2026-11-10&to=2026-11-01', '?from=2026-01-01&to=2026-02-02', '?to=22-11-2026']) {
      const answer = await settlement(query, auth);
      expect(answer.status, query).toBe(400);
      expect(answer.body.errorCode).toBe('BAD_REQUEST');
    }
    expect((await settlement('?from=2026-01-01&to=2026-02-01', auth)).status).toBe(200);
  });
});
