/**
 * Amounts worded with their unit (D75): every amount error says integer paise with an example,
 * bounds in paise and rupees; an accepted amount that looks like rupees is logged, not refused.
 */
import { describe, expect, it } from 'vitest';
import { amountIssue, amountProblemOf, isAmountField, paiseAndRupees, rupeeLookingWarning, rupees } from '../../src/sandbox/amounts.js';
import { MAX_RUPEE_WARNINGS } from '../../src/sandbox/families/direct.js';
import type { Logger } from '../../src/sandbox/router.js';
import { useSandbox } from '../support/sandbox.js';

const UNIT = 'amounts are integers in paise (₹1 = 100 paise: ₹1,500 is 150000)';
const NOT_WHOLE = 'must be a whole number of paise, an integer (₹1 = 100 paise: ₹1,500 is 150000)';

describe('amount wording', () => {
  it('writes paise as rupees with Indian grouping', () => {
    expect([0, 100, 150, 1500, 150_000, 10_000_000, 123_456_789].map(rupees)).toEqual([
      '₹0',
      '₹1',
      '₹1.50',
      '₹15',
      '₹1,500',
      '₹1,00,000',
      '₹12,34,567.89',
    ]);
    expect(paiseAndRupees(10_000_000)).toBe('10,000,000 paise (₹1,00,000)');
  });

  it('says the unit for each keyword about a number, with the bounds in paise and rupees', () => {
    expect(amountIssue(amountProblemOf('type')!)).toBe(NOT_WHOLE);
    expect(amountIssue(amountProblemOf('minimum', 100)!)).toBe(`must be at least 100 paise (₹1); ${UNIT}`);
    expect(amountIssue(amountProblemOf('maximum', undefined, 'must be <= 10000000')!)).toBe(`must be at most 10,000,000 paise (₹1,00,000); ${UNIT}`);
    expect(amountProblemOf('required')).toBeUndefined();
    expect(['/amount', '/transaction/amount', '/merchant/configuration/maxOrderAmount', 'amount'].every(isAmountField)).toBe(true);
    expect(['/amountx', '/id', 'limit'].some(isAmountField)).toBe(false);
  });

  it('warns only of amounts under ₹100', () => {
    expect(rupeeLookingWarning("web transaction 'w1'", 1500)).toBe(
      `web transaction 'w1': amount 1500 is 1,500 paise (₹15). Accepted, as the service does; if ₹1,500 was meant, send 150000 (${UNIT}).`,
    );
    expect(rupeeLookingWarning('x', 10_000)).toBeUndefined();
    expect(rupeeLookingWarning('x', 150_000)).toBeUndefined();
  });
});

const warnings: string[] = [];
const logger: Logger = { info: () => undefined, warn: (message) => warnings.push(message), error: () => undefined };
const t = useSandbox({ logger });
const user = { name: 'Asha Rao', phoneNumber: '+919000000001' };
let counter = 0;
const newId = (prefix: string) => `${prefix}_amounts_${counter++}`;

describe('the sandbox words amount errors with their unit', () => {
  it('web initiate: a fractional amount, a too small and a too large one', async () => {
    const fractional = await t.web('POST', '/api/transaction', { id: newId('web'), amount: 1500.5, user });
    expect([fractional.status, fractional.body]).toEqual([400, { message: 'BAD_REQUEST', detail: `/amount ${NOT_WHOLE}` }]);
    const small = await t.web('POST', '/api/transaction', { id: newId('web'), amount: 15, user });
    expect(small.body.detail).toBe(`/amount must be at least 100 paise (₹1); ${UNIT}`);
    const large = await t.web('POST', '/api/transaction', { id: newId('web'), amount: 15_000_000, user });
    expect(large.body.detail).toBe(`/amount must be at most 10,000,000 paise (₹1,00,000); ${UNIT}`);
  });

  it('SDK initiate: a fractional amount says integer paise, not "multiple of 1"', async () => {
    const body = { merchantTransactionId: newId('sdk'), userPhoneNumber: '+919000000001', userId: 'u_1', amount: 1500.5 };
    const answer = await t.sdk('/merchant/credit/initiateTransaction', body);
    expect(answer.body).toEqual({ message: 'BAD_REQUEST', detail: `/amount ${NOT_WHOLE}` });
  });

  it('accepts an amount that looks like rupees and says so in the log, a bounded number of times', async () => {
    warnings.length = 0;
    const id = newId('web');
    const answer = await t.web('POST', '/api/transaction', { id, amount: 1500, user });
    expect(answer.status).toBe(200);
    expect(warnings).toEqual([expect.stringContaining(`web transaction '${id}': amount 1500 is 1,500 paise (₹15). Accepted`)]);
    await t.web('POST', '/api/transaction', { id: newId('web'), amount: 150_000, user });
    expect(warnings).toHaveLength(1);
    for (let i = 0; i < MAX_RUPEE_WARNINGS + 5; i++) {
      const sdk = { merchantTransactionId: newId('sdk'), userPhoneNumber: '+919000000001', userId: 'u_1', amount: 2000 };
      expect((await t.sdk('/merchant/credit/initiateTransaction', sdk)).status).toBe(201);
    }
    const sdkWarnings = warnings.filter((line) => line.startsWith('SDK transaction'));
    expect(sdkWarnings).toHaveLength(MAX_RUPEE_WARNINGS);
    expect(sdkWarnings.at(-1)).toMatch(/\(Further such amounts are not reported\.\)$/);
  });
});
