/**
 * Helpers of the gateway sandbox tests: calls with the two kinds of Basic credentials, each answer
 * of a contract operation validated against the bundled gateway document (generated/openapi/
 * gateway.json) for its status; onboarding a merchant to `enabled`; driving a transaction to SUCCESS;
 * and checking received webhooks against the document's webhook operations and their signature.
 */
import { expect } from 'vitest';
import { verifySdkSignature } from '../../src/signature.js';
import type { SandboxOptions } from '../../src/sandbox/server.js';
import { APPROVED_TEST_USER, TEST_CREDENTIALS, TEST_OTP } from '../../src/sandbox/fixtures.js';
import { loadContract, validateRequest, validateResponse, type Contract } from '../../src/sandbox/validation.js';
import { matchOperation } from './contract-paths.js';
import { startSandbox, waitFor, type Answer, type ReceivedWebhook, type TestSandbox } from './sandbox.js';

export const MERCHANT_AUTH = basic(TEST_CREDENTIALS.merchantApi.username, TEST_CREDENTIALS.merchantApi.password);

/** Sample files, recognised by their first bytes (D08). */
export const FILES = {
  pdf: Buffer.from('%PDF-1.4\n1 0 obj\n<</Type/Catalog>>\nendobj\n%%EOF\n').toString('base64'),
  png: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  jpeg: Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]).toString('base64'),
  text: Buffer.from('just some text, not a document').toString('base64'),
};

export const DEVICE = { userAgent: 'Mozilla/5.0 (sandbox test)', ipAddress: '203.0.113.24' };
export const ELIGIBLE = APPROVED_TEST_USER.phoneNumber;

