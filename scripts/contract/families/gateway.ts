/**
 * The gateway integration (HTTP Basic: Merchant API credentials for merchant operations, the
 * merchant's Transactional API credentials for transaction operations).
 *
 * Against a real server the setup onboards merchants of this run and drives transactions to the
 * steps the transactions under test need:
 *
 *   merchant  `<run>_m`         documents uploaded, waited until `enabled`; its
 *                               `basicAuthDetails` are the Transactional API credentials
 *   merchant  `<run>_m_pending` no documents (uploads that must succeed or fail on the body)
 *   merchant  `<run>_m_disable` to be disabled
 *   dashboard access of `<run>.taken@...` on `<run>_m` (the duplicate email)
 *   transaction `<run>_t_success`  OTP, down payment, waited until SUCCESS, one refund `<run>_r0`
 *   transaction `<run>_t_fresh`    step authenticate (duplicate id, reads, wrong-state payment
 *                                  and refund)
 *   transaction `<run>_t_cancel`   step authenticate, without deviceInformation (the cancel)
 *   transaction `<run>_t_cancelled` cancelled by the setup: CANCELLED (a cancel of a final transaction)
 *   transaction `<run>_t_otp`      step authenticate (the OTP that succeeds)
 *   transaction `<run>_t_otp_bad`  step authenticate (invalid and oversized user inputs)
 *   transaction `<run>_t_pay`      step payment (the down payment that succeeds; wrong-state OTP)
 *   transaction `<run>_t_pay_bad`  step payment (invalid and oversized down payments)
 *
 * Waiting uses the sandbox's clock (`POST /sandbox/clock/advance {"ms": 60000}`) when the server
 * has it, else polls once a second, up to --wait-seconds. Everything that only waits on the
 * clock is done first, so that advancing it cannot expire the OTPs of the later transactions.
 */
import { APPROVED_TEST_USER, TEST_OTP as OTPS } from '../../../src/sandbox/fixtures.js';
import { unexpected, type Kit, type SetupResponse } from '../kit.js';
import { genericPlan } from '../plans.js';
import * as edit from '../request-edit.js';
import { all, editJson } from '../request-edit.js';
import type { AuthMode, DreddTransaction, Edit, Operation, Plan } from '../types.js';
import { basicValue, setBasic } from './auth.js';

const MERCHANTS = '/api/merchant';
const MERCHANT = '/api/merchant/{id}';
const DOCUMENT = '/api/merchant/{id}/document';
const DISABLE = '/api/merchant/{id}/disable';
const DASHBOARD = '/api/merchant/{id}/dashboard-access';
const PRE_ELIGIBILITY = '/api/merchant/transaction/pre-eligibility';
const TRANSACTIONS = '/api/merchant/transaction';
const TRANSACTION = '/api/merchant/transaction/{id}';
const USER_INPUT = '/api/merchant/transaction/{transactionId}/user-inputs/{referenceId}';
const REGISTER = '/api/merchant/transaction/{transactionId}/payment/register-external';
const REFUND = '/api/merchant/transaction/{transactionId}/refund';
const CANCEL = '/api/merchant/transaction/{transactionId}/cancel';
const CONFIGURATION = '/api/merchant/configuration';
const SETTLEMENT = '/api/merchant/settlement';

export const codeField = 'errorCode';
const CODES = { 400: 'BAD_REQUEST', 401: 'AUTHORIZATION_FAILED', 404: 'NOT_FOUND', 413: 'PAYLOAD_TOO_LARGE' };

/** The sandbox's correct test OTP (docs/sandbox.md). */
const TEST_OTP = OTPS.correct;
/** The sandbox's registered, approved test user whose down payments are confirmed. */
const TEST_USER = { name: APPROVED_TEST_USER.name, phoneNumber: APPROVED_TEST_USER.phoneNumber };
const DEVICE = { userAgent: 'paylater-contract-kit', ipAddress: '203.0.113.24' };
/** Small, so that repeated runs do not use up the test user's credit. */
const TRANSACTION_AMOUNT = 20000;
const FIRST_REFUND_AMOUNT = 1000;
const NEW_REFUND_AMOUNT = 2000;
/** An id longer than the 64 characters every id allows (D04, D24): a 400 in a path. */
const TOO_LONG_ID = 'x'.repeat(65);
const UNKNOWN_REFERENCE = '00000000-0000-4000-8000-000000000000';
/** A tiny PDF (the upload checks the first bytes, D08). */
const TINY_PDF = Buffer.from('%PDF-1.4\n1 0 obj\n<</Type/Catalog>>\nendobj\ntrailer\n<</Root 1 0 R>>\n%%EOF\n').toString('base64');
const CLOCK_STEP_MS = 60000;

