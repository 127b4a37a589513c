/**
 * Concurrency invariants that test/sandbox/concurrency.test.ts (SDK and web) and
 * test/sandbox/gateway-concurrency.test.ts do not cover yet. Those already prove: parallel refunds
 * never exceed the amount (SDK, gateway), one check never yields two successes (gateway), a
 * duplicate id never creates two transactions (SDK, web, gateway transactions and merchants).
 *
 * Here: the same refund id sent in parallel refunds once (D18); parallel OTP submissions count
 * exactly three wrong ones and verify one right one (D15); one down payment registers once (D17);
 * a refund's completion racing its sandbox failure ends one way, with one webhook; parallel user
 * actions on one SDK or web transaction have one winner and one webhook; a user action racing the
 * expiry gives one final status; attempts created on a check while another one succeeds never add
 * a second SUCCESS; and, as a property over random batches (fast-check), concurrent SDK, web and
 * gateway refunds of random amounts always add up to at most the amount and to exactly what is
 * recorded.
 *
 * Every answer is validated against the bundled documents (helpers.ts).
 */
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { initiateSdk, type Answer } from '../support/sandbox.js';
import { startGateway, type GatewayTest } from '../support/gateway.js';

const SEED = 4_242;

let t: GatewayTest;
let merchantId: string;
let auth: string;

beforeAll(async () => {
  t = await startGateway();
  const merchant = await t.onboard();
  merchantId = merchant.id;
  auth = merchant.credentials.auth;
});
afterAll(async () => {
  await t.close();
});
afterEach(() => {
  expect(t.loggedErrors).toEqual([]);
});

const refund = (transactionId: string, body: unknown) => t.call('POST', `/api/merchant/transaction/${transactionId}/refund`, auth, body);
const referenceOf = (stage: any): string => stage.transactionStage.nextStep.options.userInputOptions[0].referenceId;
const count = <T>(items: T[], predicate: (item: T) => boolean) => items.filter(predicate).length;

