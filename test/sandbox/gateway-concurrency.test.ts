/**
 * Concurrency in the gateway sandbox: parallel refunds never exceed the amount, parallel attempts on
 * one check give exactly one success, parallel creates with one id give exactly one 200. And the
 * 500 INTERNAL_SERVER_ERROR answer when the sandbox itself fails. Every answer is validated against the
 * bundled document.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore, type Collection, type Store } from '../../src/sandbox/store.js';
import { DEVICE, startGateway, type GatewayTest } from '../support/gateway.js';

let t: GatewayTest;
let auth: string;

beforeAll(async () => {
  t = await startGateway();
  auth = (await t.onboard()).credentials.auth;
});
afterAll(async () => {
  await t.close();
});
afterEach(() => {
  expect(t.loggedErrors).toEqual([]);
});

describe('concurrency', () => {
  it('50 parallel refunds never exceed the amount', async () => {
    const id = await t.successful(auth, 10_000);
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        t.call('POST', `/api/merchant/transaction/${id}/refund`, auth, index % 10 === 9 ? {} : { refund: { amount: 700 } }),
      ),
    );
    const created = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status === 400);
    expect(created.length + refused.length).toBe(50);
    for (const answer of refused) expect(['REFUND_AMOUNT_TOO_LARGE', 'ALREADY_REFUNDED']).toContain(answer.body.errorCode);
    const total = created.reduce((sum, answer) => sum + (answer.body.refund.amount as number), 0);
    expect(total).toBeLessThanOrEqual(10_000);
    const transaction = await t.transaction(auth, id);
    expect(transaction.refundedAmount).toBe(total);
    expect(transaction.refunds).toHaveLength(created.length);
    // A full refund is among them, so everything is refunded.
    expect(total).toBe(10_000);
    await t.advance(1_000);
    const settled = await t.transaction(auth, id);
    expect(settled.refunds.every((refund: { status: string }) => refund.status === 'SUCCESS')).toBe(true);
    expect(settled.refundedAmount).toBe(10_000);
  });

  it('20 parallel attempts on one check: exactly one SUCCESS, the others OTHER_ATTEMPT_SUCCEEDED', async () => {
    const check = await t.check(auth, '+919000000001', 25_000);
    const ids = Array.from({ length: 20 }, () => t.id('race'));
    const created = await Promise.all(ids.map((id) => t.createTransaction(auth, { id, amount: 25_000, checkId: check.id })));
    expect(created.map((answer) => answer.status)).toEqual(ids.map(() => 200));
    const waits = await Promise.all(ids.map((id) => t.payDownPayment(auth, id)));
    expect(waits.every((stage) => stage.transactionStage.nextStep.step === 'wait')).toBe(true);
    await t.advance(2_000);
    const records = await Promise.all(ids.map((id) => t.transaction(auth, id)));
    const successes = records.filter((record) => record.status === 'SUCCESS');
    expect(successes).toHaveLength(1);
    const others = records.filter((record) => record.status !== 'SUCCESS');
    expect(others).toHaveLength(19);
    for (const record of others) expect(record).toMatchObject({ status: 'FAILED', failureReason: 'OTHER_ATTEMPT_SUCCEEDED' });
    // Every attempt's final status was announced once.
    const deliveries = (await t.deliveries()).filter((delivery) => ids.includes(delivery.transactionId));
    expect(deliveries).toHaveLength(20);
  });

  it('50 parallel creates with one id: exactly one 200, the others 400 DUPLICATE_TRANSACTION_ID', async () => {
    const id = t.id('same');
    const answers = await Promise.all(Array.from({ length: 50 }, () => t.createTransaction(auth, { id, amount: 10_000 })));
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    const conflicts = answers.filter((answer) => answer.status === 400);
    expect(conflicts).toHaveLength(49);
    for (const answer of conflicts) expect(answer.body.errorCode).toBe('DUPLICATE_TRANSACTION_ID');
  });

  it('parallel merchant creates with one id: exactly one 201', async () => {
    const id = t.id('m');
    const answers = await Promise.all(Array.from({ length: 20 }, () => t.createMerchant({ id })));
    expect(answers.filter(({ answer }) => answer.status === 201)).toHaveLength(1);
    expect(answers.filter(({ answer }) => answer.status === 400 && answer.body.errorCode === 'DUPLICATE_ID')).toHaveLength(19);
  });
});

describe('500 INTERNAL_SERVER_ERROR (D02)', () => {
  it('answers a failure of the sandbox itself as 500 INTERNAL_SERVER_ERROR without details of the failure', async () => {
    // A store whose pre-eligibility checks cannot be written.
    const memory = new MemoryStore();
    const broken: Store = {
      collection<T>(name: string): Collection<T> {
        const collection = memory.collection<T>(name);
        if (name !== 'gateway.checks') return collection;
        return {
          get: (key) => collection.get(key),
          has: (key) => collection.has(key),
          delete: (key) => collection.delete(key),
          values: () => collection.values(),
          get size() {
            return collection.size;
          },
          set: () => {
            throw new Error('disk full');
          },
        };
      },
      clear: () => memory.clear(),
      unit: (work) => memory.unit(work),
      observe: () => undefined,
      shared: false,
    };
    const failing = await startGateway({ store: broken });
    try {
      const merchant = await failing.onboard();
      const answer = await failing.call('POST', '/api/merchant/transaction/pre-eligibility', merchant.credentials.auth, {
        user: { name: 'Asha Rao', phoneNumber: '+919000000001' },
        transaction: { amount: 10_000 },
        deviceInformation: DEVICE,
      });
      expect(answer.status).toBe(500);
      expect(answer.body.errorCode).toBe('INTERNAL_SERVER_ERROR');
      expect(answer.text).not.toContain('disk full');
      expect(failing.loggedErrors).toHaveLength(1);
    } finally {
      await failing.close();
    }
  });
});
