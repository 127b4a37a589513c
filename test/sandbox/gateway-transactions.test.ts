/**
 * The Transactional API's transactions in the gateway sandbox: pre-eligibility with the test users
 * (D12), the merchant's configuration (D35), create and its failures (D13, D15, D14, D30, D36), the step
 * machine with OTPs (D15, D16), the down payment (D17), cancel (D37), several attempts on one check,
 * expiry on the virtual clock, isolation between merchants (D02), the list (D19) and the
 * transaction webhook (D23). Every answer is validated
 * against the bundled document.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkWebhook, startGateway, type Credentials, type GatewayTest } from '../support/gateway.js';
import { startReceiver, waitFor, type Receiver } from '../support/sandbox.js';

const MINUTE = 60_000;

let t: GatewayTest;
let hook: Receiver;
let merchant: { id: string; credentials: Credentials };
let auth: string;

beforeAll(async () => {
  t = await startGateway();
  hook = await startReceiver();
  merchant = await t.onboard({ defaultWebhookUrl: hook.url });
  auth = merchant.credentials.auth;
});
afterAll(async () => {
  await t.close();
  await hook.close();
});
afterEach(() => {
  expect(t.loggedErrors).toEqual([]);
});

async function now(): Promise<number> {
  return (await t.request('GET', '/sandbox/clock')).body.nowMs as number;
}

const submit = (transactionId: string, referenceId: string, value: string) =>
  t.call('POST', `/api/merchant/transaction/${transactionId}/user-inputs/${referenceId}`, auth, { value });

const referenceOf = (stage: any): string => stage.transactionStage.nextStep.options.userInputOptions[0].referenceId;

/** The transaction webhooks received for one transaction id. */
function webhooksOf(id: string) {
  return hook.received.filter((item) => JSON.parse(item.body).transaction?.id === id);
}

