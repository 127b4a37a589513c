/**
 * The two targets the flows run against:
 *
 * - the in-process sandbox (src/sandbox) on a free port, whose sandbox-only endpoints play the
 *   people and systems around the integration: the payment gateway onboarding the merchant with
 *   the Merchant API (the published test credentials), the shopper on the hosted page (its OTP and
 *   payment endpoints for the web flow; for the gateway, the steps the contract documents:
 *   user-inputs with OTP 123456 and register-external), and time (the virtual clock);
 * - the Prism mock (scripts/mock-servers.ts) of the web and gateway documents, on free ports.
 *
 * Everything here is plain `fetch`: none of it is the integration, which only ever speaks through
 * the replayer's raw requests.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { startMocks } from '../../scripts/mock-servers.js';
import { createSandbox } from '../../src/sandbox/server.js';
import type { Logger } from '../../src/sandbox/router.js';
import { freePorts } from '../support/processes.js';
import { startShopReceiver } from '../support/shop-receiver.js';
import { WEBHOOKS } from './integrations.js';
import { render, runFlow, type FlowReport, type Target, type Values } from './replayer.js';
import type { Flow, ServiceAction, WebhookSpec } from './model.js';

/** The sandbox's published Merchant API credentials (README, docs/sandbox.md). */
const MERCHANT_API = `Basic ${Buffer.from('pg_test:pg_test_secret').toString('base64')}`;
/** The sandbox's test OTP. */
const TEST_OTP = '123456';
/** A one-page PDF and a 1x1 PNG: the documents verification needs (PAN, cancelled cheque). */
const PDF = Buffer.from('%PDF-1.4\n1 0 obj\n<</Type/Catalog>>\nendobj\n%%EOF\n').toString('base64');
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

export interface RunningTarget {
  target: Target;
  /** Errors the sandbox logged (an exception inside it shows here). */
  loggedErrors: string[];
  close(): Promise<void>;
}

interface JsonAnswer {
  status: number;
  body: any;
  text: string;
}

async function json(url: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<JsonAnswer> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(url, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers,
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    redirect: 'manual',
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, body, text };
}

/** Throws unless the answer has the status: a step of the service's side did not go as documented. */
function expectStatus(what: string, answer: JsonAnswer, status: number): void {
  if (answer.status !== status) throw new Error(`${what}: expected ${status}, got ${answer.status} ${answer.text.slice(0, 300)}`);
}