function schemeOf(kit: Kit, op: Operation): string | undefined {
  return Object.keys(kit.operation(op.path, op.method)?.security[0] ?? {})[0];
}

export function authenticate(kit: Kit, transaction: DreddTransaction, op: Operation, mode: AuthMode): void {
  const scheme = schemeOf(kit, op);
  if (scheme === undefined) return;
  // For a wrong password the merchant's username is kept when the setup has it.
  const transactional = kit.state.transactional || { username: `${kit.settings.runId}_unknown`, password: 'unknown' };
  setBasic(transaction, scheme === 'transactionalApiBasic' ? transactional : kit.settings, mode);
}

// ---------------------------------------------------------------------------------------------
// Setup

/**
 * A setup call of the Merchant API (`merchant`) or, with the merchant's credentials, of the
 * Transactional API. An answer other than `status` is an error that names the call (`what`).
 */
async function basicCall(kit: Kit, api: Api, [status, what]: [number, string], method: string, path: string, value?: unknown): Promise<SetupResponse> {
  const { username, password } = api === 'merchant' ? kit.settings : kit.state.transactional;
  const response = await kit.call(method, path, {
    body: value === undefined ? undefined : JSON.stringify(value),
    headers: { Authorization: basicValue(username, password) },
  });
  if (response.status !== status) throw new Error(unexpected(what, response));
  return response;
}

type Api = 'merchant' | 'transactional';

/**
 * Waits for `probe` to answer something other than undefined: advances the sandbox clock when
 * the server has one, else polls once a second, up to --wait-seconds.
 */
async function waitFor<T>(kit: Kit, what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + kit.settings.waitSeconds * 1000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) {
      throw new WaitTimeout(`${what} did not happen within --wait-seconds (${kit.settings.waitSeconds} s)`);
    }
    if (kit.state.hasClock !== false) {
      const advanced = await kit.call('POST', '/sandbox/clock/advance', { body: JSON.stringify({ ms: CLOCK_STEP_MS }) });
      kit.state.hasClock = advanced.status >= 200 && advanced.status < 300;
    }
    if (!kit.state.hasClock) await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

class WaitTimeout extends Error {}

async function createMerchant(kit: Kit, id: string): Promise<string> {
  await basicCall(kit, 'merchant', [201, `creating merchant ${id}`], 'POST', MERCHANTS, {
    merchant: {
      id,
      brandName: 'Contract Kit Store',
      entityName: 'Contract Kit Private Limited',
      brandHomePageUrl: 'https://contract-kit.example.in',
      mccCode: 5411,
    },
  });
  return id;
}

async function onboardMerchant(kit: Kit, id: string): Promise<{ username: string; password: string }> {
  await createMerchant(kit, id);
  for (const documentType of ['PAN', 'CANCELLED_CHEQUE']) {
    await basicCall(kit, 'merchant', [200, `uploading ${documentType} of ${id}`], 'POST', `${MERCHANTS}/${id}/document`, {
      documentType,
      document: { type: 'base64', value: TINY_PDF },
    });
  }
  const merchant = await waitFor<any>(kit, `merchant ${id} becoming enabled`, async () => {
    const response = await basicCall(kit, 'merchant', [200, `reading merchant ${id}`], 'GET', `${MERCHANTS}/${id}`);
    const record = response.json && response.json.merchant;
    if (record && record.stage === 'enabled') return record;
    if (record && (record.stage === 'documentsPending' || record.stage === 'disabled')) {
      const rejected: any[] = (record.documents || []).filter((document: any) => document.status === 'rejected');
      throw new Error(
        `merchant ${id} went to ${record.stage} instead of enabled` +
          (rejected.length ? ` (rejected: ${rejected.map((d) => `${d.documentType}: ${d.rejectionReason}`).join(', ')})` : ''),
      );
    }
    return undefined;
  });
  const details = merchant.basicAuthDetails;
  if (!details || !details.username || !details.password) {
    throw new Error(`merchant ${id} is enabled but its record has no basicAuthDetails { username, password } (D07)`);
  }
  return { username: details.username, password: details.password };
}