describe('gateway', () => {
  it('20 parallel refunds with one refund.id and amount: all 200 with the same refund, counted once', async () => {
    const id = await t.successful(auth, 50_000);
    const answers = await Promise.all(Array.from({ length: 20 }, () => refund(id, { refund: { id: 'once', amount: 12_000 } })));
    expect(count(answers, (answer) => answer.status === 200)).toBe(20);
    // One refund: the same id, amount and creation in every answer. Its status may move on between the
    // answers (the refund settles one virtual second later, and the clock follows real time).
    const identity = ({ id, amount, transactionId, createdAt }: any) => ({ id, amount, transactionId, createdAt });
    for (const answer of answers) expect(identity(answer.body.refund)).toEqual(identity(answers[0]!.body.refund));
    for (const answer of answers) expect(['PENDING', 'SUCCESS']).toContain(answer.body.refund.status);
    for (const answer of answers) expect(answer.body.refund).toMatchObject({ id: 'once', amount: 12_000 });
    const record = await t.transaction(auth, id);
    expect(record.refunds).toHaveLength(1);
    expect(record.refundedAmount).toBe(12_000);
  });

  it('one refund.id with different amounts in parallel: one refund, the other amounts 400 DUPLICATE_ID', async () => {
    const id = await t.successful(auth, 50_000);
    const amounts = Array.from({ length: 20 }, (_, index) => 1_000 * (1 + (index % 4)));
    const answers = await Promise.all(amounts.map((amount) => refund(id, { refund: { id: 'contested', amount } })));
    const record = await t.transaction(auth, id);
    expect(record.refunds).toHaveLength(1);
    const winner = record.refunds[0].amount as number;
    answers.forEach((answer, index) => {
      if (amounts[index] === winner) expect([answer.status, answer.body.refund?.amount]).toEqual([200, winner]);
      else expect([answer.status, answer.body.errorCode]).toEqual([400, 'DUPLICATE_ID']);
    });
    expect(record.refundedAmount).toBe(winner);
  });

  it('10 parallel wrong OTPs: exactly three count (400 INVALID_OTP, no match), the rest 400 INVALID_OTP with no attempt left; FAILED once, one webhook', async () => {
    const id = t.id('otp_wrong');
    expect((await t.createTransaction(auth, { id, amount: 10_000 })).status).toBe(200);
    const reference = referenceOf(await t.stage(auth, id));
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        t.call('POST', `/api/merchant/transaction/${id}/user-inputs/${reference}`, auth, { value: `11111${index}` }),
      ),
    );
    const invalid = (answer: Answer, text: string) => answer.status === 400 && answer.body.errorCode === 'INVALID_OTP' && String(answer.body.message).includes(text);
    expect(count(answers, (answer) => invalid(answer, 'does not match'))).toBe(3);
    expect(count(answers, (answer) => invalid(answer, 'No OTP attempts are left'))).toBe(7);
    expect(await t.transaction(auth, id)).toMatchObject({ status: 'FAILED', failureReason: 'OTP_ATTEMPTS_EXCEEDED' });
    expect(await t.deliveries(id)).toHaveLength(1);
  });

  it('12 parallel right OTPs: one 200 (payment), the others 409; parallel register-external: one 200, the others 409', async () => {
    const id = t.id('otp_right');
    await t.createTransaction(auth, { id, amount: 10_000 });
    const reference = referenceOf(await t.stage(auth, id));
    const otps = await Promise.all(
      Array.from({ length: 12 }, () => t.call('POST', `/api/merchant/transaction/${id}/user-inputs/${reference}`, auth, { value: '123456' })),
    );
    expect(count(otps, (answer) => answer.status === 200)).toBe(1);
    expect(count(otps, (answer) => answer.status === 409 && answer.body.errorCode === 'INVALID_STATE')).toBe(11);
    const registrations = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        t.call('POST', `/api/merchant/transaction/${id}/payment/register-external`, auth, {
          metaData: { paymentMode: 'UPI', pgPaymentId: `pay_${index}`, amount: 2_500 },
        }),
      ),
    );
    expect(count(registrations, (answer) => answer.status === 200)).toBe(1);
    expect(count(registrations, (answer) => answer.status === 409 && answer.body.errorCode === 'INVALID_STATE')).toBe(9);
    const winner = registrations.findIndex((answer) => answer.status === 200);
    await t.advance(2_000);
    const record = await t.transaction(auth, id);
    expect(record.status).toBe('SUCCESS');
    expect(record.downPayment.metaData.pgPaymentId).toBe(`pay_${winner}`);
    expect(await t.deliveries(id)).toHaveLength(1);
  });

  it('refunds completing on the clock while the sandbox fails them: each ends once, one webhook each, counted right', async () => {
    const id = await t.successful(auth, 100_000);
    const ids = Array.from({ length: 10 }, (_, index) => `race_${index}`);
    for (const refundId of ids) expect((await refund(id, { refund: { id: refundId, amount: 5_000 } })).status).toBe(200);
    const fails = ids.map((refundId) => t.request('POST', `/sandbox/gateway/transactions/${merchantId}/${id}/refunds/${refundId}/fail`));
    const [answers] = await Promise.all([Promise.all(fails), t.advance(1_000)]);
    for (const answer of answers) expect([200, 409]).toContain(answer.status);
    const record = await t.transaction(auth, id);
    for (const each of record.refunds) expect(['SUCCESS', 'FAILED']).toContain(each.status);
    const succeeded = record.refunds.filter((each: { status: string }) => each.status === 'SUCCESS');
    expect(record.refundedAmount).toBe(5_000 * succeeded.length);
    answers.forEach((answer, index) => {
      const final = record.refunds.find((each: { id: string }) => each.id === ids[index])!.status;
      expect(final).toBe(answer.status === 200 ? 'FAILED' : 'SUCCESS');
    });
    const refundEvents = (await t.deliveries(id)).filter((delivery) => delivery.event === 'refundUpdated');
    expect(refundEvents).toHaveLength(10);
    expect(new Set(refundEvents.map((delivery) => JSON.parse(delivery.body).refund.id)).size).toBe(10);
  });

  it('attempts created on one check while another one succeeds: never a second SUCCESS', async () => {
    const check = await t.check(auth, '+919000000001', 30_000);
    const first = t.id('chk_first');
    await t.createTransaction(auth, { id: first, amount: 30_000, checkId: check.id });
    const second = t.id('chk_second');
    await t.createTransaction(auth, { id: second, amount: 30_000, checkId: check.id });
    await t.payDownPayment(auth, first);
    await t.payDownPayment(auth, second);
    // The confirmation of both lands during the advance, while new attempts are created.
    const late = Array.from({ length: 10 }, () => t.id('chk_late'));
    await Promise.all([t.advance(2_000), ...late.map((id) => t.createTransaction(auth, { id, amount: 30_000, checkId: check.id }))]);
    const records = await Promise.all([first, second, ...late].map((id) => t.transaction(auth, id)));
    expect(count(records, (record) => record.status === 'SUCCESS')).toBe(1);
    for (const record of records) {
      if (record.status !== 'SUCCESS') expect(['PENDING', 'FAILED']).toContain(record.status);
      if (record.status === 'FAILED') expect(record.failureReason).toBe('OTHER_ATTEMPT_SUCCEEDED');
    }
    // A PENDING late attempt can never succeed either.
    const pending = records.filter((record) => record.status === 'PENDING');
    for (const record of pending) {
      const stage = await t.stage(auth, record.id);
      if (stage.transactionStage.nextStep.step !== 'authenticate') continue;
      await t.payDownPayment(auth, record.id);
    }
    await t.advance(2_000);
    const after = await Promise.all([first, second, ...late].map((id) => t.transaction(auth, id)));
    expect(count(after, (record) => record.status === 'SUCCESS')).toBe(1);
  });

  it('property: concurrent gateway refunds of random amounts add up to at most the amount, exactly as recorded', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1_000, max: 50_000 }),
        fc.array(fc.option(fc.integer({ min: 0, max: 20_000 }), { nil: undefined }), { minLength: 2, maxLength: 25 }),
        async (amount, requests) => {
          const id = await t.successful(auth, amount, '+919812345670');
          const answers = await Promise.all(
            requests.map((value) => refund(id, value === undefined ? {} : { refund: { amount: value } })),
          );
          const accepted = answers.filter((answer) => answer.status === 200).map((answer) => answer.body.refund.amount as number);
          for (const answer of answers) {
            if (answer.status !== 200) {
              expect(answer.status).toBe(400);
              expect(['REFUND_AMOUNT_TOO_LARGE', 'ALREADY_REFUNDED']).toContain(answer.body.errorCode);
            }
          }
          const total = accepted.reduce((sum, value) => sum + value, 0);
          expect(total).toBeLessThanOrEqual(amount);
          const record = await t.transaction(auth, id);
          expect(record.refunds).toHaveLength(accepted.length);
          expect(record.refundedAmount).toBe(total);
        },
      ),
      { seed: SEED, numRuns: 12 },
    );
  });
});