async function startSandboxTarget(options: { partnerWebhookUrl?: string } = {}): Promise<RunningTarget> {
  const loggedErrors: string[] = [];
  const logger: Logger = {
    info: () => undefined,
    warn: () => undefined,
    error: (message, error) => loggedErrors.push(`${message}: ${error instanceof Error ? error.stack : String(error)}`),
  };
  const sandbox = await createSandbox({
    logger,
    ...(options.partnerWebhookUrl === undefined ? {} : { config: { partner: { webhookUrl: options.partnerWebhookUrl } } }),
  });
  const url = await sandbox.listen(0, '127.0.0.1');

  const advance = async (ms: number) => expectStatus('advance the clock', await json(`${url}/sandbox/clock/advance`, { body: { ms } }), 200);

  const onboard = async (): Promise<Values> => {
    const id = `compat_${randomBytes(4).toString('hex')}`;
    const created = await json(`${url}/api/merchant`, {
      headers: { Authorization: MERCHANT_API },
      body: {
        merchant: {
          id,
          brandName: 'Asha Textiles',
          entityName: 'Asha Textiles Private Limited',
          brandHomePageUrl: 'https://asha-textiles.example.in',
          mccCode: 5651,
        },
      },
    });
    expectStatus('the payment gateway creates the merchant (POST /api/merchant)', created, 201);
    for (const [documentType, value] of [
      ['PAN', PDF],
      ['CANCELLED_CHEQUE', PNG],
    ] as const) {
      const uploaded = await json(`${url}/api/merchant/${id}/document`, {
        headers: { Authorization: MERCHANT_API },
        body: { documentType, document: { type: 'base64', value } },
      });
      expectStatus(`the payment gateway uploads ${documentType}`, uploaded, 200);
    }
    await advance(5_000);
    const read = await json(`${url}/api/merchant/${id}`, { headers: { Authorization: MERCHANT_API } });
    expectStatus('the payment gateway reads the merchant', read, 200);
    const details = read.body?.merchant?.basicAuthDetails;
    if (read.body?.merchant?.stage !== 'enabled' || typeof details?.username !== 'string' || typeof details?.password !== 'string') {
      throw new Error(`the merchant is not enabled with Transactional credentials after verification: ${read.text.slice(0, 300)}`);
    }
    // The merchant enters them in the plugin's "Merchant Partner ID" and "Merchant Private Key" (decision G10).
    return { partnerId: details.username, privateKey: details.password, merchantId: id };
  };

  /** The id of a web transaction from its hosted page's address, /checkout/<id>. */
  const webPage = async (page: string): Promise<string> => {
    const opened = await fetch(page, { redirect: 'manual' });
    await opened.body?.cancel();
    if (opened.status !== 200) throw new Error(`the shopper opens the hosted page ${page}: got ${opened.status}`);
    const segment = new URL(page).pathname.split('/').filter(Boolean).pop() ?? '';
    return decodeURIComponent(segment);
  };

  const redirectOf = (what: string, answer: JsonAnswer): Values => {
    const target = answer.body?.redirectTo;
    if (typeof target !== 'string') throw new Error(`${what}: the page does not say where it sends the shopper: ${answer.text.slice(0, 300)}`);
    return { returnUrl: target };
  };

  const service = async (action: ServiceAction, values: Values): Promise<Values> => {
    switch (action.action) {
      case 'onboard-merchant':
        return onboard();
      case 'user-pays-web': {
        const id = await webPage(render(action.page, values));
        const base = `${url}/sandbox/web/transactions/${encodeURIComponent(id)}`;
        const otp = await json(`${base}/otp`, { body: { otp: TEST_OTP } });
        expectStatus('the shopper enters the OTP on the hosted page', otp, 200);
        if (otp.body?.result !== 'VERIFIED') throw new Error(`the hosted page does not accept the test OTP: ${otp.text}`);
        const paid = await json(`${base}/pay`, { body: { method: 'UPI' } });
        expectStatus('the shopper pays the down payment on the hosted page', paid, 200);
        return redirectOf('the hosted page after the payment', paid);
      }
      case 'user-cancels-web': {
        const id = await webPage(render(action.page, values));
        const cancelled = await json(`${url}/sandbox/web/transactions/${encodeURIComponent(id)}/cancel`, { body: {} });
        expectStatus('the shopper cancels on the hosted page', cancelled, 200);
        return redirectOf('the hosted page after the cancellation', cancelled);
      }
      case 'user-cancels-gateway': {
        const page = render(action.page, values);
        const cancelled = await json(`${page}/cancel`, { body: {} });
        expectStatus('the shopper cancels on the hosted page', cancelled, 200);
        return redirectOf('the hosted page after the cancellation', cancelled);
      }
      case 'time-passes':
        await advance(action.minutes * 60_000);
        return {};
      case 'user-fails-gateway': {
        const id = render(action.transactionId, values);
        const auth = `Basic ${Buffer.from(`${String(values.partnerId)}:${String(values.privateKey)}`).toString('base64')}`;
        const transaction = `${url}/api/merchant/transaction/${encodeURIComponent(id)}`;
        for (let attempt = 1; attempt <= 3; attempt++) {
          const stage = await json(`${transaction}?include=stage`, { headers: { Authorization: auth } });
          expectStatus('the stage of the transaction (include=stage)', stage, 200);
          const referenceId = stage.body?.transactionStage?.nextStep?.options?.userInputOptions?.[0]?.referenceId;
          if (typeof referenceId !== 'string') throw new Error(`the transaction does not wait for an OTP: ${stage.text.slice(0, 300)}`);
          const wrong = await json(`${transaction}/user-inputs/${encodeURIComponent(referenceId)}`, { headers: { Authorization: auth }, body: { value: '999999' } });
          expectStatus(`the shopper's wrong OTP number ${attempt}`, wrong, 400);
        }
        return {};
      }
      case 'user-pays-gateway': {
        const page = render(action.page, values);
        const id = render(action.transactionId, values);
        const auth = `Basic ${Buffer.from(`${String(values.partnerId)}:${String(values.privateKey)}`).toString('base64')}`;
        const opened = await json(page);
        expectStatus(`the shopper opens the hosted page ${page}`, opened, 200);
        const transaction = `${url}/api/merchant/transaction/${encodeURIComponent(id)}`;
        const stage = await json(`${transaction}?include=stage`, { headers: { Authorization: auth } });
        expectStatus('the stage of the transaction (include=stage)', stage, 200);
        const referenceId = stage.body?.transactionStage?.nextStep?.options?.userInputOptions?.[0]?.referenceId;
        if (typeof referenceId !== 'string') throw new Error(`the transaction does not wait for an OTP: ${stage.text.slice(0, 300)}`);
        const otp = await json(`${transaction}/user-inputs/${encodeURIComponent(referenceId)}`, { headers: { Authorization: auth }, body: { value: TEST_OTP } });
        expectStatus('the shopper\'s OTP (user-inputs)', otp, 200);
        const amount = otp.body?.transactionStage?.nextStep?.options?.paymentOptions?.amount;
        if (typeof amount !== 'number') throw new Error(`no down payment is asked for after the OTP: ${otp.text.slice(0, 300)}`);
        const paid = await json(`${transaction}/payment/register-external`, {
          headers: { Authorization: auth },
          body: { metaData: { paymentMode: 'UPI', pgPaymentId: `pay_${id}`, amount, vpa: 'asha@upi' } },
        });
        expectStatus('the down payment (register-external)', paid, 200);
        await advance(2_000);
        const after = await json(page);
        expectStatus(`the hosted page ${page} after the payment`, after, 200);
        return redirectOf('the hosted page after the payment', after);
      }
    }
  };

  const delivery: NonNullable<Target['delivery']> = async (eventId) => {
    const deadline = Date.now() + 5_000;
    for (;;) {
      const answer = await json(`${url}/sandbox/webhooks/deliveries`);
      expectStatus('the delivery records', answer, 200);
      const found = (answer.body?.deliveries as any[] | undefined)?.find((candidate) => candidate.eventId === eventId);
      // Once the first attempt is recorded the record says whether it counted (delivered) or waits to retry.
      if (found !== undefined && found.attempts.length > 0) return found;
      if (Date.now() > deadline) throw new Error(`no delivery record with event id ${eventId}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  return {
    target: { name: 'sandbox', stateful: true, hosts: { web: url, gateway: url, sdk: url }, service, delivery },
    loggedErrors,
    close: () => sandbox.close(),
  };
}

export async function startMockTarget(): Promise<RunningTarget> {
  const mocks = await startMocks({ families: ['web', 'gateway'], ports: await freePorts(['web', 'gateway'] as const) });
  const { web, gateway } = mocks.urls;
  if (web === undefined || gateway === undefined) throw new Error('the mocks did not start both families');
  return {
    target: {
      name: 'Prism mock',
      stateful: false,
      // The mock serves the web and gateway documents; flows on the sdk host are sandbox-only.
      hosts: { web, gateway, sdk: 'http://sdk.mock.invalid' },
      service: () => Promise.reject(new Error('the mock keeps no state: service steps are left out')),
      inspect: (answer) => {
        if (/NO_PATH_MATCHED_ERROR|NO_METHOD_MATCHED_ERROR/.test(answer.text)) {
          return { problem: `the contract has no such operation (Prism answers ${answer.status}: ${answer.text.slice(0, 160)})` };
        }
        // Prism answers a refused request with the document's example of that status; the real
        // reasons are in its sl-violations header.
        const violations = answer.headers['sl-violations'];
        return violations === undefined ? {} : { note: `Prism's reasons: ${String(violations).slice(0, 600)}` };
      },
    },
    loggedErrors: [],
    close: () => mocks.stop(),
  };
}

