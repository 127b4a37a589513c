/**
 * `paylater trigger <event>`: makes the sandbox produce a webhook event by playing a whole flow
 * through its real endpoints, with the package's typed clients (src/clients) for the contract's
 * operations and plain requests for the sandbox-only ones (user actions, the virtual clock, the
 * recorded deliveries):
 *
 * - sdk.*: initiate (signed SDK client), then the user's action `POST /sandbox/sdk/transactions/{id}/confirm|fail|cancel`;
 * - web.*: initiate (signed web client), then the hosted page's OTP and down payment
 *   (`/sandbox/web/transactions/{id}/otp`, `/pay`) for success, or `/fail`, `/cancel`;
 * - gateway.*: a merchant onboarded once (created, documents uploaded, the clock advanced past its
 *   verification), then a transaction through OTP, down payment and confirmation (clock +2 s), and
 *   for a refund a full refund confirmed 1 s (virtual) later; for a cancel, the merchant's cancel
 *   of the new transaction.
 *
 * Credentials: the sandbox's published test values (src/sandbox/config.ts) unless the environment
 * variables the sandbox itself reads, or the options, say otherwise. Secrets are never printed.
 */
import { randomBytes } from 'node:crypto';
import { createSdkClient } from '../clients/sdk.js';
import { createMerchantApiClient, createTransactionalApiClient, isStageResponse, transactionalCredentials, type GatewaySchemas } from '../clients/gateway.js';
import { createWebClient } from '../clients/web.js';
import type { BasicCredentials } from '../clients/transport.js';
import type { WebhookFamily } from '../contract/webhooks.js';
import { DEFAULT_CONFIG, ENVIRONMENT } from '../sandbox/config.js';
import { TEST_OTP as OTPS, TEST_USERS } from '../sandbox/fixtures.js';
import { CommandFailed } from './command-line.js';
import { readPrivateKey } from './input.js';
import { httpUrl, sandboxEndpoint, sandboxUrl, shownUrl } from './urls.js';

/** The families whose webhooks a trigger makes the sandbox send: every family with webhooks. */
export type TriggerFamily = WebhookFamily;

/** What the options say; `undefined`: the environment or the sandbox's default. */
export interface TriggerSettings {
  sandbox: string | undefined;
  partnerId: string | undefined;
  keyFile: string | undefined;
  /** The gateway merchant to use (onboarded first if needed). */
  merchant: string;
  merchantApiUsername: string | undefined;
  webhookUrl: string | undefined;
}

interface Context {
  /** The event's name, e.g. `sdk.success`. */
  event: string;
  command: string;
  base: URL;
  out(line: string): void;
  settings: TriggerSettings;
}

/** The sandbox's test OTP (docs/sandbox.md, "Test OTPs"). */
const TEST_OTP = OTPS.correct;
const REQUEST_TIMEOUT_MS = 10_000;
/** The gateway's verification delay and down payment confirmation delay, and a refund's (virtual time). */
const VERIFICATION_MS = 5_000;
const CONFIRMATION_MS = 2_000;
const REFUND_MS = 1_000;

const payer = (predicate: (user: (typeof TEST_USERS)[number]) => boolean) => {
  const found = TEST_USERS.find(predicate);
  if (found === undefined) throw new Error('no such sandbox test user');
  return found;
};
/** A test user eligible for the amounts used here, whose down payment is confirmed. */
const ELIGIBLE = () => payer((user) => user.creditLimit - user.creditTaken >= 500_000 && !user.riskDeclined && !user.blocked && user.downPaymentConfirmed);
/** A test user whose down payment is never confirmed (PAYMENT_NOT_CONFIRMED). */
const UNCONFIRMED = () => payer((user) => user.creditLimit - user.creditTaken >= 500_000 && !user.riskDeclined && !user.blocked && !user.downPaymentConfirmed);