describe('pre-eligibility (D12) with the documented test users', () => {
  it.each([
    ['+919000000001', 150_000, true, undefined],
    ['+919000000001', 3_750_000, true, undefined],
    ['+919000000001', 3_750_001, false, 'CREDIT_LIMIT_EXCEEDED'],
    ['+919000000002', 1_000, false, 'RISK_DECLINED'],
    ['+919000000003', 1_000_000, true, undefined],
    ['+919000000003', 1_000_001, false, 'CREDIT_LIMIT_EXCEEDED'],
    ['+919000000005', 1_000, false, 'CREDIT_LIMIT_EXCEEDED'],
    ['+919000000009', 1_000, false, 'USER_BLOCKED'],
    ['+919812345678', 5_000_000, true, undefined],
    ['+919812345678', 5_000_001, false, 'CREDIT_LIMIT_EXCEEDED'],
  ])('%s for %i paise: eligible %s %s', async (phoneNumber, amount, eligible, reason) => {
    const before = await now();
    const check = await t.check(auth, phoneNumber, amount);
    expect(check.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(check.eligible).toBe(eligible);
    expect(check.amount).toBe(amount);
    if (reason === undefined) expect(check).not.toHaveProperty('ineligibilityReason');
    else expect(check.ineligibilityReason).toBe(reason);
    const validity = Date.parse(check.expiresAt) - before;
    expect(validity).toBeGreaterThanOrEqual(15 * MINUTE);
    expect(validity).toBeLessThan(15 * MINUTE + 5_000);
  });

  it('answers 400 BAD_REQUEST for a malformed phone number or amount', async () => {
    const answer = await t.call('POST', '/api/merchant/transaction/pre-eligibility', auth, {
      user: { name: 'A', phoneNumber: '9000000001' },
      transaction: { amount: 99 },
      deviceInformation: { userAgent: 'x', ipAddress: '1.2.3.4' },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.details.map((detail: { field: string }) => detail.field).sort()).toEqual(['/transaction/amount', '/user/phoneNumber']);
  });
});

describe('the merchant configuration (D35)', () => {
  it('answers 200 {version: 2, maxOrderAmount} to the merchant\'s Transactional credentials, 401 otherwise', async () => {
    const answer = await t.call('GET', '/api/merchant/configuration', auth, undefined, { 'Content-Type': 'application/json', Accept: 'application/json' });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.operationId).toBe('getMerchantConfiguration');
    expect(answer.body).toEqual({ version: 2, maxOrderAmount: 10_000_000 });
    for (const credentials of [null, 'Basic eDp5', `Basic ${Buffer.from('partner_test:test_private_key').toString('base64')}`]) {
      const refused = await t.call('GET', '/api/merchant/configuration', credentials);
      expect(refused.status, String(credentials)).toBe(401);
      expect(refused.body.errorCode).toBe('AUTHORIZATION_FAILED');
    }
    // The Merchant API credentials are not a merchant's: 401, and the literal path is not read as a merchant id.
    const merchantApi = await t.merchantApi('GET', '/api/merchant/configuration');
    expect(merchantApi.status).toBe(401);
  });

  it('keeps `configuration` from being a merchant id', async () => {
    const answer = await t.createMerchant({ id: 'configuration' });
    expect(answer.answer.status).toBe(400);
    expect(answer.answer.body.errorCode).toBe('BAD_REQUEST');
  });
});

describe('create transaction', () => {
  it('answers 200 with the record (D14, D18), the check referenced, notes and expiry defaulted, the hosted page as url', async () => {
    const check = await t.check(auth, '+919000000001', 99_900);
    const id = t.id('txn');
    const before = await now();
    const answer = await t.createTransaction(auth, { id, amount: 99_900, checkId: check.id });
    expect(answer.status).toBe(200);
    expect(answer.operationId).toBe('createTransaction');
    const transaction = answer.body.transaction;
    expect(transaction).toMatchObject({ id, amount: 99_900, status: 'PENDING', notes: {}, preEligibilityCheckId: check.id, refundedAmount: 0, refunds: [] });
    expect(transaction).not.toHaveProperty('failureReason');
    expect(transaction).not.toHaveProperty('downPayment');
    expect(transaction).not.toHaveProperty('uri');
    expect(transaction).not.toHaveProperty('amountRefunded');
    expect(Date.parse(transaction.expiresAt) - Date.parse(transaction.createdAt)).toBe(15 * MINUTE);
    expect(Date.parse(transaction.createdAt)).toBeGreaterThanOrEqual(before);

    const page = await t.request('GET', new URL(transaction.url).pathname);
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ transaction: { id }, nextStep: { step: 'authenticate' }, final: false });
  });

  it('accepts what the hosted-page integrations send: no deviceInformation, free notes, mode, empty overrides (D14, D30, D36)', async () => {
    const id = t.id('hosted');
    const notes = { order: { id: 1042, items: [{ sku: 'TEA-1', quantity: 2, price: 249.5 }], coupon: null }, partialCod: false, tags: ['gift'] };
    const answer = await t.call('POST', '/api/merchant/transaction', auth, {
      transaction: { id, amount: 49_900, mode: 'LIVE', notes },
      user: { name: 'Asha Rao', phoneNumber: '+919000000001', email: 'asha.rao@example.in' },
      createConfiguration: { successRedirectUrl: 'https://shop.example/ok', colorOverride: '', logoOverride: '' },
    });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.transaction.notes).toEqual(notes);
    expect((await t.transaction(auth, id)).notes).toEqual(notes);
    const page = await t.request('GET', new URL(answer.body.transaction.url).pathname);
    expect(page.body.merchant).toMatchObject({ color: null, logo: null });
    const test = await t.createTransaction(auth, { id: t.id('mode'), amount: 10_000, mode: 'TEST', device: false });
    expect(test.status, test.text).toBe(200);
    const other = await t.createTransaction(auth, { id: t.id('mode'), amount: 10_000, notes: { mode: 'SANDBOX' }, mode: 'SANDBOX' as 'TEST' });
    expect(other.status).toBe(400);
  });

  it('answers 400 DUPLICATE_TRANSACTION_ID for an id used before by this merchant; another merchant may use it', async () => {
    const id = t.id('dup');
    expect((await t.createTransaction(auth, { id, amount: 10_000 })).status).toBe(200);
    const again = await t.createTransaction(auth, { id, amount: 10_000 });
    expect(again.status).toBe(400);
    expect(again.body.errorCode).toBe('DUPLICATE_TRANSACTION_ID');
    const other = await t.onboard();
    expect((await t.createTransaction(other.credentials.auth, { id, amount: 10_000 })).status).toBe(200);
  });

  it('answers 400 UNKNOWN_PRE_ELIGIBILITY_CHECK for an unknown check and for another merchant\'s check', async () => {
    const unknown = await t.createTransaction(auth, { id: t.id('txn'), amount: 10_000, checkId: randomUUID() });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errorCode).toBe('UNKNOWN_PRE_ELIGIBILITY_CHECK');
    const other = await t.onboard();
    const foreign = await t.check(other.credentials.auth, '+919000000001', 10_000);
    const answer = await t.createTransaction(auth, { id: t.id('txn'), amount: 10_000, checkId: foreign.id });
    expect(answer.status).toBe(400);
    expect(answer.body.errorCode).toBe('UNKNOWN_PRE_ELIGIBILITY_CHECK');
  });

  it('reads expiryTimestamp as epoch seconds, and a value of 10^12 or more as milliseconds (D13)', async () => {
    const at = await now();
    const seconds = Math.floor(at / 1000) + 30 * 60;
    const inSeconds = await t.createTransaction(auth, { id: t.id('exp'), amount: 10_000, expiryTimestamp: seconds });
    expect(inSeconds.status, inSeconds.text).toBe(200);
    expect(inSeconds.body.transaction.expiresAt).toBe(new Date(seconds * 1000).toISOString());
    const inMilliseconds = await t.createTransaction(auth, { id: t.id('exp'), amount: 10_000, expiryTimestamp: at + 30 * MINUTE });
    expect(inMilliseconds.status, inMilliseconds.text).toBe(200);
    expect(inMilliseconds.body.transaction.expiresAt).toBe(new Date(at + 30 * MINUTE).toISOString());
  });

  it('answers 400 for an expiryTimestamp under 1 minute or over 24 hours ahead, naming the unit', async () => {
    const at = await now();
    const cases: [number, string][] = [
      [Math.floor(at / 1000) + 30, 'epoch seconds'],
      [Math.floor(at / 1000) + 25 * 60 * 60, 'epoch seconds'],
      [at + 30_000, 'epoch milliseconds'],
      [at + 25 * 60 * MINUTE, 'epoch milliseconds'],
    ];
    for (const [expiryTimestamp, unit] of cases) {
      const answer = await t.createTransaction(auth, { id: t.id('exp'), amount: 10_000, expiryTimestamp });
      expect(answer.status, String(expiryTimestamp)).toBe(400);
      expect(answer.body.errorCode).toBe('BAD_REQUEST');
      expect(answer.body.details[0].field).toBe('/createConfiguration/expiryTimestamp');
      expect(answer.body.message).toContain(unit);
    }
  });

  it('creates FAILED NOT_ELIGIBLE (with or without a check), with the failure stage and a webhook', async () => {
    const check = await t.check(auth, '+919000000002', 10_000);
    const withCheck = t.id('ne');
    const created = await t.createTransaction(auth, { id: withCheck, amount: 10_000, phoneNumber: '+919000000002', checkId: check.id });
    expect(created.status).toBe(200);
    expect(created.body.transaction).toMatchObject({ status: 'FAILED', failureReason: 'NOT_ELIGIBLE' });
    const stage = await t.stage(auth, withCheck);
    expect(stage.transactionStage.nextStep).toEqual({ step: 'failure', options: { failureOptions: { failureReason: 'NOT_ELIGIBLE' } } });

    const withoutCheck = t.id('ne');
    const blocked = await t.createTransaction(auth, { id: withoutCheck, amount: 10_000, phoneNumber: '+919000000009' });
    expect(blocked.body.transaction).toMatchObject({ status: 'FAILED', failureReason: 'NOT_ELIGIBLE' });

    await waitFor(() => (webhooksOf(withoutCheck).length === 1 ? true : undefined));
    const event = await checkWebhook(webhooksOf(withoutCheck)[0]!, 'notifyTransactionUpdated', merchant.credentials.password);
    expect(event.transaction).toMatchObject({ id: withoutCheck, status: 'FAILED', failureReason: 'NOT_ELIGIBLE' });
  });

  it('creates FAILED PRE_ELIGIBILITY_MISMATCH when the phone number or the amount differs from the check', async () => {
    const check = await t.check(auth, '+919000000001', 50_000);
    const phone = await t.createTransaction(auth, { id: t.id('mm'), amount: 50_000, phoneNumber: '+919000000003', checkId: check.id });
    expect(phone.body.transaction).toMatchObject({ status: 'FAILED', failureReason: 'PRE_ELIGIBILITY_MISMATCH' });
    const amount = await t.createTransaction(auth, { id: t.id('mm'), amount: 50_001, checkId: check.id });
    expect(amount.body.transaction).toMatchObject({ status: 'FAILED', failureReason: 'PRE_ELIGIBILITY_MISMATCH' });
    const same = await t.createTransaction(auth, { id: t.id('mm'), amount: 50_000, checkId: check.id });
    expect(same.body.transaction.status).toBe('PENDING');
  });

  it('treats an expired check as absent: the checks run again on the transaction\'s own data', async () => {
    const check = await t.check(auth, '+919000000001', 50_000);
    await t.advance(15 * MINUTE);
    const answer = await t.createTransaction(auth, { id: t.id('ex'), amount: 60_000, checkId: check.id });
    expect(answer.status).toBe(200);
    expect(answer.body.transaction).toMatchObject({ status: 'PENDING', preEligibilityCheckId: check.id });
    const declined = await t.createTransaction(auth, { id: t.id('ex'), amount: 3_750_001, checkId: check.id });
    expect(declined.body.transaction).toMatchObject({ status: 'FAILED', failureReason: 'NOT_ELIGIBLE' });
  });
});