async function createTransaction(kit: Kit, suffix: string, { device = true } = {}): Promise<string> {
  const id = kit.id(suffix);
  await basicCall(kit, 'transactional', [200, `creating transaction ${id}`], 'POST', TRANSACTIONS, {
    transaction: { id, amount: TRANSACTION_AMOUNT, notes: { referenceId: `contract_kit_${suffix}` } },
    user: TEST_USER,
    ...(device ? { deviceInformation: DEVICE } : {}),
  });
  return id;
}

async function stage(kit: Kit, id: string): Promise<{ transaction: any; nextStep: any }> {
  const response = await basicCall(kit, 'transactional', [200, `reading the stage of ${id}`], 'GET', `${TRANSACTIONS}/${id}?include=stage`);
  const nextStep = response.json && response.json.transactionStage && response.json.transactionStage.nextStep;
  if (!nextStep) throw new Error(`the stage of ${id} has no transactionStage.nextStep`);
  return { transaction: response.json.transaction, nextStep };
}

/** A transaction in step authenticate, with the referenceId of its OTP option. */
async function authenticating(kit: Kit, suffix: string): Promise<{ id: string; referenceId: string }> {
  const id = await createTransaction(kit, suffix);
  const { nextStep } = await stage(kit, id);
  const option = nextStep.step === 'authenticate' && (nextStep.options.userInputOptions || [])[0];
  if (!option) throw new Error(`transaction ${id} starts in step ${nextStep.step}, not authenticate`);
  return { id, referenceId: option.referenceId };
}

/** A transaction in step payment, with the down payment amount and its used OTP referenceId. */
async function paying(kit: Kit, suffix: string): Promise<{ id: string; referenceId: string; downPayment: number }> {
  const { id, referenceId } = await authenticating(kit, suffix);
  const path = `${TRANSACTIONS}/${id}/user-inputs/${referenceId}`;
  await basicCall(kit, 'transactional', [200, `submitting the test OTP ${TEST_OTP} to ${id}`], 'POST', path, { value: TEST_OTP });
  const { nextStep } = await stage(kit, id);
  if (nextStep.step !== 'payment') throw new Error(`transaction ${id} is in step ${nextStep.step} after the OTP, not payment`);
  return { id, referenceId, downPayment: nextStep.options.paymentOptions.amount };
}

function metaData(amount: number) {
  return { paymentMode: 'UPI', pgPaymentId: 'contract_kit_payment', amount };
}

/** Runs one step of the setup; a failure is recorded against the state keys it would make. */
async function step(kit: Kit, keys: string[], work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    for (const key of keys) kit.miss(key, reason);
    if (error instanceof WaitTimeout) for (const key of keys) kit.state[`${key}Timeout`] = reason;
  }
}

/** One step of the setup that makes the state value `key`. */
function make(kit: Kit, key: string, work: () => Promise<unknown>): Promise<void> {
  return step(kit, [key], async () => {
    kit.state[key] = await work();
  });
}