/** Where the shop lives when no local server stands for it (the mock sends it nothing). */
const NO_SHOP = 'http://shop.example.in';

/**
 * Plays one flow against a new sandbox: the shop's server answering as the flow's webhook spec
 * says, the sandbox with the flow's partner webhook URL, then both closed.
 */
export async function playOnSandbox(flow: Flow): Promise<{ report: FlowReport; loggedErrors: string[] }> {
  const spec = flow.shop === undefined ? undefined : (WEBHOOKS[flow.shop as keyof typeof WEBHOOKS] as WebhookSpec | undefined);
  if (flow.shop !== undefined && spec === undefined) throw new Error(`flow ${flow.id}: unknown webhook spec ${flow.shop}`);
  const shop = await startShopReceiver((_request, origin) => {
    if (spec === undefined) return { status: 200, body: '' };
    const headers = Object.fromEntries(Object.entries(spec.answers.headers ?? {}).map(([name, value]) => [name, render(value, { site: origin })]));
    return { status: spec.answers.status, headers, body: spec.answers.body };
  });
  try {
    const given = flow.given({ site: shop.origin, nowSeconds: Math.floor(Date.now() / 1000), uuid: randomUUID });
    const running = await startSandboxTarget(
      flow.partnerWebhookUrl === undefined ? {} : { partnerWebhookUrl: render(flow.partnerWebhookUrl, given) },
    );
    try {
      const report = await runFlow(flow, { target: running.target, shop, given });
      return { report, loggedErrors: running.loggedErrors };
    } finally {
      await running.close();
    }
  } finally {
    await shop.close();
  }
}

/** Plays one flow against running mocks (the calls only). */
export function playOnMock(flow: Flow, mock: RunningTarget): Promise<FlowReport> {
  const given = flow.given({ site: NO_SHOP, nowSeconds: Math.floor(Date.now() / 1000), uuid: randomUUID });
  return runFlow(flow, { target: mock.target, given });
}