export function basic(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

let contract: Promise<Contract> | undefined;
export function gatewayContract(): Promise<Contract> {
  contract ??= loadContract('gateway');
  return contract;
}

/** Validates an answer of a gateway operation against its documented response; returns the operationId. */
async function checkGatewayAnswer(method: string, pathAndQuery: string, answer: Pick<Answer, 'status' | 'body' | 'text' | 'headers'>): Promise<string | undefined> {
  const pathname = pathAndQuery.split('?', 1)[0] ?? '/';
  const operation = matchOperation(await gatewayContract(), method, pathname)?.operation;
  if (operation === undefined) return undefined;
  const result = validateResponse(operation, answer.status, answer.body, answer.headers.get('content-type') ?? '');
  expect(result.documented, `${operation.operationId} answered ${answer.status}, which the contract does not list`).toBe(true);
  expect(result.issues, `${operation.operationId} ${answer.status} body ${answer.text} violates the contract`).toEqual([]);
  return operation.operationId;
}

/** Validates a received webhook against the document's webhook operation and checks its signature. */
export async function checkWebhook(
  received: ReceivedWebhook,
  event: 'notifyTransactionUpdated' | 'notifyRefundUpdated',
  password: string,
): Promise<any> {
  const operation = (await gatewayContract()).operation(event);
  const body = JSON.parse(received.body) as unknown;
  const validation = validateRequest(operation, { params: {}, query: {}, headers: received.headers, body });
  expect(validation.ok ? [] : validation.issues, `${event} body ${received.body}`).toEqual([]);
  expect(verifySdkSignature(received.headers['x-signature'], received.body, password), 'X-Signature verifies with the password').toBe(true);
  expect(received.headers['x-event-id']).toMatch(/^evt_/);
  return body;
}

export interface Credentials {
  username: string;
  password: string;
  auth: string;
}

interface OnboardOptions {
  id?: string;
  entityName?: string;
  defaultWebhookUrl?: string;
  settlementDetails?: { accountNumber: string; ifscCode: string; beneficiaryName: string; mdrChargedOnMerchant: boolean };
}

export interface GatewayTest extends TestSandbox {
  /** A gateway call; the answer is validated against the contract when the path is an operation's. */
  call(method: string, pathAndQuery: string, auth: string | null, body?: unknown, headers?: Record<string, string>): Promise<Answer>;
  /** Merchant API call. */
  merchantApi(method: string, pathAndQuery: string, body?: unknown): Promise<Answer>;
  /** A new unique id with a prefix. */
  id(prefix: string): string;
  createMerchant(options?: OnboardOptions): Promise<{ id: string; answer: Answer }>;
  upload(merchantId: string, documentType: string, value?: string): Promise<Answer>;
  /** Create, upload PAN and CANCELLED_CHEQUE, move the clock 5 s: an enabled merchant and its credentials. */
  onboard(options?: OnboardOptions): Promise<{ id: string; credentials: Credentials; merchant: any }>;
  check(auth: string, phoneNumber: string, amount: number): Promise<any>;
  createTransaction(auth: string, input: CreateInput): Promise<Answer>;
  stage(auth: string, id: string): Promise<any>;
  transaction(auth: string, id: string): Promise<any>;
  /** authenticate → payment → wait (does not move the clock). Returns the wait stage. */
  payDownPayment(auth: string, id: string): Promise<any>;
  /** Through every step to SUCCESS (moves the clock 2 s). */
  complete(auth: string, id: string): Promise<any>;
  /** A SUCCESS transaction of `amount`, made without a check. */
  successful(auth: string, amount?: number, phoneNumber?: string): Promise<string>;
}

interface CreateInput {
  id: string;
  amount: number;
  phoneNumber?: string;
  checkId?: string;
  webhookUrl?: string;
  expiryTimestamp?: number;
  notes?: Record<string, unknown>;
  /** Send deviceInformation (default true; optional since 2.0.0, D14). */
  device?: boolean;
  mode?: 'LIVE' | 'TEST';
}

let sequence = 0;

export async function startGateway(options: SandboxOptions = {}): Promise<GatewayTest> {
  const t = await startSandbox(options);
  const id = (prefix: string) => `${prefix}_${Date.now().toString(36)}_${sequence++}`;

  const call: GatewayTest['call'] = async (method, pathAndQuery, auth, body, headers = {}) => {
    const allHeaders: Record<string, string> = { ...headers };
    if (auth !== null) allHeaders.Authorization = auth;
    if (body !== undefined && allHeaders['Content-Type'] === undefined) allHeaders['Content-Type'] = 'application/json';
    const answer = await t.request(method, pathAndQuery, {
      headers: allHeaders,
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    // t.request validated the answer already when the shared self-check knows the gateway document.
    const operationId = answer.operationId ?? (await checkGatewayAnswer(method, pathAndQuery, answer));
    return { ...answer, operationId };
  };
  const merchantApi: GatewayTest['merchantApi'] = (method, path, body) => call(method, path, MERCHANT_AUTH, body);

  const createMerchant: GatewayTest['createMerchant'] = async (options = {}) => {
    const merchantId = options.id ?? id('m');
    const answer = await merchantApi('POST', '/api/merchant', {
      merchant: {
        id: merchantId,
        brandName: 'Acme Retail',
        entityName: options.entityName ?? 'Acme Retail Private Limited',
        brandHomePageUrl: 'https://acme.example.in',
        mccCode: 5411,
        ...(options.defaultWebhookUrl === undefined ? {} : { defaultWebhookUrl: options.defaultWebhookUrl }),
        ...(options.settlementDetails === undefined ? {} : { settlementDetails: options.settlementDetails }),
      },
    });
    return { id: merchantId, answer };
  };

  const upload: GatewayTest['upload'] = (merchantId, documentType, value = FILES.pdf) =>
    merchantApi('POST', `/api/merchant/${merchantId}/document`, { documentType, document: { type: 'base64', value } });

  const onboard: GatewayTest['onboard'] = async (options = {}) => {
    const { id: merchantId, answer } = await createMerchant(options);
    expect(answer.status, answer.text).toBe(201);
    expect((await upload(merchantId, 'PAN')).status).toBe(200);
    const uploaded = await upload(merchantId, 'CANCELLED_CHEQUE', FILES.png);
    expect(uploaded.body.merchant.stage).toBe('verificationInProgress');
    await t.advance(5_000);
    const read = await merchantApi('GET', `/api/merchant/${merchantId}`);
    expect(read.body.merchant.stage, read.text).toBe('enabled');
    const { username, password } = read.body.merchant.basicAuthDetails;
    return { id: merchantId, credentials: { username, password, auth: basic(username, password) }, merchant: read.body.merchant };
  };

  const check: GatewayTest['check'] = async (auth, phoneNumber, amount) => {
    const answer = await call('POST', '/api/merchant/transaction/pre-eligibility', auth, {
      user: { name: 'Test User', phoneNumber },
      transaction: { amount },
      deviceInformation: DEVICE,
    });
    expect(answer.status, answer.text).toBe(200);
    return answer.body.preEligibilityCheck;
  };

  const createTransaction: GatewayTest['createTransaction'] = (auth, input) => {
    const createConfiguration: Record<string, unknown> = {};
    if (input.webhookUrl !== undefined) createConfiguration.webhookUrl = input.webhookUrl;
    if (input.expiryTimestamp !== undefined) createConfiguration.expiryTimestamp = input.expiryTimestamp;
    return call('POST', '/api/merchant/transaction', auth, {
      transaction: {
        id: input.id,
        amount: input.amount,
        ...(input.notes === undefined ? {} : { notes: input.notes }),
        ...(input.mode === undefined ? {} : { mode: input.mode }),
      },
      user: { name: 'Asha Rao', phoneNumber: input.phoneNumber ?? ELIGIBLE },
      ...(input.device === false ? {} : { deviceInformation: DEVICE }),
      ...(input.checkId === undefined ? {} : { preEligibilityCheckId: input.checkId }),
      ...(Object.keys(createConfiguration).length === 0 ? {} : { createConfiguration }),
    });
  };

  const stage: GatewayTest['stage'] = async (auth, transactionId) => {
    const answer = await call('GET', `/api/merchant/transaction/${transactionId}?include=stage`, auth, undefined, { Accept: 'application/json' });
    expect(answer.status, answer.text).toBe(200);
    return answer.body;
  };

  const transaction: GatewayTest['transaction'] = async (auth, transactionId) => {
    const answer = await call('GET', `/api/merchant/transaction/${transactionId}`, auth);
    expect(answer.status, answer.text).toBe(200);
    return answer.body.transaction;
  };

  const payDownPayment: GatewayTest['payDownPayment'] = async (auth, transactionId) => {
    const authenticate = await stage(auth, transactionId);
    expect(authenticate.transactionStage.nextStep.step).toBe('authenticate');
    const { referenceId } = authenticate.transactionStage.nextStep.options.userInputOptions[0];
    const otp = await call('POST', `/api/merchant/transaction/${transactionId}/user-inputs/${referenceId}`, auth, { value: TEST_OTP.correct });
    expect(otp.status, otp.text).toBe(200);
    const { amount } = otp.body.transactionStage.nextStep.options.paymentOptions;
    const registered = await call('POST', `/api/merchant/transaction/${transactionId}/payment/register-external`, auth, {
      metaData: { paymentMode: 'UPI', pgPaymentId: `pay_${transactionId}`, amount, vpa: 'asha@upi' },
    });
    expect(registered.status, registered.text).toBe(200);
    return registered.body;
  };

  const complete: GatewayTest['complete'] = async (auth, transactionId) => {
    await payDownPayment(auth, transactionId);
    await t.advance(2_000);
    return transaction(auth, transactionId);
  };

  const successful: GatewayTest['successful'] = async (auth, amount = 100_000, phoneNumber = ELIGIBLE) => {
    const transactionId = id('txn');
    const created = await createTransaction(auth, { id: transactionId, amount, phoneNumber });
    expect(created.status, created.text).toBe(200);
    const done = await complete(auth, transactionId);
    expect(done.status).toBe('SUCCESS');
    return transactionId;
  };

  return {
    ...t,
    call,
    merchantApi,
    id,
    createMerchant,
    upload,
    onboard,
    check,
    createTransaction,
    stage,
    transaction,
    payDownPayment,
    complete,
    successful,
  };
}

/** Waits until `receiver` has received `count` requests. */
export function received(receiver: { received: ReceivedWebhook[] }, count: number, timeoutMs = 5_000): Promise<ReceivedWebhook[]> {
  return waitFor(() => (receiver.received.length >= count ? receiver.received : undefined), timeoutMs);
}
