/**
 * The ready-made gateway test merchant (D123), reached with the published test pair that the
 * service's Magento module ships as its defaults, and the `FAILURE` alias of `FAILED` (D120): the
 * ready-made merchant answers it, any merchant can be set to it, and the package's status helpers
 * read both words as one failure. Every answer is validated against the bundled document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isFailedStatus, statusOutcome } from '../../src/clients/gateway.js';
import { verifyGatewayWebhook } from '../../src/webhooks/index.js';
import { PUBLISHED_TEST_PARTNER } from '../../src/sandbox/fixtures.js';
import { startGateway, type GatewayTest } from '../support/gateway.js';
import { startReceiver, waitFor, type Receiver } from '../support/sandbox.js';

const PUBLISHED_AUTH = `Basic ${Buffer.from(`${PUBLISHED_TEST_PARTNER.id}:${PUBLISHED_TEST_PARTNER.privateKey}`).toString('base64')}`;

let t: GatewayTest;
let hook: Receiver;

beforeAll(async () => {
  t = await startGateway();
  hook = await startReceiver();
});
afterAll(async () => {
  await t.close();
  await hook.close();
});

/** Creates a transaction and fails it with three wrong OTPs (OTP_ATTEMPTS_EXCEEDED). */
async function failWithOtps(auth: string, id: string, webhookUrl?: string): Promise<any> {
  const created = await t.call('POST', '/api/merchant/transaction', auth, {
    transaction: { id, amount: 30_000, mode: 'TEST' },
    user: { name: 'Asha Rao', phoneNumber: '+919000000001', email: '' },
    ...(webhookUrl === undefined ? {} : { createConfiguration: { webhookUrl } }),
  });
  expect(created.status, created.text).toBe(200);
  for (let attempt = 0; attempt < 3; attempt++) {
    const stage = await t.stage(auth, id);
    const referenceId = stage.transactionStage.nextStep.options.userInputOptions[0].referenceId;
    await t.call('POST', `/api/merchant/transaction/${id}/user-inputs/${referenceId}`, auth, { value: '999999' });
  }
  return t.transaction(auth, id);
}

describe('the ready-made gateway test merchant (D123)', () => {
  it('answers the published test pair as Transactional API credentials, as Magento\'s defaults expect', async () => {
    const configuration = await t.call('GET', '/api/merchant/configuration', PUBLISHED_AUTH);
    expect(configuration.status, configuration.text).toBe(200);
    expect(configuration.body.version).toBe(2);
    const merchant = await t.merchantApi('GET', '/api/merchant/published_test_merchant');
    expect(merchant.status, merchant.text).toBe(200);
    expect(merchant.body.merchant).toMatchObject({
      id: 'published_test_merchant',
      stage: 'enabled',
      basicAuthDetails: { username: 'testPartnerId', password: 'testPrivateKey' },
    });
    // Its id is taken: the Merchant API cannot create another merchant under it.
    const again = await t.createMerchant({ id: 'published_test_merchant' });
    expect(again.answer.status).toBe(400);
    expect(again.answer.body.errorCode).toBe('DUPLICATE_ID');
  });

  it('answers a failed transaction FAILURE (D120), the webhook says the same and verifies, the helpers read it as failed', async () => {
    const id = t.id('mage');
    const failed = await failWithOtps(PUBLISHED_AUTH, id, hook.url);
    expect(failed).toMatchObject({ status: 'FAILURE', failureReason: 'OTP_ATTEMPTS_EXCEEDED' });
    expect(isFailedStatus(failed.status)).toBe(true);
    const received = await waitFor(() => hook.received.find((request) => JSON.parse(request.body).transaction?.id === id));
    const verified = verifyGatewayWebhook(received.body, received.headers, PUBLISHED_TEST_PARTNER.privateKey);
    expect((verified.payload as { transaction: { status: string } }).transaction.status).toBe('FAILURE');
    expect(statusOutcome((verified.payload as { transaction: { status: string } }).transaction.status)).toBe('failed');
    // Either word finds it in the list.
    for (const status of ['FAILED', 'FAILURE']) {
      const listed = await t.call('GET', `/api/merchant/transaction?status=${status}`, PUBLISHED_AUTH);
      expect(listed.status, listed.text).toBe(200);
      expect(listed.body.transactions.map((transaction: any) => transaction.id), status).toContain(id);
    }
  });

  it('is absent when the published test partner is turned off', async () => {
    const off = await startGateway({ config: { publishedTestPartner: false } });
    try {
      expect((await off.call('GET', '/api/merchant/configuration', PUBLISHED_AUTH)).status).toBe(401);
      expect((await off.merchantApi('GET', '/api/merchant/published_test_merchant')).status).toBe(404);
    } finally {
      await off.close();
    }
  });
});

describe('FAILURE, the alias of FAILED, for any merchant (D120)', () => {
  it('keeps FAILED by default and answers FAILURE for transactions created after the setting', async () => {
    const { credentials, id: merchantId } = await t.onboard();
    const before = await failWithOtps(credentials.auth, t.id('before'));
    expect(before.status).toBe('FAILED');
    const set = await t.request('POST', `/sandbox/gateway/merchants/${merchantId}/failed-status`, { body: JSON.stringify({ status: 'FAILURE' }), headers: { 'Content-Type': 'application/json' } });
    expect(set.status, set.text).toBe(200);
    expect((await failWithOtps(credentials.auth, t.id('after'))).status).toBe('FAILURE');
    expect((await t.transaction(credentials.auth, before.id)).status).toBe('FAILED');
    const back = await t.request('POST', `/sandbox/gateway/merchants/${merchantId}/failed-status`, { body: JSON.stringify({ status: 'FAILED' }), headers: { 'Content-Type': 'application/json' } });
    expect(back.status).toBe(200);
    expect((await failWithOtps(credentials.auth, t.id('back'))).status).toBe('FAILED');
  });

  it('answers a wrong body 400 saying what to send, and an unknown merchant 404', async () => {
    const wrong = await t.request('POST', '/sandbox/gateway/merchants/published_test_merchant/failed-status', { body: JSON.stringify({ status: 'FAIL' }), headers: { 'Content-Type': 'application/json' } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toContain('{"status": "FAILURE"}');
    const unknown = await t.request('POST', '/sandbox/gateway/merchants/no_such_merchant/failed-status', { body: JSON.stringify({ status: 'FAILURE' }), headers: { 'Content-Type': 'application/json' } });
    expect(unknown.status).toBe(404);
  });

  it('reads every status of every family through one helper', () => {
    expect(['PENDING', 'SUCCESS', 'FAILED', 'FAILURE', 'CANCELLED', 'EXPIRED'].map(statusOutcome)).toEqual([
      'pending',
      'succeeded',
      'failed',
      'failed',
      'cancelled',
      'unknown',
    ]);
    expect(['FAILED', 'FAILURE', 'CANCELLED', 'toString'].map(isFailedStatus)).toEqual([true, true, false, false]);
  });
});
