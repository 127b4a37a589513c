/**
 * Each flow of the direct integration sends its webhooks to its own receiver (D76): a web-only
 * handler gets no SDK events, and the other way round; `webhookUrl` (`--webhook-url`) sets both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initiateSdk, startReceiver, startSandbox, waitFor, type Receiver, type TestSandbox } from '../support/sandbox.js';

let web: Receiver;
let sdk: Receiver;
beforeAll(async () => {
  [web, sdk] = await Promise.all([startReceiver(), startReceiver()]);
});
afterAll(async () => {
  await Promise.all([web.close(), sdk.close()]);
});

const user = { name: 'Asha Rao', phoneNumber: '+919000000001' };

/** A web transaction cancelled and an SDK transaction confirmed: one final event each. */
async function oneEventEach(t: TestSandbox, tag: string): Promise<void> {
  const webId = `web_${tag}`;
  expect((await t.web('POST', '/api/transaction', { id: webId, amount: 150_000, user })).status).toBe(200);
  expect((await t.request('POST', `/sandbox/web/transactions/${webId}/cancel`)).status).toBe(200);
  await initiateSdk(t, `sdk_${tag}`);
  expect((await t.request('POST', `/sandbox/sdk/transactions/sdk_${tag}/confirm`)).status).toBe(200);
}

describe('the partner webhook URL of each flow', () => {
  it('sends web events to the web receiver and SDK events to the SDK receiver', async () => {
    const t = await startSandbox({ config: { partner: { webhookUrls: { web: web.url, sdk: sdk.url } } } });
    try {
      await oneEventEach(t, 'split');
      await waitFor(() => (web.received.length >= 1 && sdk.received.length >= 1 ? true : undefined));
      expect(web.received.map((request) => JSON.parse(request.body))).toEqual([
        expect.objectContaining({ transactionId: 'web_split', status: 'CANCELLED' }),
      ]);
      expect(sdk.received.map((request) => JSON.parse(request.body))).toEqual([{ merchantTransactionId: 'sdk_split', status: 'SUCCESS' }]);
    } finally {
      await t.close();
    }
  });

  it('records the other flow\'s events as not sent when only one flow has a receiver', async () => {
    web.received.length = 0;
    sdk.received.length = 0;
    const t = await startSandbox({ config: { partner: { webhookUrls: { web: web.url } } } });
    try {
      await oneEventEach(t, 'web_only');
      await waitFor(() => (web.received.length >= 1 ? true : undefined));
      const [sdkDelivery] = await t.deliveries('sdk_web_only');
      expect(sdkDelivery).toMatchObject({ family: 'sdk', status: 'not_sent' });
      expect(sdk.received).toEqual([]);
    } finally {
      await t.close();
    }
  });

  it('sends both flows to one receiver with the shorthand', async () => {
    web.received.length = 0;
    const t = await startSandbox({ config: { partner: { webhookUrl: web.url } } });
    try {
      await oneEventEach(t, 'both');
      await waitFor(() => (web.received.length >= 2 ? true : undefined));
      expect(web.received.map((request) => JSON.parse(request.body).status).sort()).toEqual(['CANCELLED', 'SUCCESS']);
    } finally {
      await t.close();
    }
  });
});