describe('steps and OTPs (D15, D16)', () => {
  it('fails the transaction on the third wrong OTP (still 400 INVALID_OTP), then answers any OTP 400 INVALID_OTP with no attempt left', async () => {
    const id = t.id('otp');
    await t.createTransaction(auth, { id, amount: 20_000 });
    const stage = await t.stage(auth, id);
    expect(stage.transactionStage.nextStep.options.userInputOptions[0]).toMatchObject({
      inputType: 'otp',
      label: 'OTP',
      length: 6,
      type: 'numeric',
      description: expect.stringContaining('+91 90000 00001'),
    });
    const reference = referenceOf(stage);
    for (const attempt of [1, 2, 3]) {
      const answer = await submit(id, reference, `99999${attempt}`);
      expect(answer.status).toBe(400);
      expect(answer.body.errorCode).toBe('INVALID_OTP');
    }
    const failed = await t.stage(auth, id);
    expect(failed.transaction).toMatchObject({ status: 'FAILED', failureReason: 'OTP_ATTEMPTS_EXCEEDED' });
    expect(failed.transactionStage.nextStep.step).toBe('failure');
    const later = await submit(id, reference, '123456');
    expect(later.status).toBe(400);
    expect(later.body.errorCode).toBe('INVALID_OTP');
    expect(later.body.message).toContain('No OTP attempts are left');
  });

  it('answers 404 for an unknown referenceId and 400 for one that is not a UUID', async () => {
    const id = t.id('otp');
    await t.createTransaction(auth, { id, amount: 20_000 });
    const unknown = await submit(id, randomUUID(), '123456');
    expect(unknown.status).toBe(404);
    expect(unknown.body.errorCode).toBe('NOT_FOUND');
    const malformed = await submit(id, 'not-a-uuid', '123456');
    expect(malformed.status).toBe(400);
    expect((await submit('no_such_txn', randomUUID(), '123456')).status).toBe(404);
  });

  it('expires an OTP after 5 minutes of virtual time: OTP_EXPIRED, and a new referenceId is issued', async () => {
    const id = t.id('otp');
    await t.createTransaction(auth, { id, amount: 20_000 });
    const first = referenceOf(await t.stage(auth, id));
    await t.advance(5 * MINUTE);
    const expired = await submit(id, first, '123456');
    expect(expired.status).toBe(400);
    expect(expired.body.errorCode).toBe('OTP_EXPIRED');
    const second = referenceOf(await t.stage(auth, id));
    expect(second).not.toBe(first);
    // Reading the stage after another 5 minutes shows a fresh option at once.
    await t.advance(5 * MINUTE);
    const third = referenceOf(await t.stage(auth, id));
    expect(third).not.toBe(second);
    expect((await submit(id, second, '123456')).body.errorCode).toBe('OTP_EXPIRED');
    const verified = await submit(id, third, '123456');
    expect(verified.status).toBe(200);
    expect(verified.body.transactionStage.nextStep.step).toBe('payment');
  });

  it('computes the down payment as 25 % rounded half up, at least ₹1 and at most the amount', async () => {
    for (const [amount, down] of [
      [150_002, 37_501],
      [150_001, 37_500],
      [100, 100],
      [399, 100],
      [5_000_000, 1_250_000],
    ] as const) {
      const id = t.id('dp');
      await t.createTransaction(auth, { id, amount, phoneNumber: '+919812345678' });
      const answer = await submit(id, referenceOf(await t.stage(auth, id)), '123456');
      expect(answer.body.transactionStage.nextStep.options.paymentOptions.amount, String(amount)).toBe(down);
    }
  });

  it('register-external: 409 outside payment, 400 DOWN_PAYMENT_AMOUNT_MISMATCH, then wait → success', async () => {
    const id = t.id('pay');
    await t.createTransaction(auth, { id, amount: 40_000 });
    const metaData = { paymentMode: 'CARD', pgPaymentId: 'pay_x', amount: 10_000 };
    const early = await t.call('POST', `/api/merchant/transaction/${id}/payment/register-external`, auth, { metaData });
    expect(early.status).toBe(409);
    expect(early.body.errorCode).toBe('INVALID_STATE');
    await submit(id, referenceOf(await t.stage(auth, id)), '123456');
    const mismatch = await t.call('POST', `/api/merchant/transaction/${id}/payment/register-external`, auth, {
      metaData: { ...metaData, amount: 9_999 },
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.errorCode).toBe('DOWN_PAYMENT_AMOUNT_MISMATCH');
    const missing = await t.call('POST', `/api/merchant/transaction/${id}/payment/register-external`, auth, { metaData: { amount: 10_000 } });
    expect(missing.status).toBe(400);
    expect(missing.body.errorCode).toBe('BAD_REQUEST');

    const wait = await t.call('POST', `/api/merchant/transaction/${id}/payment/register-external`, auth, { metaData });
    expect(wait.status).toBe(200);
    expect(wait.body.transactionStage.nextStep.step).toBe('wait');
    const twice = await t.call('POST', `/api/merchant/transaction/${id}/payment/register-external`, auth, { metaData });
    expect(twice.status).toBe(409);
    await t.advance(2_000);
    const done = await t.stage(auth, id);
    expect(done.transactionStage.nextStep).toEqual({ step: 'success', options: {} });
    expect(done.transaction.status).toBe('SUCCESS');
    const final = await submit(id, randomUUID(), '123456');
    expect(final.status).toBe(409);
  });

  it('fails the down payment of +919000000004 with PAYMENT_NOT_CONFIRMED', async () => {
    const id = t.id('pnc');
    await t.createTransaction(auth, { id, amount: 40_000, phoneNumber: '+919000000004' });
    await t.payDownPayment(auth, id);
    await t.advance(2_000);
    const stage = await t.stage(auth, id);
    expect(stage.transaction).toMatchObject({ status: 'FAILED', failureReason: 'PAYMENT_NOT_CONFIRMED' });
    expect(stage.transactionStage.nextStep).toEqual({ step: 'failure', options: { failureOptions: { failureReason: 'PAYMENT_NOT_CONFIRMED' } } });
    expect(stage.transaction.downPayment.amount).toBe(10_000);
  });
});

describe('expiry on the virtual clock (D13)', () => {
  it('cancels a PENDING transaction with EXPIRED after 15 minutes by default (D15), and sends the webhook', async () => {
    const id = t.id('exp');
    await t.createTransaction(auth, { id, amount: 20_000 });
    await t.advance(14 * MINUTE);
    expect((await t.transaction(auth, id)).status).toBe('PENDING');
    await t.advance(MINUTE);
    const expired = await t.transaction(auth, id);
    expect(expired).toMatchObject({ status: 'CANCELLED', failureReason: 'EXPIRED' });
    expect(expired.updatedAt).toBe(expired.expiresAt);
    await waitFor(() => (webhooksOf(id).length === 1 ? true : undefined));
    const event = await checkWebhook(webhooksOf(id)[0]!, 'notifyTransactionUpdated', merchant.credentials.password);
    expect(event.transaction).toMatchObject({ status: 'CANCELLED', failureReason: 'EXPIRED' });
  });

  it('honours expiryTimestamp, also in the payment and wait steps', async () => {
    const at = await now();
    const id = t.id('exp');
    const created = await t.createTransaction(auth, { id, amount: 20_000, expiryTimestamp: at + 2 * MINUTE });
    expect(created.body.transaction.expiresAt).toBe(new Date(at + 2 * MINUTE).toISOString());
    await submit(id, referenceOf(await t.stage(auth, id)), '123456');
    await t.advance(2 * MINUTE);
    const stage = await t.stage(auth, id);
    expect(stage.transaction).toMatchObject({ status: 'CANCELLED', failureReason: 'EXPIRED' });
    const register = await t.call('POST', `/api/merchant/transaction/${id}/payment/register-external`, auth, {
      metaData: { paymentMode: 'UPI', pgPaymentId: 'p', amount: 5_000 },
    });
    expect(register.status).toBe(409);
  });
});

describe('cancel (D37)', () => {
  it('moves a PENDING transaction to CANCELLED CANCELLED_BY_MERCHANT, answers the record and sends the webhook', async () => {
    const id = t.id('cancel');
    expect((await t.createTransaction(auth, { id, amount: 10_000 })).status).toBe(200);
    await t.payDownPayment(auth, id);
    const answer = await t.call('GET', `/api/merchant/transaction/${id}/cancel`, auth, undefined, { Accept: 'application/json', 'Content-Type': 'application/json' });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.operationId).toBe('cancelTransaction');
    expect(answer.body.transaction).toMatchObject({ id, status: 'CANCELLED', failureReason: 'CANCELLED_BY_MERCHANT' });
    expect(answer.body.transaction).toEqual(await t.transaction(auth, id));
    // The registered down payment is no longer confirmed.
    await t.advance(2_000);
    expect((await t.transaction(auth, id)).status).toBe('CANCELLED');
    await waitFor(() => (webhooksOf(id).length === 1 ? true : undefined));
    const event = await checkWebhook(webhooksOf(id)[0]!, 'notifyTransactionUpdated', merchant.credentials.password);
    expect(event.transaction).toMatchObject({ id, status: 'CANCELLED', failureReason: 'CANCELLED_BY_MERCHANT' });
  });

  it('answers 409 INVALID_STATE for a final transaction, 404 for an unknown one, 401 without credentials', async () => {
    const cancelled = t.id('cancel');
    await t.createTransaction(auth, { id: cancelled, amount: 10_000 });
    expect((await t.call('GET', `/api/merchant/transaction/${cancelled}/cancel`, auth)).status).toBe(200);
    const again = await t.call('GET', `/api/merchant/transaction/${cancelled}/cancel`, auth);
    expect(again.status).toBe(409);
    expect(again.body.errorCode).toBe('INVALID_STATE');
    expect(again.body.message).toContain('CANCELLED_BY_MERCHANT');
    const succeeded = await t.successful(auth, 10_000);
    const final = await t.call('GET', `/api/merchant/transaction/${succeeded}/cancel`, auth);
    expect(final.status).toBe(409);
    expect(final.body.message).toContain('SUCCESS');
    expect((await t.transaction(auth, succeeded)).status).toBe('SUCCESS');
    const unknown = await t.call('GET', `/api/merchant/transaction/${t.id('none')}/cancel`, auth);
    expect(unknown.status).toBe(404);
    expect(unknown.body.errorCode).toBe('NO_SUCH_TRANSACTION');
    expect((await t.call('GET', `/api/merchant/transaction/${succeeded}/cancel`, null)).status).toBe(401);
    // A refused cancel announces nothing: one transaction event for the one final status.
    const events = (await t.deliveries(cancelled)).filter((delivery) => delivery.family === 'gateway');
    expect(events.map((delivery) => delivery.event)).toEqual(['transactionUpdated']);
  });
});

