/**
 * End-to-end flows against the sandbox with the PACKAGE'S OWN public surface (src/index.ts: the
 * typed clients, transactionalCredentials, verifyStatusSignature, createWebhookHandler), as an
 * integrator would write them. The sandbox's own endpoints (clock, the user's confirmation) are
 * called with plain fetch: they are not part of the contract. Every answer a client receives is
 * also validated against the bundled document (the self-check of helpers.ts).
 *
 * One test per flow: gateway (onboarding to refunds and their webhooks), SDK, web, extras; every
 * error code of the description reached through the clients; and a webhook receiver that fails its
 * first attempts still receives every event, in order, once the clock advances.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createExtrasClient,
  createMerchantApiClient,
  createSdkClient,
  createTransactionalApiClient,
  createWebClient,
  createWebhookHandler,
  isStageResponse,
  transactionalCredentials,
  verifyStatusSignature,
  type BasicCredentials,
  type VerifiedWebhook,
  type WebhookFamily,
} from '../../src/index.js';
import { startSandbox, validatingFetch, waitFor, type TestSandbox } from '../support/sandbox.js';

const PARTNER = { partnerId: 'partner_test', privateKey: 'test_private_key' };
const MERCHANT_API: BasicCredentials = { username: 'pg_test', password: 'pg_test_secret' };
const EXTRAS: BasicCredentials = { username: 'extras_test', password: 'extras_test_secret' };
const DEVICE = { userAgent: 'Mozilla/5.0 (flows test)', ipAddress: '203.0.113.24' };
const PDF = Buffer.from('%PDF-1.4\n1 0 obj\n<</Type/Catalog>>\nendobj\n%%EOF\n').toString('base64');


interface Receiver<F extends WebhookFamily> {
  url: string;
  events: VerifiedWebhook<F>[];
  /** Status of every request received, in order (500 for the ones failed on purpose). */
  answers: number[];
  close(): Promise<void>;
}

/**
 * A webhook receiver made of the package's createWebhookHandler. The first `failFirst` requests
 * are answered 500 before the handler sees them (a receiver that is down).
 */
async function receiver<F extends WebhookFamily>(family: F, secret: string, failFirst = 0): Promise<Receiver<F>> {
  const events: VerifiedWebhook<F>[] = [];
  const answers: number[] = [];
  const errors: unknown[] = [];
  const handler = createWebhookHandler({
    family,
    secret,
    onEvent: (event) => {
      events.push(event);
    },
    onError: (error) => errors.push(error),
  });
  let failed = 0;
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    response.on('finish', () => answers.push(response.statusCode));
    if (failed < failFirst) {
      failed++;
      request.resume();
      response.writeHead(500, { 'Content-Type': 'text/plain' }).end('down for maintenance');
      return;
    }
    handler(request, response);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/${family}`,
    events,
    answers,
    async close() {
      expect(errors, `the ${family} webhook handler refused requests`).toEqual([]);
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

let t: TestSandbox | undefined;
const receivers: Receiver<WebhookFamily>[] = [];

afterEach(async () => {
  for (const each of receivers.splice(0)) await each.close();
  if (t !== undefined) expect(t.loggedErrors).toEqual([]);
  await t?.close();
  t = undefined;
});

async function sandbox(webhookUrl?: string): Promise<TestSandbox> {
  t = await startSandbox(webhookUrl === undefined ? {} : { config: { partner: { webhookUrl } } });
  return t;
}

/** POST to a sandbox-only endpoint (not part of the contract). */
async function control(t: TestSandbox, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${t.url}${path}`, {
    method: 'POST',
    ...(body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
  });
  expect(response.status, `${path}`).toBe(200);
  return response.json();
}

const advance = (t: TestSandbox, ms: number) => control(t, '/sandbox/clock/advance', { ms });

