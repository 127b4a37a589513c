/**
 * The gateway family end to end, with the typed clients of src/clients/gateway.ts: onboarding,
 * verification on the virtual clock, credentials, pre-eligibility, the step machine with wrong and
 * expired OTPs, the down payment, the transaction webhook, refunds and their webhooks. Every answer
 * is validated against the bundled document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createMerchantApiClient,
  createTransactionalApiClient,
  isStageResponse,
  transactionalCredentials,
  type GatewaySchemas,
} from '../../src/clients/gateway.js';
import { checkWebhook, DEVICE, FILES, gatewayContract, received, startGateway, type GatewayTest } from '../support/gateway.js';
import { startReceiver, validatingFetch, waitFor, type Receiver } from '../support/sandbox.js';

let t: GatewayTest;
let merchantHook: Receiver;
let transactionHook: Receiver;
let refundHook: Receiver;

beforeAll(async () => {
  t = await startGateway();
  merchantHook = await startReceiver();
  transactionHook = await startReceiver();
  refundHook = await startReceiver();
});
afterAll(async () => {
  await t.close();
  await Promise.all([merchantHook.close(), transactionHook.close(), refundHook.close()]);
});


describe('gateway end to end (typed clients)', () => {
  it('onboards, authenticates, collects the down payment, succeeds, refunds, and sends signed webhooks', async () => {
    const merchantApi = createMerchantApiClient({
      baseUrl: t.url,
      credentials: { username: 'pg_test', password: 'pg_test_secret' },
      fetch: validatingFetch,
    });
    const merchantId = t.id('flow');

    // Onboard: create, documents, verification on the clock.
    const created = await merchantApi.POST('/api/merchant', {
      body: {
        merchant: {
          id: merchantId,
          brandName: 'Acme',
          entityName: 'Acme Retail Private Limited',
          brandHomePageUrl: 'https://acme.example.in',
          mccCode: 5411,
          defaultWebhookUrl: merchantHook.url,
        },
      },
    });
    expect(created.response.status).toBe(201);
    expect(created.data?.merchant.stage).toBe('documentsPending');
    expect(created.data?.merchant.requiredDocumentTypes).toEqual(['PAN', 'CANCELLED_CHEQUE']);
    expect(created.data?.merchant.basicAuthDetails).toBeUndefined();

    const pan = await merchantApi.POST('/api/merchant/{id}/document', {
      params: { path: { id: merchantId } },
      body: { documentType: 'PAN', document: { type: 'base64', value: FILES.pdf } },
    });
    expect(pan.data?.merchant.stage).toBe('documentsPending');
    const cheque = await merchantApi.POST('/api/merchant/{id}/document', {
      params: { path: { id: merchantId } },
      body: { documentType: 'CANCELLED_CHEQUE', document: { type: 'base64', value: FILES.jpeg } },
    });
    expect(cheque.data?.merchant.stage).toBe('verificationInProgress');

    await t.advance(4_000);
    let read = await merchantApi.GET('/api/merchant/{id}', { params: { path: { id: merchantId } } });
    expect(read.data?.merchant.stage).toBe('verificationInProgress');
    await t.advance(1_000);
    read = await merchantApi.GET('/api/merchant/{id}', { params: { path: { id: merchantId } } });
    expect(read.data?.merchant.stage).toBe('enabled');
    expect(read.data?.merchant.documents.map((document) => document.status)).toEqual(['verified', 'verified']);
    const credentials = transactionalCredentials(read.data!.merchant)!;
    expect(credentials.username).not.toBe('');
    expect(credentials.password.length).toBeGreaterThanOrEqual(24);

    const api = createTransactionalApiClient({ baseUrl: t.url, credentials, fetch: validatingFetch });
    const configuration = await api.GET('/api/merchant/configuration');
    expect(configuration.data).toEqual({ version: 2, maxOrderAmount: 10_000_000 });

    // Pre-eligibility and create with the check.
    const check = await api.POST('/api/merchant/transaction/pre-eligibility', {
      body: { user: { name: 'Asha Rao', phoneNumber: '+919000000001' }, transaction: { amount: 150_000 }, deviceInformation: DEVICE },
    });
    expect(check.data?.preEligibilityCheck).toMatchObject({ eligible: true, amount: 150_000 });
    const checkId = check.data!.preEligibilityCheck.id;

    const transactionId = t.id('txn');
    const createdTransaction = await api.POST('/api/merchant/transaction', {
      body: {
        transaction: { id: transactionId, amount: 150_000, notes: { billNo: 'INV-1' } },
        user: { name: 'Asha Rao', phoneNumber: '+919000000001', email: 'asha@example.in' },
        deviceInformation: DEVICE,
        preEligibilityCheckId: checkId,
        createConfiguration: { webhookUrl: transactionHook.url },
      },
    });
    expect(createdTransaction.response.status).toBe(200);
    expect(createdTransaction.data?.transaction).toMatchObject({
      id: transactionId,
      status: 'PENDING',
      preEligibilityCheckId: checkId,
      notes: { billNo: 'INV-1' },
      refundedAmount: 0,
      refunds: [],
    });

    // Stage: authenticate.
    const readStage = async () => {
      const answer = await api.GET('/api/merchant/transaction/{id}', {
        params: { path: { id: transactionId }, query: { include: 'stage' } },
        headers: { Accept: 'application/json' },
      });
      expect(answer.data !== undefined && isStageResponse(answer.data)).toBe(true);
      if (answer.data === undefined || !isStageResponse(answer.data)) throw new Error('not a stage response');
      return answer.data;
    };
    let stage = await readStage();
    expect(stage.transactionStage.nextStep.step).toBe('authenticate');
    const option = (stage.transactionStage.nextStep.options as { userInputOptions: { referenceId: string; length: number; type: string }[] })
      .userInputOptions[0]!;
    expect(option).toMatchObject({ length: 6, type: 'numeric' });
    const firstReference = option.referenceId;

    const submit = (referenceId: string, value: string) =>
      api.POST('/api/merchant/transaction/{transactionId}/user-inputs/{referenceId}', {
        params: { path: { transactionId, referenceId } },
        body: { value },
      });

    // A wrong OTP, then an expired one (a new referenceId is issued), then the right one.
    const wrong = await submit(firstReference, '111111');
    expect(wrong.response.status).toBe(400);
    expect(wrong.error?.errorCode).toBe('INVALID_OTP');

    const expired = await submit(firstReference, '000000');
    expect(expired.response.status).toBe(400);
    expect(expired.error?.errorCode).toBe('OTP_EXPIRED');
    stage = await readStage();
    const secondReference = (stage.transactionStage.nextStep.options as { userInputOptions: { referenceId: string }[] }).userInputOptions[0]!
      .referenceId;
    expect(secondReference).not.toBe(firstReference);
    const old = await submit(firstReference, '123456');
    expect(old.error?.errorCode).toBe('OTP_EXPIRED');

    const right = await submit(secondReference, '123456');
    expect(right.response.status).toBe(200);
    expect(right.data?.transactionStage.nextStep).toEqual({
      step: 'payment',
      options: { paymentOptions: { amount: 37_500, shouldEnforceAutopay: false } },
    });

    // Down payment: register-external → wait → (clock) → success.
    const registered = await api.POST('/api/merchant/transaction/{transactionId}/payment/register-external', {
      params: { path: { transactionId } },
      body: { metaData: { paymentMode: 'UPI', pgPaymentId: 'pay_1', amount: 37_500, vpa: 'asha@upi' } },
    });
    expect(registered.data?.transactionStage.nextStep).toEqual({ step: 'wait', options: { waitOptions: { pollIntervalSeconds: 2 } } });
    expect(registered.data?.transaction.downPayment).toMatchObject({ amount: 37_500, metaData: { vpa: 'asha@upi' } });

    await t.advance(2_000);
    stage = await readStage();
    expect(stage.transactionStage.nextStep).toEqual({ step: 'success', options: {} });
    expect(stage.transaction.status).toBe('SUCCESS');

    // The transaction webhook: to the transaction's URL (not the merchant default), signed, same as GET.
    const [transactionEvent] = await received(transactionHook, 1);
    const event = await checkWebhook(transactionEvent!, 'notifyTransactionUpdated', credentials.password);
    const plain = await api.GET('/api/merchant/transaction/{id}', { params: { path: { id: transactionId } } });
    expect(event).toEqual(plain.data);
    expect(merchantHook.received).toHaveLength(0);

    // Refunds: partial twice, too large, the rest, then nothing remains.
    const refund = (body: GatewaySchemas['GatewayRefundRequest']) =>
      api.POST('/api/merchant/transaction/{transactionId}/refund', { params: { path: { transactionId } }, body });
    const first = await refund({ refund: { id: 'r1', amount: 50_000 }, createConfiguration: { webhookUrl: refundHook.url } });
    expect(first.response.status).toBe(200);
    expect(first.data?.refund).toMatchObject({ id: 'r1', transactionId, amount: 50_000, status: 'PENDING' });
    const second = await refund({ refund: { id: 'r2', amount: 25_000 }, createConfiguration: { webhookUrl: refundHook.url } });
    expect(second.response.status).toBe(200);
    const tooLarge = await refund({ refund: { amount: 75_001 } });
    expect(tooLarge.response.status).toBe(400);
    expect(tooLarge.error?.errorCode).toBe('REFUND_AMOUNT_TOO_LARGE');
    const rest = await refund({ refund: { id: 'r3' }, createConfiguration: { webhookUrl: refundHook.url } });
    expect(rest.response.status).toBe(200);
    expect(rest.data?.refund.amount).toBe(75_000);
    const nothing = await refund({});
    expect(nothing.error?.errorCode).toBe('ALREADY_REFUNDED');

    const afterRefunds = await api.GET('/api/merchant/transaction/{id}', { params: { path: { id: transactionId } } });
    const record = afterRefunds.data as { transaction: { refundedAmount: number; refunds: { id: string }[]; status: string } };
    expect(record.transaction.refundedAmount).toBe(150_000);
    expect(record.transaction.refunds.map((item) => item.id)).toEqual(['r1', 'r2', 'r3']);
    expect(record.transaction.status).toBe('SUCCESS');

    // Refund webhooks: to the per-refund URL, each signed, SUCCESS.
    await t.advance(1_000);
    const refundEvents = await received(refundHook, 3);
    const bodies = await Promise.all(refundEvents.map((item) => checkWebhook(item, 'notifyRefundUpdated', credentials.password)));
    expect(bodies.map((body) => [body.refund.id, body.refund.status]).sort()).toEqual([
      ['r1', 'SUCCESS'],
      ['r2', 'SUCCESS'],
      ['r3', 'SUCCESS'],
    ]);
    expect(transactionHook.received).toHaveLength(1);
    expect(merchantHook.received).toHaveLength(0);
    expect(t.loggedErrors).toEqual([]);
  });
});

describe('gateway coverage and delivery', () => {
  it('serves every operation of the gateway document', async () => {
    const contract = await gatewayContract();
    const served = new Set(t.sandbox.routes.filter((route) => route.family === 'gateway').map((route) => route.operationId));
    const missing = [...contract.operations.values()]
      .filter((operation) => !operation.webhook && !served.has(operation.operationId))
      .map((operation) => operation.operationId);
    expect(missing).toEqual([]);
  });

  it('counts a 302 from the receiver as received, without following it (D23)', async () => {
    const redirecting = await startReceiver(() => 302);
    try {
      const { credentials } = await t.onboard({ defaultWebhookUrl: redirecting.url });
      const id = await t.successful(credentials.auth, 10_000);
      const delivery = await waitFor(async () => {
        const [found] = (await t.deliveries(id)).filter((item) => item.family === 'gateway');
        return found?.status === 'delivered' ? found : undefined;
      });
      expect(delivery.attempts.map((attempt: { statusCode: number }) => attempt.statusCode)).toEqual([302]);
      expect(redirecting.received.map((request) => request.url)).toEqual(['/webhook']);
    } finally {
      await redirecting.close();
    }
  });

  it('retries a transaction webhook on the virtual clock with the same X-Event-Id; any 2xx is success', async () => {
    const flaky = await startReceiver((index) => (index === 0 ? 503 : 202));
    try {
      const { credentials } = await t.onboard({ defaultWebhookUrl: flaky.url });
      const id = await t.successful(credentials.auth, 10_000);
      await received(flaky, 1);
      await t.advance(30_000);
      const [first, second] = await received(flaky, 2);
      expect(second!.headers['x-event-id']).toBe(first!.headers['x-event-id']);
      expect(second!.body).toBe(first!.body);
      await checkWebhook(second!, 'notifyTransactionUpdated', credentials.password);
      const delivery = await waitFor(async () => {
        const [found] = (await t.deliveries(id)).filter((item) => item.family === 'gateway');
        return found?.status === 'delivered' ? found : undefined;
      });
      expect(delivery.attempts.map((attempt: { statusCode: number }) => attempt.statusCode)).toEqual([503, 202]);
      expect(delivery).toMatchObject({ successStatus: '2xx-3xx', event: 'transactionUpdated', orderingKey: expect.stringContaining(id) });
    } finally {
      await flaky.close();
    }
  });
});