export async function setup(kit: Kit): Promise<void> {
  await step(kit, ['merchantId', 'transactional'], async () => {
    const id = kit.id('m');
    kit.state.transactional = await onboardMerchant(kit, id);
    kit.state.merchantId = id;
  });
  await make(kit, 'pendingMerchantId', () => createMerchant(kit, kit.id('m_pending')));
  await make(kit, 'disableMerchantId', () => createMerchant(kit, kit.id('m_disable')));
  if (kit.state.merchantId) {
    await make(kit, 'takenEmail', async () => {
      const email = `${kit.settings.runId}.taken@contract-kit.example.in`;
      const path = `${MERCHANTS}/${kit.state.merchantId}/dashboard-access`;
      await basicCall(kit, 'merchant', [201, `creating dashboard access for ${email}`], 'POST', path, {
        dashboardUser: { name: 'Contract Kit', email },
      });
      return email;
    });
  }
  if (!kit.state.transactional) {
    const reason = kit.missing.transactional ?? 'no Transactional API credentials';
    for (const key of ['successId', 'freshId', 'cancelId', 'cancelledId', 'otp', 'otpBad', 'pay', 'payBad']) kit.miss(key, reason);
    return;
  }
  // First what waits on the clock, then the transactions whose OTPs must not expire.
  await make(kit, 'successId', async () => {
    const { id, downPayment } = await paying(kit, 't_success');
    await basicCall(kit, 'transactional', [200, `registering the down payment of ${id}`], 'POST', `${TRANSACTIONS}/${id}/payment/register-external`, {
      metaData: metaData(downPayment),
    });
    await waitFor<any>(kit, `transaction ${id} reaching SUCCESS`, async () => {
      const { transaction } = await stage(kit, id);
      if (transaction.status === 'SUCCESS') return transaction;
      if (transaction.status === 'FAILED') throw new Error(`transaction ${id} became FAILED (${transaction.failureReason}), not SUCCESS`);
      return undefined;
    });
    await basicCall(kit, 'transactional', [200, `refunding ${FIRST_REFUND_AMOUNT} of ${id}`], 'POST', `${TRANSACTIONS}/${id}/refund`, {
      refund: { id: kit.id('r0'), amount: FIRST_REFUND_AMOUNT },
    });
    return id;
  });
  await make(kit, 'freshId', () => createTransaction(kit, 't_fresh'));
  await make(kit, 'cancelId', () => createTransaction(kit, 't_cancel', { device: false }));
  await make(kit, 'cancelledId', async () => {
    const id = await createTransaction(kit, 't_cancelled');
    await basicCall(kit, 'transactional', [200, `cancelling ${id}`], 'GET', `${TRANSACTIONS}/${id}/cancel`);
    return id;
  });
  await make(kit, 'otp', () => authenticating(kit, 't_otp'));
  await make(kit, 'otpBad', () => authenticating(kit, 't_otp_bad'));
  await make(kit, 'pay', () => paying(kit, 't_pay'));
  await make(kit, 'payBad', () => paying(kit, 't_pay_bad'));
}

// ---------------------------------------------------------------------------------------------
// Plans

function pathTo(template: string, values: Record<string, string | undefined>): Edit {
  return (transaction) => edit.setPath(transaction, template, values);
}

/** The create-transaction body of the document's example, made valid now and unique to this run. */
function transactionBody(id: string): Edit {
  return editJson((value) => {
    value.transaction = { ...(value.transaction || {}), id, amount: TRANSACTION_AMOUNT };
    value.user = TEST_USER;
    // The example's check id and expiry cannot be valid on another server or at another time.
    delete value.preEligibilityCheckId;
    if (value.createConfiguration) {
      delete value.createConfiguration.expiryTimestamp;
      delete value.createConfiguration.webhookUrl;
      if (Object.keys(value.createConfiguration).length === 0) delete value.createConfiguration;
    }
  });
}

/** The body `{ refund }`, without anything else of the document's example. */
function refundBody(refund: Record<string, unknown>): Edit {
  return editJson((value) => {
    for (const key of Object.keys(value)) delete value[key];
    value.refund = refund;
  });
}

/**
 * The paths with ids: the setup state of what a request is aimed at, and its path parameter. A 401
 * goes to what the setup made (an unknown id when it is missing), a 404 to an unknown id, a GET's
 * 400 to an id that is too long.
 */
const TARGETS: Record<string, [key: string, parameter: string, unknown: string]> = {
  [MERCHANT]: ['merchantId', 'id', 'm_unknown'],
  [DOCUMENT]: ['pendingMerchantId', 'id', 'm_unknown'],
  [DISABLE]: ['disableMerchantId', 'id', 'm_unknown'],
  [DASHBOARD]: ['merchantId', 'id', 'm_unknown'],
  [TRANSACTION]: ['freshId', 'id', 't_unknown'],
  [USER_INPUT]: ['otpBad', 'transactionId', 't_unknown'],
  [REGISTER]: ['payBad', 'transactionId', 't_unknown'],
  [REFUND]: ['successId', 'transactionId', 't_unknown'],
  [CANCEL]: ['cancelId', 'transactionId', 't_unknown'],
};

/**
 * The path values of a request to `value` on a path of TARGETS: an id, or a transaction the setup
 * left in a step (`{ id, referenceId, ... }`); an id alone has UNKNOWN_REFERENCE as its reference.
 */
function pathValues(template: string, value: string | { id: string; referenceId: string }): Record<string, string> {
  const target = typeof value === 'string' ? { id: value, referenceId: UNKNOWN_REFERENCE } : value;
  return { [TARGETS[template]![1]]: target.id, referenceId: target.referenceId };
}

