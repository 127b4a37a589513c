/**
 * Gateway records cannot lose a field (src/sandbox/records.ts, gateway/records.ts): a transaction
 * created with every optional request field set goes through each transition the gateway has
 * (a wrong and a right OTP, the down payment, its confirmation, a refund and its completion; cancel;
 * expiry), and after each one
 * - the stored record still holds every field it was created with, each unchanged unless the
 *   transition owns it;
 * - the contract's view read back through the API (`GET /api/merchant/transaction/{id}`) has every
 *   property the document's `GatewayTransaction` declares that applies in that state, read from the
 *   bundled document (so a property added to the schema is checked without touching this file),
 *   with the request's values (each request property the view declares under the same name): a
 *   field dropped from `gateway/views.ts` fails here.
 * The request sets every property the document's request schema declares, so a new request field
 * fails here until it is added to the request, and then is checked through every transition.
 * The field-by-field copies themselves are checked against their interfaces in records.test.ts.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { COLLECTIONS, transactionKey, type TransactionRecord } from '../../src/sandbox/gateway/records.js';
import { DEVICE, ELIGIBLE, startGateway, type GatewayTest } from '../support/gateway.js';
import { propertiesOf } from '../support/gateway-schemas.js';
import { startReceiver, type Receiver } from '../support/sandbox.js';
import { TEST_OTP } from '../../src/sandbox/fixtures.js';

const AMOUNT = 150_000;

/** The properties of the document's `GatewayTransaction`, the view. */
const VIEW_PROPERTIES: string[] = Object.keys(propertiesOf('GatewayTransaction'));

/** The record fields a transition may change (every other field must keep its value). */
const CHANGED_BY_TRANSITIONS = new Set<string>([
  'step', 'otp', 'updatedAt', 'failureReason', 'finishedAt', 'downPayment', 'confirmsAt',
  'refundCount', 'refundedAmount', 'nextPendingRefund',
]);

let t: GatewayTest;
let hook: Receiver;
let auth: string;
let merchantId: string;

beforeAll(async () => {
  t = await startGateway();
  hook = await startReceiver();
  const merchant = await t.onboard({ defaultWebhookUrl: hook.url });
  merchantId = merchant.id;
  auth = merchant.credentials.auth;
  // The merchant's `failedStatus` is copied onto its transactions: set it, so the record has that field too.
  const set = await t.request('POST', `/sandbox/gateway/merchants/${merchantId}/failed-status`, {
    body: JSON.stringify({ status: 'FAILURE' }),
    headers: { 'Content-Type': 'application/json' },
  });
  expect(set.status, set.text).toBe(200);
});
afterAll(async () => {
  await t.close();
  await hook.close();
});
afterEach(() => {
  expect(t.loggedErrors).toEqual([]);
});

/** Creates a transaction with every optional request field set; returns the request and the record. */
async function createWithEveryField(id: string) {
  const check = await t.check(auth, ELIGIBLE, AMOUNT);
  const nowMs = (await t.request('GET', '/sandbox/clock')).body.nowMs as number;
  const body = {
    transaction: { id, amount: AMOUNT, notes: { orderId: `o_${id}`, basket: [1, 2] }, mode: 'TEST' },
    user: { name: 'Asha Rao', phoneNumber: ELIGIBLE, email: 'asha.rao@example.in' },
    deviceInformation: DEVICE,
    preEligibilityCheckId: check.id as string,
    createConfiguration: {
      webhookUrl: `${hook.url}/transactions`,
      expiryTimestamp: Math.floor(nowMs / 1000) + 2 * 3600,
      successRedirectUrl: 'https://shop.example.in/done',
      failureRedirectUrl: 'https://shop.example.in/failed',
      cancelRedirectUrl: 'https://shop.example.in/cancelled',
      logoOverride: 'https://shop.example.in/logo.png',
      colorOverride: '#112233',
    },
  };
  // Every property the request schema declares is set, one level down too: a request field added
  // to the document fails here until it is added to this request (and so checked below).
  const request = propertiesOf('GatewayTransactionCreateRequest');
  expect(Object.keys(body).sort(), 'the request sets every property').toEqual(Object.keys(request).sort());
  for (const [name, value] of Object.entries(body)) {
    if (typeof value !== 'object') continue;
    expect(Object.keys(value).sort(), `the request sets every property of ${name}`).toEqual(Object.keys(propertiesOf(request[name]!)).sort());
  }
  const created = await t.call('POST', '/api/merchant/transaction', auth, body);
  expect(created.status, created.text).toBe(200);
  return { body, record: stored(id), view: created.body.transaction };
}

function stored(id: string): TransactionRecord {
  const record = t.sandbox.store.collection<TransactionRecord>(COLLECTIONS.transactions).get(transactionKey(merchantId, id));
  expect(record, `record ${id}`).toBeDefined();
  return record!;
}

/** The fields of a record that hold a value. */
const present = (record: object) => Object.entries(record).filter(([, value]) => value !== undefined).map(([key]) => key).sort();

/** Every field the record was created with is still there, and those no transition owns are unchanged. */
function expectRecordKept(created: TransactionRecord, now: TransactionRecord, after: string) {
  expect(present(now), `record fields after ${after}`).toEqual(expect.arrayContaining(present(created)));
  for (const field of present(created)) {
    if (CHANGED_BY_TRANSITIONS.has(field)) continue;
    expect(now[field as keyof TransactionRecord], `record.${field} after ${after}`).toEqual(created[field as keyof TransactionRecord]);
  }
}

/**
 * The view read back through the API: every property of the schema but those that do not apply in
 * this state, and the request's values.
 */