describe('phone numbers as the Magento module writes them (D25)', () => {
  it('reads +9191 and ten digits as +91 and those ten digits; refuses other lengths with a 400 naming the field', async () => {
    // Request.php strips non-digits and leading zeros, then prefixes +91: a stored 919000000001 becomes +91919000000001.
    const check = await t.call('POST', '/api/merchant/transaction/pre-eligibility', auth, {
      user: { name: 'Asha Rao', phoneNumber: '+91919000000001' },
      transaction: { amount: 30_000 },
      deviceInformation: { userAgent: 'test', ipAddress: '127.0.0.1' },
    });
    expect(check.status, check.text).toBe(200);
    const id = t.id('phone');
    const created = await t.call('POST', '/api/merchant/transaction', auth, {
      transaction: { id, amount: 30_000 },
      user: { name: 'Asha Rao', phoneNumber: '+91919000000001' },
      preEligibilityCheckId: check.body.id,
    });
    expect(created.status, created.text).toBe(200);
    // The same number as the check's (no PRE_ELIGIBILITY_MISMATCH), shown in its ten-digit form.
    expect(created.body.transaction).toMatchObject({ status: 'PENDING', user: { phoneNumber: '+919000000001' } });
    const stage = await t.stage(auth, id);
    expect(stage.transactionStage.nextStep.options.userInputOptions[0].description).toContain('90000 00001');
    for (const phoneNumber of ['+9191900000000', '+919190000000011', '+92919000000001', '+91819000000001']) {
      const refused = await t.call('POST', '/api/merchant/transaction', auth, {
        transaction: { id: t.id('phone'), amount: 30_000 },
        user: { name: 'Asha Rao', phoneNumber },
      });
      expect(refused.status, phoneNumber).toBe(400);
      expect(refused.body.errorCode).toBe('BAD_REQUEST');
      expect(JSON.stringify(refused.body.details)).toContain('/user/phoneNumber');
    }
  });

  it('reads a number as the shopper typed it (D121) and an empty email as none (D122)', async () => {
    // The WooCommerce plugin strips whitespace only: a typed "+91-9000000001" is sent as it is.
    const check = await t.call('POST', '/api/merchant/transaction/pre-eligibility', auth, {
      user: { name: 'Asha Rao', phoneNumber: '+91-90000-00001', email: '' },
      transaction: { amount: 30_000 },
      deviceInformation: { userAgent: 'test', ipAddress: '127.0.0.1' },
    });
    expect(check.status, check.text).toBe(200);
    const id = t.id('typed');
    const created = await t.call('POST', '/api/merchant/transaction', auth, {
      transaction: { id, amount: 30_000 },
      user: { name: 'Asha Rao', phoneNumber: '(+91) 9000-000-001', email: '' },
      preEligibilityCheckId: check.body.id,
    });
    expect(created.status, created.text).toBe(200);
    expect(created.body.transaction.status).toBe('PENDING');
    expect(created.body.transaction.user).toEqual({ name: 'Asha Rao', phoneNumber: '+919000000001' });
  });
});