export function plan(kit: Kit, op: Operation): Plan {
  const status = Number(op.status);
  // Every BAD_REQUEST here is a schema violation (but the settlement range), every 413 too big.
  const expect = (code: string, ...edits: Edit[]): Plan => ({
    auth: 'valid',
    expectCode: code,
    invalid: code === 'BAD_REQUEST' || code === 'PAYLOAD_TOO_LARGE',
    edit: all(...edits),
  });
  const valid = (...edits: Edit[]): Plan => ({ auth: 'valid', edit: all(...edits) });
  const wrong = (...edits: Edit[]): Plan => ({ auth: 'wrong', expectCode: 'AUTHORIZATION_FAILED', edit: all(...edits) });
  const large = (...edits: Edit[]): Plan => expect('PAYLOAD_TOO_LARGE', ...edits, edit.padBodyOverLimit);
  const need = (key: string) => kit.need(key);
  /** The path to what the setup made (`key`). */
  const to = (template: string, key: string) => pathTo(template, pathValues(template, need(key)));
  /** The refund's 400 and 413 go to the transaction that reached SUCCESS, else to one that did not. */
  const refunded = () => pathTo(REFUND, { transactionId: kit.state.successId || need('freshId') });
  const query = (text: string): Edit => (transaction) => edit.setQuery(transaction, text);
  const email = (address: string) => editJson((value) => (value.dashboardUser.email = address));
  const otp = editJson((value) => (value.value = TEST_OTP));
  // Transaction operations need the merchant's credentials, except the 401s.
  if (status !== 401 && status !== 500 && schemeOf(kit, op) === 'transactionalApiBasic') need('transactional');
  const [made, , unknown] = TARGETS[op.path] ?? [];
  if (made && unknown && status === 401) return wrong(pathTo(op.path, pathValues(op.path, kit.state[made] || kit.id(unknown))));
  // An unknown transaction is NO_SUCH_TRANSACTION, an unknown merchant NOT_FOUND (D02).
  if (unknown && status === 404) {
    const code = op.path.startsWith('/api/merchant/transaction/') ? 'NO_SUCH_TRANSACTION' : 'NOT_FOUND';
    return expect(code, pathTo(op.path, pathValues(op.path, kit.id(unknown))));
  }
  if (unknown && status === 400 && op.method === 'GET') return expect('BAD_REQUEST', pathTo(op.path, pathValues(op.path, TOO_LONG_ID)));

  switch (`${op.method} ${op.path} ${status}`) {
    // --- Merchant API
    case `POST ${MERCHANTS} 201`:
      return valid(editJson((value) => (value.merchant.id = kit.id('m_new'))));
    case `POST ${MERCHANTS} 401`:
      return wrong(editJson((value) => (value.merchant.id = kit.id('m_unauthorized'))));
    case `POST ${MERCHANTS} 400`:
      // An id used before is a 400 like every duplicate (D250).
      return expect('DUPLICATE_ID', editJson((value) => (value.merchant.id = need('merchantId'))));
    case `POST ${MERCHANTS} 409`:
      return { skip: 'INVALID_STATE answers only a service that onboards no more merchants (the sandbox at 10,000 merchants)' };
    case `POST ${MERCHANTS} 413`:
      return large(editJson((value) => (value.merchant.id = kit.id('m_large'))));

    case `GET ${MERCHANT} 200`:
      return valid(to(MERCHANT, 'merchantId'));

    case `POST ${DOCUMENT} 200`:
      return valid(to(DOCUMENT, 'pendingMerchantId'));
    case `POST ${DOCUMENT} 400`:
      return expect('BAD_REQUEST', to(DOCUMENT, 'pendingMerchantId'), editJson((value) => delete value.documentType));
    case `POST ${DOCUMENT} 409`:
      return expect('INVALID_STATE', to(DOCUMENT, 'merchantId'));
    case `POST ${DOCUMENT} 413`:
      return large(to(DOCUMENT, 'pendingMerchantId'));

    case `POST ${DISABLE} 200`:
      return valid(to(DISABLE, 'disableMerchantId'));
    case `POST ${DISABLE} 400`:
      return expect('BAD_REQUEST', to(DISABLE, 'disableMerchantId'), editJson((value) => (value.reason = '')));
    case `POST ${DISABLE} 413`:
      return large(to(DISABLE, 'disableMerchantId'));

    case `POST ${DASHBOARD} 201`:
      return valid(to(DASHBOARD, 'merchantId'), email(`${kit.settings.runId}.new@contract-kit.example.in`));
    case `POST ${DASHBOARD} 409`:
      return { skip: 'INVALID_STATE answers only a disabled merchant, and the run disables its merchant in another test' };
    case `POST ${DASHBOARD} 400`:
      // An email that has access already is a 400 like every duplicate (D250).
      return expect(
        'DUPLICATE_ID',
        to(DASHBOARD, 'merchantId'),
        editJson((value) => (value.dashboardUser.email = need('takenEmail'))),
      );
    case `POST ${DASHBOARD} 413`:
      return large(to(DASHBOARD, 'merchantId'), email(`${kit.settings.runId}.large@contract-kit.example.in`));

    // --- Transactional API
    case `POST ${PRE_ELIGIBILITY} 200`:
      return valid(editJson((value) => (value.user = TEST_USER)));

    case `GET ${CONFIGURATION} 200`:
      return { auth: 'valid' };
    case `GET ${CONFIGURATION} 401`:
      return wrong();

    case `POST ${TRANSACTIONS} 200`:
      return valid(transactionBody(kit.id('t_new')));
    case `POST ${TRANSACTIONS} 400`:
      return expect('BAD_REQUEST', transactionBody(kit.id('t_invalid')), editJson((value) => delete value.user));
    case `POST ${TRANSACTIONS} 401`:
      return wrong(transactionBody(kit.id('t_unauthorized')));
    case `POST ${TRANSACTIONS} 413`:
      return large(transactionBody(kit.id('t_large')));

    case `GET ${TRANSACTIONS} 200`:
      return valid(query('limit=5'));
    case `GET ${TRANSACTIONS} 400`:
      return expect('BAD_REQUEST', query('limit=0'));
    case `GET ${TRANSACTIONS} 401`:
      return wrong(query('limit=5'));

    case `GET ${TRANSACTION} 200`:
      return valid(to(TRANSACTION, 'freshId'));

    case `POST ${USER_INPUT} 200`:
      return valid(to(USER_INPUT, 'otp'), otp);
    case `POST ${USER_INPUT} 400`:
      return expect('BAD_REQUEST', to(USER_INPUT, 'otpBad'), editJson((value) => delete value.value));
    case `POST ${USER_INPUT} 409`:
      return expect('INVALID_STATE', to(USER_INPUT, 'pay'), otp);
    case `POST ${USER_INPUT} 413`:
      return large(to(USER_INPUT, 'otpBad'), otp);

    case `POST ${REGISTER} 200`:
      return valid(to(REGISTER, 'pay'), editJson((value) => (value.metaData = metaData(need('pay').downPayment))));
    case `POST ${REGISTER} 400`:
      return expect('BAD_REQUEST', to(REGISTER, 'payBad'), editJson((value) => delete value.metaData));
    case `POST ${REGISTER} 409`:
      return expect('INVALID_STATE', to(REGISTER, 'freshId'));
    case `POST ${REGISTER} 413`:
      return large(to(REGISTER, 'payBad'), editJson((value) => (value.metaData = metaData(need('payBad').downPayment))));

    case `POST ${REFUND} 200`:
      // A new refund; the setup's refund `r0` was the first (a repeat of it answers 200 as well, D18).
      // Skipped when no transaction reached SUCCESS in time.
      if (kit.state.successIdTimeout) return { skip: `needs a transaction that reached SUCCESS: ${kit.state.successIdTimeout}` };
      return valid(to(REFUND, 'successId'), refundBody({ id: kit.id('r_new'), amount: NEW_REFUND_AMOUNT }));
    case `POST ${REFUND} 400`:
      return expect('BAD_REQUEST', refunded(), refundBody({ amount: 'not-a-number' }));
    case `POST ${REFUND} 413`:
      return large(refunded(), refundBody({ id: kit.id('r_large'), amount: NEW_REFUND_AMOUNT }));

    case `GET ${CANCEL} 200`:
      return valid(to(CANCEL, 'cancelId'));
    case `GET ${CANCEL} 409`:
      return expect('INVALID_STATE', to(CANCEL, 'cancelledId'));

    case `GET ${SETTLEMENT} 200`:
      return valid(query(''));
    case `GET ${SETTLEMENT} 400`:
      // `to` before `from` (D19).
      return { ...expect('BAD_REQUEST', query('from=2026-01-10&to=2026-01-01')), invalid: false };
    case `GET ${SETTLEMENT} 401`:
      return wrong(query(''));

    default:
      return genericPlan(kit, op, CODES);
  }
}