/** Onboards a merchant with the Merchant API client: create, documents, clock → enabled. */
async function onboard(t: TestSandbox, merchantId: string): Promise<BasicCredentials> {
  const merchantApi = createMerchantApiClient({ baseUrl: t.url, credentials: MERCHANT_API, fetch: validatingFetch });
  const created = await merchantApi.POST('/api/merchant', {
    body: {
      merchant: { id: merchantId, brandName: 'Acme', entityName: 'Acme Retail Pvt Ltd', brandHomePageUrl: 'https://acme.example.in', mccCode: 5411 },
    },
  });
  expect(created.response.status).toBe(201);
  expect(created.data?.merchant.stage).toBe('documentsPending');
  expect(transactionalCredentials(created.data!.merchant)).toBeUndefined();
  for (const documentType of ['PAN', 'CANCELLED_CHEQUE'] as const) {
    const uploaded = await merchantApi.POST('/api/merchant/{id}/document', {
      params: { path: { id: merchantId } },
      body: { documentType, document: { type: 'base64', value: PDF } },
    });
    expect(uploaded.response.status).toBe(200);
  }
  const verifying = await merchantApi.GET('/api/merchant/{id}', { params: { path: { id: merchantId } } });
  expect(verifying.data?.merchant.stage).toBe('verificationInProgress');
  await advance(t, 5_000);
  const enabled = await merchantApi.GET('/api/merchant/{id}', { params: { path: { id: merchantId } } });
  expect(enabled.data?.merchant.stage).toBe('enabled');
  const credentials = transactionalCredentials(enabled.data!.merchant);
  expect(credentials).toBeDefined();
  return credentials!;
}

type TransactionalApi = ReturnType<typeof createTransactionalApiClient>;

async function stageOf(api: TransactionalApi, id: string) {
  const answer = await api.GET('/api/merchant/transaction/{id}', { params: { path: { id }, query: { include: 'stage' } } });
  if (answer.data === undefined || !isStageResponse(answer.data)) throw new Error(`no stage for ${id}: ${answer.response.status}`);
  return answer.data;
}

/** Creates a transaction and drives it through the OTP and the down payment to `wait`. */
async function toWait(api: TransactionalApi, id: string, amount: number, webhookUrl: string) {
  const created = await api.POST('/api/merchant/transaction', {
    body: {
      transaction: { id, amount },
      user: { name: 'Asha Rao', phoneNumber: '+919000000001' },
      deviceInformation: DEVICE,
      createConfiguration: { webhookUrl },
    },
  });
  expect(created.response.status).toBe(200);
  const stage = await stageOf(api, id);
  const { referenceId } = (stage.transactionStage.nextStep.options as { userInputOptions: { referenceId: string }[] }).userInputOptions[0]!;
  const otp = await api.POST('/api/merchant/transaction/{transactionId}/user-inputs/{referenceId}', {
    params: { path: { transactionId: id, referenceId } },
    body: { value: '123456' },
  });
  const payment = (otp.data?.transactionStage.nextStep.options as { paymentOptions: { amount: number } }).paymentOptions;
  const registered = await api.POST('/api/merchant/transaction/{transactionId}/payment/register-external', {
    params: { path: { transactionId: id } },
    body: { metaData: { paymentMode: 'UPI', pgPaymentId: `pay_${id}`, amount: payment.amount } },
  });
  expect(registered.data?.transactionStage.nextStep.step).toBe('wait');
}