describe('the shopper cancels on the hosted page (D15)', () => {
  it('ends the transaction CANCELLED CANCELLED_BY_USER, sends the webhook and the shopper to cancelRedirectUrl', async () => {
    const id = t.id('usercancel');
    const created = await t.call('POST', '/api/merchant/transaction', auth, {
      transaction: { id, amount: 25_000 },
      user: { name: 'Asha Rao', phoneNumber: '+919000000001' },
      createConfiguration: {
        successRedirectUrl: 'https://shop.example/return?cf_id=1',
        failureRedirectUrl: 'https://shop.example/failed',
        cancelRedirectUrl: 'https://shop.example/return?cf_id=1',
      },
    });
    expect(created.status, created.text).toBe(200);
    const page = new URL(created.body.transaction.url).pathname;
    const cancelled = await t.request('POST', `${page}/cancel`, { headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body).toMatchObject({ final: true, redirectTo: 'https://shop.example/return?cf_id=1' });
    expect(cancelled.body.transaction).toMatchObject({ id, status: 'CANCELLED', failureReason: 'CANCELLED_BY_USER' });
    expect(await t.transaction(auth, id)).toMatchObject({ status: 'CANCELLED', failureReason: 'CANCELLED_BY_USER' });
    await waitFor(() => (webhooksOf(id).length === 1 ? true : undefined));
    const event = await checkWebhook(webhooksOf(id)[0]!, 'notifyTransactionUpdated', merchant.credentials.password);
    expect(event.transaction).toMatchObject({ id, status: 'CANCELLED', failureReason: 'CANCELLED_BY_USER' });
    // Once final, neither the shopper nor the merchant can cancel it again.
    const again = await t.request('POST', `${page}/cancel`, { headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(again.status).toBe(409);
    expect((await t.call('GET', `/api/merchant/transaction/${id}/cancel`, auth)).status).toBe(409);
    // The status filter of the list knows the new value.
    const listed = await t.call('GET', '/api/merchant/transaction?status=CANCELLED&limit=100', auth);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.transactions.map((transaction: { id: string }) => transaction.id)).toContain(id);
  });

  it('sends the shopper to failureRedirectUrl when there is no cancelRedirectUrl', async () => {
    const id = t.id('usercancel');
    const created = await t.call('POST', '/api/merchant/transaction', auth, {
      transaction: { id, amount: 25_000 },
      user: { name: 'Asha Rao', phoneNumber: '+919000000001' },
      createConfiguration: { failureRedirectUrl: 'https://shop.example/failed' },
    });
    const cancelled = await t.request('POST', `${new URL(created.body.transaction.url).pathname}/cancel`, {
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(cancelled.body.redirectTo).toBe('https://shop.example/failed');
  });
});

describe('several attempts on one check', () => {
  it('lets one succeed and fails the others OTHER_ATTEMPT_SUCCEEDED; a later attempt starts failed', async () => {
    const check = await t.check(auth, '+919000000001', 30_000);
    const [a, b, c] = [t.id('att'), t.id('att'), t.id('att')];
    for (const id of [a, b, c]) expect((await t.createTransaction(auth, { id, amount: 30_000, checkId: check.id })).status).toBe(200);
    await t.payDownPayment(auth, a);
    await t.payDownPayment(auth, b);
    await submit(c, referenceOf(await t.stage(auth, c)), '123456');
    await t.advance(2_000);
    const [ra, rb, rc] = await Promise.all([a, b, c].map((id) => t.transaction(auth, id)));
    expect(ra.status).toBe('SUCCESS');
    expect(rb).toMatchObject({ status: 'FAILED', failureReason: 'OTHER_ATTEMPT_SUCCEEDED' });
    expect(rc).toMatchObject({ status: 'FAILED', failureReason: 'OTHER_ATTEMPT_SUCCEEDED' });
    const late = await t.createTransaction(auth, { id: t.id('att'), amount: 30_000, checkId: check.id });
    expect(late.body.transaction).toMatchObject({ status: 'FAILED', failureReason: 'OTHER_ATTEMPT_SUCCEEDED' });
  });
});

describe('isolation between merchants (D02)', () => {
  it('answers 404 for another merchant\'s transaction on every operation, and lists only its own', async () => {
    const own = await t.successful(auth, 10_000);
    const other = await t.onboard();
    const otherAuth = other.credentials.auth;
    const calls: [string, string, unknown][] = [
      ['GET', `/api/merchant/transaction/${own}`, undefined],
      ['GET', `/api/merchant/transaction/${own}?include=stage`, undefined],
      ['POST', `/api/merchant/transaction/${own}/user-inputs/${randomUUID()}`, { value: '123456' }],
      ['POST', `/api/merchant/transaction/${own}/payment/register-external`, { metaData: { paymentMode: 'UPI', pgPaymentId: 'p', amount: 2_500 } }],
      ['POST', `/api/merchant/transaction/${own}/refund`, {}],
      ['GET', `/api/merchant/transaction/${own}/cancel`, undefined],
    ];
    for (const [method, path, body] of calls) {
      const answer = await t.call(method, path, otherAuth, body);
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.body.errorCode).toBe('NO_SUCH_TRANSACTION');
      expect(answer.body.message).not.toContain(merchant.id);
    }
    const list = await t.call('GET', '/api/merchant/transaction?limit=100', otherAuth);
    expect(list.body.transactions.map((item: { id: string }) => item.id)).not.toContain(own);
    expect((await t.transaction(auth, own)).refundedAmount).toBe(0);
  });
});

describe('list transactions (D19)', () => {
  it('pages newest first with an opaque cursor and filters by status and creation time', async () => {
    const other = await t.onboard();
    const listAuth = other.credentials.auth;
    const ids: string[] = [];
    const times: number[] = [];
    for (let index = 0; index < 7; index++) {
      const id = `list_${index}`;
      ids.push(id);
      times.push(await now());
      expect((await t.createTransaction(listAuth, { id, amount: 1_000 + index, phoneNumber: index % 3 === 0 ? '+919000000002' : '+919000000001' })).status).toBe(200);
      await t.advance(1_000);
    }
    const all: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor === null ? '?limit=3' : `?limit=3&cursor=${encodeURIComponent(cursor)}`;
      const answer = await t.call('GET', `/api/merchant/transaction${query}`, listAuth);
      expect(answer.status).toBe(200);
      expect(answer.operationId).toBe('listTransactions');
      expect(answer.body.transactions.length).toBeLessThanOrEqual(3);
      all.push(...answer.body.transactions.map((item: { id: string }) => item.id));
      cursor = answer.body.nextCursor;
      pages++;
    } while (cursor !== null);
    expect(pages).toBe(3);
    expect(all).toEqual([...ids].reverse());

    const failed = await t.call('GET', '/api/merchant/transaction?status=FAILED', listAuth);
    expect(failed.body.transactions.map((item: { id: string }) => item.id)).toEqual(['list_6', 'list_3', 'list_0']);
    expect(failed.body.nextCursor).toBeNull();

    const from = new Date(times[2]! + 500).toISOString();
    const to = new Date(times[5]! + 500).toISOString();
    const range = await t.call('GET', `/api/merchant/transaction?createdFrom=${from}&createdTo=${to}`, listAuth);
    expect(range.body.transactions.map((item: { id: string }) => item.id)).toEqual(['list_5', 'list_4', 'list_3']);

    const createdAt = (await t.transaction(listAuth, 'list_4')).createdAt;
    const inclusive = await t.call('GET', `/api/merchant/transaction?createdFrom=${createdAt}&createdTo=${createdAt}`, listAuth);
    expect(inclusive.body.transactions).toEqual([]);
    const exact = await t.call(
      'GET',
      `/api/merchant/transaction?createdFrom=${createdAt}&createdTo=${new Date(Date.parse(createdAt) + 1).toISOString()}`,
      listAuth,
    );
    expect(exact.body.transactions.map((item: { id: string }) => item.id)).toEqual(['list_4']);

    const defaultPage = await t.call('GET', '/api/merchant/transaction', listAuth);
    expect(defaultPage.body.transactions).toHaveLength(7);
    expect(defaultPage.body.nextCursor).toBeNull();
  });

  it('answers 400 for an invalid cursor, limit, status or date', async () => {
    for (const query of ['cursor=garbage', `cursor=${Buffer.from('12:x:y').toString('base64url')}`, `cursor=${Buffer.from('123:abc').toString('base64url')}`, 'limit=0', 'limit=101', 'status=DONE', 'createdFrom=yesterday']) {
      const answer = await t.call('GET', `/api/merchant/transaction?${query}`, auth);
      expect(answer.status, query).toBe(400);
      expect(answer.body.errorCode).toBe('BAD_REQUEST');
    }
  });
});

describe('transaction webhook URL (D23)', () => {
  it('records the event as not_sent when neither the transaction nor the merchant has a URL', async () => {
    const bare = await t.onboard();
    const id = t.id('nohook');
    await t.createTransaction(bare.credentials.auth, { id, amount: 10_000, phoneNumber: '+919000000002' });
    const deliveries = (await t.deliveries(id)).filter((delivery) => delivery.family === 'gateway');
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ status: 'not_sent', url: null, event: 'transactionUpdated' });
  });

  it('sends SUCCESS to the merchant default URL when the transaction has none', async () => {
    const id = await t.successful(auth, 12_345);
    const [event] = await waitFor(() => (webhooksOf(id).length > 0 ? webhooksOf(id) : undefined));
    const body = await checkWebhook(event!, 'notifyTransactionUpdated', merchant.credentials.password);
    expect(body).toEqual({ transaction: await t.transaction(auth, id) });
  });
});