async function expectViewKept(
  request: Awaited<ReturnType<typeof createWithEveryField>>,
  after: string,
  notApplicable: string[],
): Promise<any> {
  const view = await t.transaction(auth, request.body.transaction.id);
  const expected = VIEW_PROPERTIES.filter((property) => !notApplicable.includes(property)).sort();
  expect(expected.length).toBeGreaterThan(10);
  expect(Object.keys(view).sort(), `view properties after ${after}`).toEqual(expected);
  expect(view.id).toBe(request.body.transaction.id);
  expect(view.amount).toBe(AMOUNT);
  expect(view.notes, `notes after ${after}`).toEqual(request.body.transaction.notes);
  expect(view.user, `user after ${after}`).toEqual(request.body.user);
  expect(view.preEligibilityCheckId, `preEligibilityCheckId after ${after}`).toBe(request.body.preEligibilityCheckId);
  expect(view.url).toBe(request.view.url);
  expect(view.createdAt).toBe(request.view.createdAt);
  expect(Date.parse(view.expiresAt), `expiresAt after ${after}`).toBe(request.body.createConfiguration.expiryTimestamp * 1000);
  // Each request property the view declares under the same name, in `transaction` or at the top of
  // the body, comes back as sent: a field kept as sent (gateway/records.ts, `EchoedFields`) is
  // compared here with no edit.
  const sentUnderViewNames = [...Object.entries(request.body.transaction), ...Object.entries(request.body)]
    .filter(([name]) => VIEW_PROPERTIES.includes(name));
  expect(sentUnderViewNames.map(([name]) => name).sort()).toEqual(expect.arrayContaining(['amount', 'id', 'notes', 'preEligibilityCheckId', 'user']));
  for (const [name, value] of sentUnderViewNames) expect(view[name], `${name} after ${after}`).toEqual(value);
  return view;
}

describe('a gateway transaction with every optional request field, through its transitions', () => {
  it('keeps every field, in the record and in the view, through OTP, down payment, confirmation and refund', async () => {
    const id = t.id('rec_gw');
    const request = await createWithEveryField(id);
    const created = request.record;
    // The request's optional fields are on the record.
    expect(present(created)).toEqual(
      expect.arrayContaining(['notesJson', 'deviceInformation', 'mode', 'preEligibilityCheckId', 'configuration', 'failedStatus', 'otp']),
    );
    expect(Object.keys(created.configuration).sort()).toEqual(
      ['cancelRedirectUrl', 'colorOverride', 'failureRedirectUrl', 'logoOverride', 'successRedirectUrl', 'webhookUrl'],
    );
    await expectViewKept(request, 'create', ['failureReason', 'downPayment']);

    const stage = await t.stage(auth, id);
    const { referenceId } = stage.transactionStage.nextStep.options.userInputOptions[0];
    const submit = (value: string) => t.call('POST', `/api/merchant/transaction/${id}/user-inputs/${referenceId}`, auth, { value });
    expect((await submit('999999')).body.errorCode).toBe('INVALID_OTP');
    expectRecordKept(created, stored(id), 'a wrong OTP');
    await expectViewKept(request, 'a wrong OTP', ['failureReason', 'downPayment']);

    expect((await submit(TEST_OTP.correct)).status).toBe(200);
    expectRecordKept(created, stored(id), 'the right OTP');
    await expectViewKept(request, 'the right OTP', ['failureReason', 'downPayment']);

    const { amount } = (await t.stage(auth, id)).transactionStage.nextStep.options.paymentOptions;
    const registered = await t.call('POST', `/api/merchant/transaction/${id}/payment/register-external`, auth, {
      metaData: { paymentMode: 'UPI', pgPaymentId: `pay_${id}`, amount, vpa: 'asha@upi' },
    });
    expect(registered.status, registered.text).toBe(200);
    expectRecordKept(created, stored(id), 'the down payment');
    await expectViewKept(request, 'the down payment', ['failureReason']);

    await t.advance(2_000);
    expectRecordKept(created, stored(id), 'confirmation');
    expect((await expectViewKept(request, 'confirmation', ['failureReason'])).status).toBe('SUCCESS');

    const refund = await t.call('POST', `/api/merchant/transaction/${id}/refund`, auth, {
      refund: { amount: 10_000 },
      createConfiguration: { webhookUrl: `${hook.url}/refunds` },
    });
    expect(refund.status, refund.text).toBe(200);
    expectRecordKept(created, stored(id), 'a refund');
    await expectViewKept(request, 'a refund', ['failureReason']);

    await t.advance(2_000);
    expectRecordKept(created, stored(id), 'the refund completing');
    const view = await expectViewKept(request, 'the refund completing', ['failureReason']);
    expect(view.refunds.map((item: any) => item.status)).toEqual(['SUCCESS']);
  });

  it('keeps every field through cancel, after the down payment', async () => {
    const id = t.id('rec_gw_cancel');
    const request = await createWithEveryField(id);
    await t.payDownPayment(auth, id);
    const cancelled = await t.call('GET', `/api/merchant/transaction/${id}/cancel`, auth);
    expect(cancelled.status, cancelled.text).toBe(200);
    expectRecordKept(request.record, stored(id), 'cancel');
    expect((await expectViewKept(request, 'cancel', [])).status).toBe('CANCELLED');
  });

  it('keeps every field through expiry', async () => {
    const id = t.id('rec_gw_expiry');
    const request = await createWithEveryField(id);
    await t.advance(2 * 3600 * 1000 + 1_000);
    expectRecordKept(request.record, stored(id), 'expiry');
    const view = await expectViewKept(request, 'expiry', ['downPayment']);
    expect([view.status, view.failureReason]).toEqual(['CANCELLED', 'EXPIRED']);
  });
});
