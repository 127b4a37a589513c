import { describe, expect, it } from 'vitest';
import { initiateSdk, useSandbox } from '../support/sandbox.js';

const t = useSandbox();

describe('concurrency', () => {
  it('50 parallel refunds of one transaction never exceed its amount', async () => {
    const id = `conc_refund_${Date.now()}`;
    await initiateSdk(t, id, 250_000);
    await t.request('POST', `/sandbox/sdk/transactions/${id}/confirm`);
    // 50 refunds of 7,000 to 13,000 paise: together far more than the 250,000 of the order.
    const amounts = Array.from({ length: 50 }, (_, index) => 7_000 + ((index * 1_237) % 6_001));
    const answers = await Promise.all(
      amounts.map((amount) => t.sdk('/merchant/credit/refundTransaction', { merchantTransactionId: id, amount })),
    );
    const accepted = answers.flatMap((answer, index) => (answer.status === 200 ? [amounts[index]!] : []));
    const refused = answers.filter((answer) => answer.status !== 200);
    expect(accepted.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    for (const answer of refused) {
      expect(answer.status).toBe(400);
      expect(['REFUND_AMOUNT_TOO_LARGE', 'ALREADY_REFUNDED']).toContain(answer.body.message);
    }
    const total = accepted.reduce((sum, amount) => sum + amount, 0);
    expect(total).toBeLessThanOrEqual(250_000);
    const view = await t.request('GET', `/sandbox/sdk/transactions/${id}`);
    expect(view.body.refundedAmount).toBe(total);
    expect(view.body.refunds).toHaveLength(accepted.length);
  });

  it('50 parallel full refunds: exactly one succeeds (SDK and web)', async () => {
    const id = `conc_full_${Date.now()}`;
    await initiateSdk(t, id, 100_000);
    await t.request('POST', `/sandbox/sdk/transactions/${id}/confirm`);
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => t.sdk('/merchant/credit/refundTransaction', { merchantTransactionId: id })),
    );
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    expect(answers.filter((answer) => answer.body.message === 'ALREADY_REFUNDED')).toHaveLength(49);

    const web = `conc_web_full_${Date.now()}`;
    expect((await t.web('POST', '/api/transaction', { id: web, amount: 100_000, user: { name: 'Asha Rao', phoneNumber: '+919000000001' } })).status).toBe(200);
    await t.request('POST', `/sandbox/web/transactions/${web}/confirm`);
    const webAnswers = await Promise.all(Array.from({ length: 50 }, () => t.web('POST', '/api/refund', { transactionId: web })));
    expect(webAnswers.filter((answer) => answer.status === 200)).toHaveLength(1);
    expect(webAnswers.filter((answer) => answer.body.message === 'ALREADY_REFUNDED')).toHaveLength(49);
    expect((await t.request('GET', `/sandbox/web/transactions/${web}`)).body.refundedAmount).toBe(100_000);
  });

  it('50 parallel SDK initiates with one id create exactly one transaction', async () => {
    const id = `conc_init_${Date.now()}`;
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        t.sdk('/merchant/credit/initiateTransaction', {
          merchantTransactionId: id,
          userPhoneNumber: '+919000000001',
          userId: `user_${index}`,
          amount: 1_000 + index,
        }),
      ),
    );
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(1);
    expect(answers.filter((answer) => answer.body.message === 'DUPLICATE_TRANSACTION_ID')).toHaveLength(49);
    const winner = answers.findIndex((answer) => answer.status === 201);
    const view = await t.request('GET', `/sandbox/sdk/transactions/${id}`);
    expect(view.body).toMatchObject({ status: 'PENDING', userId: `user_${winner}`, amount: 1_000 + winner });
  });

  it('50 parallel web initiates with one id create exactly one transaction', async () => {
    const id = `conc_web_${Date.now()}`;
    const answers = await Promise.all(
      Array.from({ length: 50 }, () =>
        t.web('POST', '/api/transaction', { id, amount: 150_000, user: { name: 'Asha Rao', phoneNumber: '+919000000001' } }),
      ),
    );
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    expect(answers.filter((answer) => answer.body.message === 'DUPLICATE_TRANSACTION_ID')).toHaveLength(49);
  });
});