describe('flows with the package clients and webhook helpers', () => {
  it('gateway: onboarding, check, OTP wrong then right, down payment, SUCCESS, webhooks, partial refunds and the rest', async () => {
    const t = await sandbox();
    const credentials = await onboard(t, 'flow_acme');
    const hook = await receiver('gateway', credentials.password);
    receivers.push(hook);
    const api = createTransactionalApiClient({ baseUrl: t.url, credentials, fetch: validatingFetch });

    const check = await api.POST('/api/merchant/transaction/pre-eligibility', {
      body: { user: { name: 'Asha Rao', phoneNumber: '+919000000001' }, transaction: { amount: 200_000 }, deviceInformation: DEVICE },
    });
    expect(check.data?.preEligibilityCheck).toMatchObject({ eligible: true, amount: 200_000 });

    const created = await api.POST('/api/merchant/transaction', {
      body: {
        transaction: { id: 'order_1', amount: 200_000, notes: { billNo: 'INV-1' } },
        user: { name: 'Asha Rao', phoneNumber: '+919000000001' },
        deviceInformation: DEVICE,
        preEligibilityCheckId: check.data!.preEligibilityCheck.id,
        createConfiguration: { webhookUrl: hook.url },
      },
    });
    expect(created.response.status).toBe(200);
    expect(created.data?.transaction).toMatchObject({ id: 'order_1', status: 'PENDING', refundedAmount: 0 });

    let stage = await stageOf(api, 'order_1');
    expect(stage.transactionStage.nextStep.step).toBe('authenticate');
    const { referenceId } = (stage.transactionStage.nextStep.options as { userInputOptions: { referenceId: string }[] }).userInputOptions[0]!;
    const submit = (value: string) =>
      api.POST('/api/merchant/transaction/{transactionId}/user-inputs/{referenceId}', {
        params: { path: { transactionId: 'order_1', referenceId } },
        body: { value },
      });
    const wrong = await submit('654321');
    expect(wrong.response.status).toBe(400);
    expect(wrong.error?.errorCode).toBe('INVALID_OTP');
    const right = await submit('123456');
    expect(right.response.status).toBe(200);
    expect(right.data?.transactionStage.nextStep).toEqual({ step: 'payment', options: { paymentOptions: { amount: 50_000, shouldEnforceAutopay: false } } });

    const registered = await api.POST('/api/merchant/transaction/{transactionId}/payment/register-external', {
      params: { path: { transactionId: 'order_1' } },
      body: { metaData: { paymentMode: 'UPI', pgPaymentId: 'pay_1', amount: 50_000, vpa: 'asha@upi' } },
    });
    expect(registered.data?.transactionStage.nextStep.step).toBe('wait');
    expect(hook.events).toHaveLength(0);

    await advance(t, 2_000);
    stage = await stageOf(api, 'order_1');
    expect(stage.transaction.status).toBe('SUCCESS');
    expect(stage.transactionStage.nextStep.step).toBe('success');

    // The transaction webhook, verified by the handler, is what a GET answers.
    await waitFor(() => (hook.events.length >= 1 ? true : undefined));
    const [transactionEvent] = hook.events;
    if (transactionEvent?.kind !== 'transaction') throw new Error('the first event is not the transaction webhook');
    expect(transactionEvent.eventId).toMatch(/^evt_/);
    const read = await api.GET('/api/merchant/transaction/{id}', { params: { path: { id: 'order_1' } } });
    expect(transactionEvent.payload).toEqual(read.data);
    expect(transactionEvent.payload.transaction.status).toBe('SUCCESS');

    // Two partial refunds, one over what remains, then the rest, then nothing remains.
    const refund = (body: { refund?: { id?: string; amount?: number } }) =>
      api.POST('/api/merchant/transaction/{transactionId}/refund', { params: { path: { transactionId: 'order_1' } }, body });
    const first = await refund({ refund: { id: 'r1', amount: 50_000 } });
    const second = await refund({ refund: { id: 'r2', amount: 30_000 } });
    expect([first.response.status, second.response.status]).toEqual([200, 200]);
    const tooLarge = await refund({ refund: { amount: 120_001 } });
    expect(tooLarge.response.status).toBe(400);
    expect(tooLarge.error?.errorCode).toBe('REFUND_AMOUNT_TOO_LARGE');
    const rest = await refund({ refund: { id: 'r3' } });
    expect(rest.response.status).toBe(200);
    expect(rest.data?.refund).toMatchObject({ id: 'r3', amount: 120_000, status: 'PENDING' });
    const nothing = await refund({});
    expect(nothing.error?.errorCode).toBe('ALREADY_REFUNDED');

    await advance(t, 1_000);
    await waitFor(() => (hook.events.length >= 4 ? true : undefined));
    const refunds = hook.events.slice(1).map((event) => {
      if (event.kind !== 'refund') throw new Error('expected a refund webhook');
      return event.payload.refund;
    });
    expect(refunds.map((each) => [each.id, each.amount, each.status])).toEqual([
      ['r1', 50_000, 'SUCCESS'],
      ['r2', 30_000, 'SUCCESS'],
      ['r3', 120_000, 'SUCCESS'],
    ]);
    const final = await api.GET('/api/merchant/transaction/{id}', { params: { path: { id: 'order_1' } } });
    expect(final.data?.transaction).toMatchObject({ status: 'SUCCESS', refundedAmount: 200_000 });
    expect(new Set(hook.events.map((event) => event.eventId)).size).toBe(4);
  });

  it('gateway: a transaction whose data differs from its check is created FAILED PRE_ELIGIBILITY_MISMATCH, with its webhook', async () => {
    const t = await sandbox();
    const credentials = await onboard(t, 'flow_mismatch');
    const hook = await receiver('gateway', credentials.password);
    receivers.push(hook);
    const api = createTransactionalApiClient({ baseUrl: t.url, credentials, fetch: validatingFetch });
    const check = await api.POST('/api/merchant/transaction/pre-eligibility', {
      body: { user: { name: 'Asha Rao', phoneNumber: '+919000000001' }, transaction: { amount: 100_000 }, deviceInformation: DEVICE },
    });
    const checkId = check.data!.preEligibilityCheck.id;
    for (const [id, phoneNumber, amount] of [
      ['other_amount', '+919000000001', 100_001],
      ['other_phone', '+919000000003', 100_000],
    ] as const) {
      const created = await api.POST('/api/merchant/transaction', {
        body: {
          transaction: { id, amount },
          user: { name: 'Asha Rao', phoneNumber },
          deviceInformation: DEVICE,
          preEligibilityCheckId: checkId,
          createConfiguration: { webhookUrl: hook.url },
        },
      });
      expect(created.response.status).toBe(200);
      expect(created.data?.transaction).toMatchObject({ id, status: 'FAILED', failureReason: 'PRE_ELIGIBILITY_MISMATCH' });
      const stage = await stageOf(api, id);
      expect(stage.transactionStage.nextStep).toEqual({ step: 'failure', options: { failureOptions: { failureReason: 'PRE_ELIGIBILITY_MISMATCH' } } });
    }
    await waitFor(() => (hook.events.length >= 2 ? true : undefined));
    expect(hook.events.map((event) => (event.kind === 'transaction' ? [event.payload.transaction.id, event.payload.transaction.status] : []))).toEqual([
      ['other_amount', 'FAILED'],
      ['other_phone', 'FAILED'],
    ]);
  });

  it('SDK: initiate, PENDING, the user confirms, SUCCESS, webhook through the handler, refund', async () => {
    const hook = await receiver('sdk', PARTNER.privateKey);
    receivers.push(hook);
    const t = await sandbox(hook.url);
    const sdk = createSdkClient({ baseUrl: t.url, ...PARTNER, fetch: validatingFetch });

    const initiated = await sdk.POST('/merchant/credit/initiateTransaction', {
      body: { merchantTransactionId: 'sdk_1', userPhoneNumber: '+919000000001', userId: 'user_1', amount: 250_000 },
    });
    expect(initiated.response.status).toBe(201);
    expect(initiated.data?.message).toBe('TRANSACTION_INITIATED');
    const status = () => sdk.POST('/merchant/credit/checkTransactionStatus', { body: { merchantTransactionId: 'sdk_1' } });
    expect((await status()).data?.message).toBe('PENDING');

    expect(await control(t, '/sandbox/sdk/transactions/sdk_1/confirm')).toEqual({ merchantTransactionId: 'sdk_1', status: 'SUCCESS' });
    expect((await status()).data?.message).toBe('SUCCESS');

    await waitFor(() => (hook.events.length >= 1 ? true : undefined));
    expect(hook.events.map((event) => event.payload)).toEqual([{ merchantTransactionId: 'sdk_1', status: 'SUCCESS' }]);
    expect(hook.events[0]!.eventId).toMatch(/^evt_/);

    const refunded = await sdk.POST('/merchant/credit/refundTransaction', { body: { merchantTransactionId: 'sdk_1', amount: 100_000 } });
    expect(refunded.response.status).toBe(200);
    expect(refunded.data?.message).toBe('ok');
  });

  it('web: initiate, the user confirms on the hosted page, the status signature verifies, webhook through the handler, refunds', async () => {
    const hook = await receiver('web', PARTNER.privateKey);
    receivers.push(hook);
    const t = await sandbox(hook.url);
    const web = createWebClient({ baseUrl: t.url, ...PARTNER, fetch: validatingFetch });

    const initiated = await web.POST('/api/transaction', {
      body: {
        id: 'web_1',
        amount: 150_000,
        user: { name: 'Asha Rao', phoneNumber: '+919000000001' },
        notes: { woocommerceOrderId: 1042, items: [{ sku: 'TEA-1', quantity: 2 }] },
        redirect: { url: 'https://shop.example/?wc-api=paylater&key=wc_order_1', colorOverride: '', logoOverride: '' },
      },
    });
    expect(initiated.response.status).toBe(200);
    expect(initiated.data).toEqual({ message: 'TRANSACTION_INITIATED', redirectUrl: `${t.url}/checkout/web_1` });

    const pending = await web.GET('/api/transaction/status', { params: { query: { id: 'web_1' } } });
    expect(pending.data?.status).toBe('PENDING');
    expect(verifyStatusSignature(pending.data!.signature, 'web_1', 'PENDING', PARTNER.privateKey)).toBe(true);

    const confirmed = await control(t, '/sandbox/web/transactions/web_1/confirm');
    expect(confirmed).toMatchObject({ transactionId: 'web_1', status: 'SUCCESS' });
    expect(confirmed.redirectTo).toBe('https://shop.example/?wc-api=paylater&key=wc_order_1&txnId=web_1&txnStatus=SUCCESS');
    expect(verifyStatusSignature(confirmed.signature, 'web_1', 'SUCCESS', PARTNER.privateKey)).toBe(true);

    const done = await web.GET('/api/transaction/status', { params: { query: { id: 'web_1' } } });
    expect(done.data?.status).toBe('SUCCESS');
    expect(verifyStatusSignature(done.data!.signature, done.data!.transactionId, done.data!.status, PARTNER.privateKey)).toBe(true);
    expect(verifyStatusSignature(done.data!.signature, 'web_1', 'FAILURE', PARTNER.privateKey)).toBe(false);

    // The handler checked both signatures: X-Signature over the body and the status signature in it.
    await waitFor(() => (hook.events.length >= 1 ? true : undefined));
    expect(hook.events.map((event) => event.payload)).toEqual([{ transactionId: 'web_1', status: 'SUCCESS', signature: done.data!.signature }]);

    const unsigned = createWebClient({ baseUrl: t.url, ...PARTNER, signStatusCheck: false, fetch: validatingFetch });
    expect((await unsigned.GET('/api/transaction/status', { params: { query: { id: 'web_1' } } })).data).toEqual(done.data);

    const unknown = await web.GET('/api/transaction/status', { params: { query: { id: 'web_unknown' } } });
    expect(unknown.response.status).toBe(404);
    expect(unknown.error?.message).toBe('NO_SUCH_TRANSACTION');

    // Refunds (D32): a part, too much, the rest (no amount), then nothing is left.
    const refund = (body: { transactionId: string; amount?: number }) => web.POST('/api/refund', { body });
    const part = await refund({ transactionId: 'web_1', amount: 50_000 });
    expect(part.response.status).toBe(200);
    expect(part.data).toEqual({ message: 'ok' });
    expect((await refund({ transactionId: 'web_1', amount: 100_001 })).error?.message).toBe('REFUND_AMOUNT_TOO_LARGE');
    expect((await refund({ transactionId: 'web_1' })).data).toEqual({ message: 'ok' });
    const nothing = await refund({ transactionId: 'web_1', amount: 1 });
    expect(nothing.response.status).toBe(400);
    expect(nothing.error?.message).toBe('ALREADY_REFUNDED');
    expect((await refund({ transactionId: 'web_unknown' })).error?.message).toBe('NO_SUCH_TRANSACTION');
    const view = await (await fetch(`${t.url}/sandbox/web/transactions/web_1`)).json();
    expect(view).toMatchObject({ refundedAmount: 150_000, refunds: [{ amount: 50_000 }, { amount: 100_000 }] });
  });

  it('extras: credit info, identification and data pushes with the extras client; wrong credentials 401', async () => {
    const t = await sandbox();
    const extras = createExtrasClient({ baseUrl: t.url, credentials: EXTRAS, fetch: validatingFetch });

    const info = await extras.POST('/service/payments/merchant/user/credit/info', { params: { query: { userPhoneNumber: '+919000000003' } } });
    expect(info.response.status).toBe(200);
    expect(info.data).toMatchObject({ registrationStatus: 'registered', creditLimit: 1_000_000, creditTaken: 0 });
    const unknown = await extras.POST('/service/payments/merchant/user/credit/info', { params: { query: { userPhoneNumber: '+919812345678' } } });
    expect(unknown.data?.registrationStatus).toBe('unregistered');

    const identification = await extras.POST('/service/database/merchant/user/feed/identification', {
      body: { userPhoneNumber: '+919000000003', identification: { panNumber: 'ABCDE1234F' } },
    });
    expect(identification.data).toEqual({ message: 'ok' });
    const data = await extras.POST('/service/database/merchant/user/feed/merchant-data', {
      body: { userPhoneNumber: '+919000000003', data: { ordersLast90Days: 7 } },
    });
    expect(data.data).toEqual({ message: 'ok' });
    const stored = await (await fetch(`${t.url}/sandbox/extras/users/%2B919000000003`)).json();
    expect(stored).toMatchObject({ identification: { panNumber: 'ABCDE1234F' }, merchantData: [{ data: { ordersLast90Days: 7 } }] });

    const intruder = createExtrasClient({ baseUrl: t.url, credentials: { username: 'extras_test', password: 'guess' }, fetch: validatingFetch });
    const refused = await intruder.POST('/service/payments/merchant/user/credit/info', { params: { query: { userPhoneNumber: '+919000000003' } } });
    expect(refused.response.status).toBe(401);
    expect(refused.error?.errorCode).toBe('AUTHORIZATION_FAILED');
  });

  it('SDK: every message of the description through the client', async () => {
    const t = await sandbox();
    const sdk = createSdkClient({ baseUrl: t.url, ...PARTNER, fetch: validatingFetch });
    const initiate = (merchantTransactionId: string, amount = 100_000) =>
      sdk.POST('/merchant/credit/initiateTransaction', { body: { merchantTransactionId, userPhoneNumber: '+919000000001', userId: 'u_1', amount } });
    const status = (merchantTransactionId: string) => sdk.POST('/merchant/credit/checkTransactionStatus', { body: { merchantTransactionId } });
    const refund = (merchantTransactionId: string, amount?: number) =>
      sdk.POST('/merchant/credit/refundTransaction', { body: { merchantTransactionId, ...(amount === undefined ? {} : { amount }) } });
    const messages: Record<string, number> = {};
    const seen = (answer: { response: Response; data?: { message: string }; error?: { message: string } }) => {
      const message = (answer.data ?? answer.error)!.message;
      messages[message] = answer.response.status;
      return message;
    };

    expect(seen(await initiate('codes_1'))).toBe('TRANSACTION_INITIATED');
    expect(seen(await initiate('codes_1'))).toBe('DUPLICATE_TRANSACTION_ID');
    const forger = createSdkClient({ baseUrl: t.url, partnerId: PARTNER.partnerId, privateKey: 'not_the_key', fetch: validatingFetch });
    expect(seen(await forger.POST('/merchant/credit/checkTransactionStatus', { body: { merchantTransactionId: 'codes_1' } }))).toBe('AUTHORIZATION_FAILED');
    // A body the types forbid, sent anyway: a fractional amount.
    expect(seen(await initiate('codes_2', 1_000.5))).toBe('BAD_REQUEST');
    expect(seen(await status('codes_1'))).toBe('PENDING');
    expect(seen(await status('no_such_order'))).toBe('NO_SUCH_TRANSACTION');
    expect((await refund('codes_1')).error?.message).toBe('TRANSACTION_NOT_REFUNDABLE');
    await control(t, '/sandbox/sdk/transactions/codes_1/confirm');
    expect(seen(await refund('codes_1', 100_001))).toBe('REFUND_AMOUNT_TOO_LARGE');
    expect(seen(await refund('codes_1', 40_000))).toBe('ok');
    expect(seen(await refund('codes_1'))).toBe('ok');
    expect(seen(await refund('codes_1', 1))).toBe('ALREADY_REFUNDED');
    expect((await refund('no_such_order')).error?.message).toBe('NO_SUCH_TRANSACTION');

    expect(messages).toEqual({
      TRANSACTION_INITIATED: 201,
      DUPLICATE_TRANSACTION_ID: 400,
      AUTHORIZATION_FAILED: 401,
      BAD_REQUEST: 400,
      PENDING: 200,
      NO_SUCH_TRANSACTION: 400,
      REFUND_AMOUNT_TOO_LARGE: 400,
      ok: 200,
      ALREADY_REFUNDED: 400,
    });
    const view = await (await fetch(`${t.url}/sandbox/sdk/transactions/codes_1`)).json();
    expect(view).toMatchObject({ status: 'SUCCESS', amount: 100_000, refundedAmount: 100_000 });
  });

  it('a receiver that fails its first two attempts still receives every event, in order, as the clock advances', async () => {
    const t = await sandbox();
    const credentials = await onboard(t, 'flow_flaky');
    const hook = await receiver('gateway', credentials.password, 2);
    receivers.push(hook);
    const api = createTransactionalApiClient({ baseUrl: t.url, credentials, fetch: validatingFetch });

    await toWait(api, 'flaky_1', 100_000, hook.url);
    await advance(t, 2_000); // SUCCESS: the transaction event, attempt 1 → 500
    await waitFor(() => (hook.answers.length >= 1 ? true : undefined));
    for (const [id, amount] of [['rf1', 10_000], ['rf2', 20_000]] as const) {
      const refund = await api.POST('/api/merchant/transaction/{transactionId}/refund', {
        params: { path: { transactionId: 'flaky_1' } },
        body: { refund: { id, amount } },
      });
      expect(refund.response.status).toBe(200);
    }
    await advance(t, 1_000); // both refunds SUCCESS: their events wait behind the first one
    await new Promise((done) => setTimeout(done, 100));
    expect(hook.answers).toEqual([500]);
    expect(hook.events).toHaveLength(0);

    await advance(t, 30_000); // attempt 2 of the first event → 500
    await waitFor(() => (hook.answers.length >= 2 ? true : undefined));
    expect(hook.events).toHaveLength(0);
    await advance(t, 2 * 60_000); // attempt 3 → 200; then the two refund events at once
    await waitFor(() => (hook.events.length >= 3 ? true : undefined));

    expect(hook.answers).toEqual([500, 500, 200, 200, 200]);
    expect(
      hook.events.map((event) =>
        event.kind === 'transaction' ? `transaction ${event.payload.transaction.status}` : `refund ${event.payload.refund.id} ${event.payload.refund.status}`,
      ),
    ).toEqual(['transaction SUCCESS', 'refund rf1 SUCCESS', 'refund rf2 SUCCESS']);
    const deliveries = (await (await fetch(`${t.url}/sandbox/webhooks/deliveries?transactionId=flaky_1`)).json()).deliveries as {
      status: string;
      attempts: unknown[];
    }[];
    expect(deliveries.map((delivery) => [delivery.status, delivery.attempts.length])).toEqual([
      ['delivered', 3],
      ['delivered', 1],
      ['delivered', 1],
    ]);
  });
});