const FLOWS: Record<string, (ctx: Context) => Promise<string>> = {
  'sdk.success': (ctx) => sdkFlow(ctx, 'confirm', 'SUCCESS'),
  'sdk.failure': (ctx) => sdkFlow(ctx, 'fail', 'FAILURE'),
  'sdk.cancelled': (ctx) => sdkFlow(ctx, 'cancel', 'CANCELLED'),
  'web.success': (ctx) => webFlow(ctx, 'pay', 'SUCCESS'),
  'web.failure': (ctx) => webFlow(ctx, 'fail', 'FAILURE'),
  'web.cancelled': (ctx) => webFlow(ctx, 'cancel', 'CANCELLED'),
  'gateway.transaction.success': (ctx) => gatewayFlow(ctx, 'success'),
  'gateway.transaction.failure': (ctx) => gatewayFlow(ctx, 'failure'),
  'gateway.transaction.cancelled': (ctx) => gatewayFlow(ctx, 'cancelled'),
  'gateway.refund': (ctx) => gatewayFlow(ctx, 'refund'),
};

/** Runs the flow of `event`, then prints the transaction and the events recorded for it. */
export async function trigger(
  event: string,
  settings: TriggerSettings,
  io: { command: string; out(line: string): void },
): Promise<number> {
  const flow = FLOWS[event];
  if (flow === undefined) throw new Error(`no flow for the event ${event}`);
  const base = sandboxUrl(settings.sandbox, io.command);
  if (settings.webhookUrl !== undefined) httpUrl(settings.webhookUrl, '--webhook-url', io.command, 'http://127.0.0.1:8080/webhook');
  const ctx: Context = { event, command: io.command, base, out: io.out, settings };
  const transactionId = await flow(ctx);
  const deliveries = await recordedDeliveries(ctx, transactionId);
  if (deliveries.length === 0) {
    ctx.out('  no webhook event is recorded for it yet (GET /sandbox/webhooks/deliveries)');
  }
  for (const delivery of deliveries) {
    const where =
      delivery.status === 'not_sent'
        ? 'not_sent: no webhook URL is configured; paylater listen forwards it'
        : delivery.event === 'transactionResult'
          ? `${delivery.status}: sent to notes.webhook_url with txnId and txnStatus`
          : `${delivery.status}: sent to the configured webhook URL`;
    ctx.out(`  event ${delivery.eventId}  ${delivery.family} ${delivery.event}  (${where})`);
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// The flows

function newId(family: string): string {
  return `trg_${family}_${randomBytes(6).toString('hex')}`;
}

async function partner(ctx: Context): Promise<{ partnerId: string; privateKey: string }> {
  const partnerId = ctx.settings.partnerId ?? fromEnv(ENVIRONMENT.partnerId) ?? DEFAULT_CONFIG.partner.id;
  const privateKey =
    ctx.settings.keyFile !== undefined
      ? await readPrivateKey(ctx.settings.keyFile)
      : (fromEnv(ENVIRONMENT.privateKey) ?? DEFAULT_CONFIG.partner.privateKey);
  return { partnerId, privateKey };
}

async function sdkFlow(ctx: Context, action: 'confirm' | 'fail' | 'cancel', status: string): Promise<string> {
  const client = createSdkClient({ baseUrl: baseOf(ctx), timeoutMs: REQUEST_TIMEOUT_MS, ...(await partner(ctx)) });
  const id = newId('sdk');
  const user = ELIGIBLE();
  const initiated = await call(ctx, 'initiate the SDK transaction', () =>
    client.POST('/merchant/credit/initiateTransaction', {
      body: { merchantTransactionId: id, userPhoneNumber: user.phoneNumber, userId: 'trigger_user', amount: 250_000 },
    }),
  );
  expectStatus(initiated, 201, 'initiate the SDK transaction', 'partner');
  await sandboxPost(ctx, `/sandbox/sdk/transactions/${id}/${action}`, undefined, `${action} the SDK transaction`);
  ctx.out(`Triggered ${ctx.event} on the sandbox at ${shownUrl(ctx.base)}`);
  ctx.out(`  SDK transaction ${id}: initiated, then the user's '${action}' -> ${status}`);
  return id;
}

async function webFlow(ctx: Context, action: 'pay' | 'fail' | 'cancel', status: string): Promise<string> {
  const client = createWebClient({ baseUrl: baseOf(ctx), timeoutMs: REQUEST_TIMEOUT_MS, ...(await partner(ctx)) });
  const id = newId('web');
  const user = ELIGIBLE();
  // With --webhook-url, the shop's per-transaction URL in notes.webhook_url.
  const notesUrl = ctx.settings.webhookUrl;
  const initiated = await call(ctx, 'initiate the web transaction', () =>
    client.POST('/api/transaction', {
      body: {
        id,
        amount: 150_000,
        user: { name: user.name, phoneNumber: user.phoneNumber },
        ...(notesUrl === undefined ? {} : { notes: { webhook_url: notesUrl } }),
      },
    }),
  );
  expectStatus(initiated, 200, 'initiate the web transaction', 'partner');
  let steps: string;
  if (action === 'pay') {
    await sandboxPost(ctx, `/sandbox/web/transactions/${id}/otp`, { otp: TEST_OTP }, 'submit the OTP on the hosted page');
    await sandboxPost(ctx, `/sandbox/web/transactions/${id}/pay`, { method: 'UPI' }, 'pay the down payment on the hosted page');
    steps = 'initiated, OTP and down payment on the hosted page';
  } else {
    await sandboxPost(ctx, `/sandbox/web/transactions/${id}/${action}`, undefined, `${action} the web transaction`);
    steps = `initiated, then the user's '${action}'`;
  }
  ctx.out(`Triggered ${ctx.event} on the sandbox at ${shownUrl(ctx.base)}`);
  ctx.out(`  web transaction ${id}: ${steps} -> ${status}`);
  return id;
}

type Merchant = GatewaySchemas['GatewayMerchant'];

async function gatewayFlow(ctx: Context, outcome: 'success' | 'failure' | 'cancelled' | 'refund'): Promise<string> {
  const merchantId = ctx.settings.merchant;
  const { merchant, onboarded } = await enabledMerchant(ctx, merchantId);
  const credentials = transactionalCredentials(merchant);
  if (credentials === undefined) throw failed(ctx, `the merchant ${merchantId} has no Transactional API credentials`);
  const client = createTransactionalApiClient({ baseUrl: baseOf(ctx), timeoutMs: REQUEST_TIMEOUT_MS, credentials });

  const id = newId('gw');
  const user = outcome === 'failure' ? UNCONFIRMED() : ELIGIBLE();
  const webhookUrl = ctx.settings.webhookUrl;
  const created = await call(ctx, 'create the gateway transaction', () =>
    client.POST('/api/merchant/transaction', {
      body: {
        transaction: { id, amount: 150_000 },
        user: { name: user.name, phoneNumber: user.phoneNumber },
        deviceInformation: { userAgent: 'paylater-cli trigger', ipAddress: '127.0.0.1' },
        ...(webhookUrl === undefined ? {} : { createConfiguration: { webhookUrl } }),
      },
    }),
  );
  expectStatus(created, 200, 'create the gateway transaction', 'transactional');
  const merchantLine = `  merchant ${merchantId}${onboarded ? ' (created and enabled now)' : ''}; its webhooks are signed with its Transactional API password`;

  if (outcome === 'cancelled') {
    // The merchant's cancel of a PENDING transaction, as the Magento module's cron sends it.
    const cancelled = await call(ctx, 'cancel the transaction', () =>
      client.GET('/api/merchant/transaction/{transactionId}/cancel', { params: { path: { transactionId: id } } }),
    );
    expectStatus(cancelled, 200, 'cancel the transaction', 'transactional');
    const status = cancelled.data?.transaction.status;
    if (status !== 'CANCELLED') throw failed(ctx, `the transaction ${id} is ${status ?? 'unknown'} after its cancel, not CANCELLED`);
    ctx.out(`Triggered ${ctx.event} on the sandbox at ${shownUrl(ctx.base)}`);
    ctx.out(merchantLine);
    ctx.out(`  gateway transaction ${id}: created, then cancelled by the merchant -> ${status} (${cancelled.data?.transaction.failureReason ?? '?'})`);
    return id;
  }

  const stage = await call(ctx, 'read the transaction stage', () =>
    client.GET('/api/merchant/transaction/{id}', {
      params: { path: { id }, query: { include: 'stage' } },
      headers: { Accept: 'application/json' },
    }),
  );
  expectStatus(stage, 200, 'read the transaction stage', 'transactional');
  const step = stage.data !== undefined && isStageResponse(stage.data) ? stage.data.transactionStage.nextStep : undefined;
  const options = step?.step === 'authenticate' ? step.options : undefined;
  const referenceId = options !== undefined && 'userInputOptions' in options ? options.userInputOptions[0]?.referenceId : undefined;
  if (referenceId === undefined) throw failed(ctx, `the new transaction ${id} is not waiting for an OTP (step ${step?.step ?? 'unknown'})`);

  const otp = await call(ctx, 'submit the OTP', () =>
    client.POST('/api/merchant/transaction/{transactionId}/user-inputs/{referenceId}', {
      params: { path: { transactionId: id, referenceId } },
      body: { value: TEST_OTP },
    }),
  );
  expectStatus(otp, 200, 'submit the OTP', 'transactional');
  const payment = otp.data?.transactionStage.nextStep;
  const paymentOptions = payment?.step === 'payment' ? payment.options : undefined;
  const amount =
    paymentOptions !== undefined && 'paymentOptions' in paymentOptions
      ? (paymentOptions as GatewaySchemas['GatewayPaymentOptions']).paymentOptions.amount
      : undefined;
  if (amount === undefined) throw failed(ctx, `after the OTP, the transaction ${id} does not ask for a down payment`);

  const registered = await call(ctx, 'register the down payment', () =>
    client.POST('/api/merchant/transaction/{transactionId}/payment/register-external', {
      params: { path: { transactionId: id } },
      body: { metaData: { paymentMode: 'UPI', pgPaymentId: `pay_${id}`, amount } },
    }),
  );
  expectStatus(registered, 200, 'register the down payment', 'transactional');
  await advanceClock(ctx, CONFIRMATION_MS);
  const status = await transactionStatus(ctx, client, id);
  const expected = outcome === 'failure' ? 'FAILED' : 'SUCCESS';
  if (status !== expected) throw failed(ctx, `the transaction ${id} is ${status} after the down payment, not ${expected}`);

  const lines = [
    merchantLine,
    `  gateway transaction ${id}: created, OTP, down payment of ${amount} paise${outcome === 'failure' ? ' never confirmed' : ' confirmed'} -> ${status}`,
  ];
  if (outcome === 'refund') {
    const refund = await call(ctx, 'refund the transaction', () =>
      client.POST('/api/merchant/transaction/{transactionId}/refund', { params: { path: { transactionId: id } }, body: { refund: {} } }),
    );
    expectStatus(refund, 200, 'refund the transaction', 'transactional');
    await advanceClock(ctx, REFUND_MS);
    const refunds = await transactionRecord(ctx, client, id);
    const done = refunds.refunds.find((item) => item.id === refund.data?.refund.id);
    lines.push(`  refund ${refund.data?.refund.id ?? '?'} of ${refund.data?.refund.amount ?? '?'} paise -> ${done?.status ?? 'unknown'}`);
  }
  ctx.out(`Triggered ${ctx.event} on the sandbox at ${shownUrl(ctx.base)}`);
  for (const line of lines) ctx.out(line);
  return id;
}

/** The merchant, enabled: created, documents uploaded and the clock advanced as needed. */
async function enabledMerchant(ctx: Context, id: string): Promise<{ merchant: Merchant; onboarded: boolean }> {
  const credentials: BasicCredentials = {
    username: ctx.settings.merchantApiUsername ?? fromEnv(ENVIRONMENT.merchantApiUsername) ?? DEFAULT_CONFIG.merchantApi.username,
    password: fromEnv(ENVIRONMENT.merchantApiPassword) ?? DEFAULT_CONFIG.merchantApi.password,
  };
  const client = createMerchantApiClient({ baseUrl: baseOf(ctx), timeoutMs: REQUEST_TIMEOUT_MS, credentials });
  const read = async (): Promise<Merchant | undefined> => {
    const answer = await call(ctx, `read the merchant ${id}`, () => client.GET('/api/merchant/{id}', { params: { path: { id } } }));
    if (answer.response.status === 404) return undefined;
    expectStatus(answer, 200, `read the merchant ${id}`, 'merchantApi');
    return answer.data?.merchant;
  };

  let merchant = await read();
  let onboarded = false;
  if (merchant === undefined) {
    const created = await call(ctx, `create the merchant ${id}`, () =>
      client.POST('/api/merchant', {
        body: {
          merchant: {
            id,
            brandName: 'Trigger Test Shop',
            entityName: 'Trigger Test Shop Private Limited',
            brandHomePageUrl: 'https://shop.example.in',
            mccCode: 5411,
          },
        },
      }),
    );
    // Another trigger may have created it in the meantime: an id used before is 400 DUPLICATE_ID.
    const taken = created.response.status === 400 && created.error?.errorCode === 'DUPLICATE_ID';
    if (!taken) expectStatus(created, 201, `create the merchant ${id}`, 'merchantApi');
    merchant = await read();
    onboarded = true;
  }
  for (let round = 0; round < 5 && merchant !== undefined; round++) {
    switch (merchant.stage) {
      case 'enabled':
        return { merchant, onboarded };
      case 'disabled':
        throw failed(ctx, `the merchant ${id} is disabled; choose another with --merchant ID`);
      case 'documentsPending': {
        const done = new Set(merchant.documents.filter((doc) => doc.status !== 'rejected').map((doc) => doc.documentType));
        for (const documentType of merchant.requiredDocumentTypes.filter((type) => !done.has(type))) {
          const uploaded = await call(ctx, `upload the ${documentType} document`, () =>
            client.POST('/api/merchant/{id}/document', {
              params: { path: { id } },
              body: { documentType, document: { type: 'base64', value: SAMPLE_PDF } },
            }),
          );
          expectStatus(uploaded, 200, `upload the ${documentType} document`, 'merchantApi');
        }
        onboarded = true;
        break;
      }
      default:
        // verificationInProgress: the sandbox verifies 5 s (virtual) after the last document.
        await advanceClock(ctx, VERIFICATION_MS);
        break;
    }
    merchant = await read();
  }
  throw failed(ctx, `the merchant ${id} did not become enabled (stage ${merchant?.stage ?? 'unknown'})`);
}

/** A minimal PDF, recognised by its first bytes. */
const SAMPLE_PDF = Buffer.from('%PDF-1.4\n1 0 obj\n<</Type/Catalog>>\nendobj\n%%EOF\n').toString('base64');

type TransactionalClient = ReturnType<typeof createTransactionalApiClient>;

async function transactionRecord(ctx: Context, client: TransactionalClient, id: string): Promise<GatewaySchemas['GatewayTransaction']> {
  const read = await call(ctx, 'read the transaction', () => client.GET('/api/merchant/transaction/{id}', { params: { path: { id } } }));
  expectStatus(read, 200, 'read the transaction', 'transactional');
  const data = read.data;
  if (data === undefined || isStageResponse(data)) throw failed(ctx, 'the transaction read answered an unexpected body');
  return data.transaction;
}

async function transactionStatus(ctx: Context, client: TransactionalClient, id: string): Promise<string> {
  return (await transactionRecord(ctx, client, id)).status;
}

// ---------------------------------------------------------------------------------------------
// Requests

function baseOf(ctx: Context): string {
  return ctx.base.href.replace(/\/+$/, '');
}

function fromEnv(name: string): string | undefined {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : value;
}

function failed(ctx: Context, message: string): CommandFailed {
  return new CommandFailed(`${ctx.event}: ${message}`);
}

/** Runs a client call; a network failure becomes a clear message. */
async function call<T>(ctx: Context, what: string, request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    throw failed(ctx, `cannot ${what}: the sandbox at ${shownUrl(ctx.base)} did not answer (${networkError(error)}); is it running? Start it with 'paylater sandbox', or give its URL with --sandbox`);
  }
}

const CREDENTIAL_HINTS = {
  partner: `is ${ENVIRONMENT.privateKey} (or --key-file) the sandbox's private key, and --partner-id its partner id?`,
  merchantApi: `are ${ENVIRONMENT.merchantApiUsername} and ${ENVIRONMENT.merchantApiPassword} the sandbox's Merchant API credentials?`,
  transactional: 'the merchant may have been disabled; choose another with --merchant ID',
} as const;

/** Fails with the sandbox's own error when the answer is not `status`. */
function expectStatus(
  answer: { response: Response; error?: unknown },
  status: number,
  what: string,
  credentials: keyof typeof CREDENTIAL_HINTS,
): void {
  if (answer.response.status === status) return;
  const problem = describeProblem(answer.error);
  const hint = answer.response.status === 401 ? `; ${CREDENTIAL_HINTS[credentials]}` : '';
  throw new CommandFailed(`cannot ${what}: the sandbox answered HTTP ${answer.response.status}${problem}${hint}`);
}

/** The two error formats (`{errorCode, message}` and `{message, detail}`), in one line. */
function describeProblem(body: unknown): string {
  if (body === null || typeof body !== 'object') return '';
  const error = body as { errorCode?: unknown; message?: unknown; detail?: unknown };
  const parts = [error.errorCode, error.message, error.detail].filter((part): part is string => typeof part === 'string');
  return parts.length === 0 ? '' : ` ${parts.join(': ')}`;
}

/** POST to a sandbox-only endpoint (no typed client: not part of the contract). */
async function sandboxPost(ctx: Context, path: string, body: unknown, what: string): Promise<unknown> {
  const answer = await call(ctx, what, () =>
    fetch(sandboxEndpoint(ctx.base, path), {
      method: 'POST',
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    }),
  );
  const text = await answer.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (answer.status !== 200) {
    throw new CommandFailed(`cannot ${what}: the sandbox answered HTTP ${answer.status}${describeProblem(parsed)}`);
  }
  return parsed;
}

async function advanceClock(ctx: Context, ms: number): Promise<void> {
  await sandboxPost(ctx, '/sandbox/clock/advance', { ms }, `advance the sandbox's clock by ${ms} ms`);
}

interface RecordedDelivery {
  eventId: string;
  family: string;
  event: string;
  status: string;
}

async function recordedDeliveries(ctx: Context, transactionId: string): Promise<RecordedDelivery[]> {
  const url = sandboxEndpoint(ctx.base, '/sandbox/webhooks/deliveries');
  url.searchParams.set('transactionId', transactionId);
  const answer = await call(ctx, 'read the recorded webhook events', () => fetch(url, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }));
  if (answer.status !== 200) return [];
  const body = (await answer.json().catch(() => undefined)) as { deliveries?: unknown } | undefined;
  if (!Array.isArray(body?.deliveries)) return [];
  return body.deliveries.filter(
    (item): item is RecordedDelivery =>
      item !== null && typeof item === 'object' && typeof (item as RecordedDelivery).eventId === 'string',
  );
}

function networkError(error: unknown): string {
  if (error instanceof Error) {
    if (error.name === 'TimeoutError' || error.name === 'RequestTimeoutError') return `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`;
    const cause = (error as { cause?: unknown }).cause;
    const code = cause instanceof Error ? (cause as { code?: unknown }).code : undefined;
    if (typeof code === 'string') return code;
    return error.name;
  }
  return 'a network error';
}