describe('SDK and web', () => {
  for (const family of ['sdk', 'web'] as const) {
    it(`${family}: 30 parallel user actions on one transaction: one winner, the others 409, one webhook`, async () => {
      const id = `${family}_race_${Date.now()}`;
      if (family === 'sdk') await initiateSdk(t, id);
      else expect((await t.web('POST', '/api/transaction', { id, amount: 150_000, user: { name: 'Asha Rao', phoneNumber: '+919000000001' } })).status).toBe(200);
      const actions = Array.from({ length: 30 }, (_, index) => ['confirm', 'cancel', 'fail'][index % 3]!);
      const answers = await Promise.all(actions.map((action) => t.request('POST', `/sandbox/${family}/transactions/${id}/${action}`)));
      const winners = answers.filter((answer) => answer.status === 200);
      expect(winners).toHaveLength(1);
      expect(count(answers, (answer) => answer.status === 409)).toBe(29);
      const status = winners[0]!.body.status as string;
      expect(['SUCCESS', 'CANCELLED', 'FAILURE']).toContain(status);
      if (family === 'sdk') {
        expect((await t.sdk('/merchant/credit/checkTransactionStatus', { merchantTransactionId: id })).body.message).toBe(status);
      } else {
        expect((await t.web('GET', `/api/transaction/status?id=${id}`)).body.status).toBe(status);
      }
      const deliveries = await t.deliveries(id);
      expect(deliveries).toHaveLength(1);
      expect(JSON.parse(deliveries[0].body).status).toBe(status);
    });

    it(`${family}: a confirmation racing the expiry ends in one final status with one webhook`, async () => {
      const ids = Array.from({ length: 8 }, (_, index) => `${family}_expiry_${index}_${Date.now()}`);
      for (const id of ids) {
        if (family === 'sdk') await initiateSdk(t, id);
        else await t.web('POST', '/api/transaction', { id, amount: 150_000, user: { name: 'Asha Rao', phoneNumber: '+919000000001' } });
      }
      const expiry = family === 'sdk' ? 60_000 : 15 * 60_000;
      await t.advance(expiry - 1);
      const [confirmations] = await Promise.all([
        Promise.all(ids.map((id) => t.request('POST', `/sandbox/${family}/transactions/${id}/confirm`))),
        t.advance(1),
      ]);
      for (const [index, id] of ids.entries()) {
        const answer = confirmations[index]!;
        const view = await t.request('GET', `/sandbox/${family}/transactions/${id}`);
        if (answer.status === 200) expect(view.body.status).toBe('SUCCESS');
        else {
          expect(answer.status).toBe(409);
          expect(view.body).toMatchObject({ status: 'FAILURE', failureReason: 'EXPIRED' });
        }
        expect(await t.deliveries(id)).toHaveLength(1);
      }
    });
  }

  for (const family of ['sdk', 'web'] as const) {
  it(`property: concurrent ${family} refunds of random amounts add up to at most the amount, exactly as recorded`, async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 100, max: 500_000 }),
        fc.array(fc.option(fc.integer({ min: 0, max: 200_000 }), { nil: undefined }), { minLength: 2, maxLength: 30 }),
        async (amount, requests) => {
          const id = `prop_${family}_${Date.now()}_${run++}`;
          if (family === 'sdk') await initiateSdk(t, id, amount);
          else expect((await t.web('POST', '/api/transaction', { id, amount, user: { name: 'Asha Rao', phoneNumber: '+919000000001' } })).status).toBe(200);
          await t.request('POST', `/sandbox/${family}/transactions/${id}/confirm`);
          const answers = await Promise.all(
            requests.map((value) =>
              family === 'sdk'
                ? t.sdk('/merchant/credit/refundTransaction', { merchantTransactionId: id, ...(value === undefined ? {} : { amount: value }) })
                : t.web('POST', '/api/refund', { transactionId: id, ...(value === undefined ? {} : { amount: value }) }),
            ),
          );
          const view = await t.request('GET', `/sandbox/${family}/transactions/${id}`);
          const accepted = count(answers, (answer) => answer.status === 200);
          for (const answer of answers) {
            if (answer.status !== 200) expect(['REFUND_AMOUNT_TOO_LARGE', 'ALREADY_REFUNDED']).toContain(answer.body.message);
          }
          expect(view.body.refunds).toHaveLength(accepted);
          const total = (view.body.refunds as { amount: number }[]).reduce((sum, each) => sum + each.amount, 0);
          expect(view.body.refundedAmount).toBe(total);
          expect(total).toBeLessThanOrEqual(amount);
        },
      ),
      { seed: SEED, numRuns: 20 },
    );
  });
  }
});
