/**
 * The web flow's call to `notes.webhook_url` (D73), against a receiver that answers as the
 * WooCommerce plugin's webhook endpoint does: a 302 (`wp_redirect` then `exit`). The call keeps
 * the URL's own query (the order `key`), appends `txnId` and `txnStatus`, and repeats the query as
 * a form body, so each generation of the plugin finds what it reads: `$_GET` in 1.5.x and 1.6.x,
 * `$_POST` in 1.3.0.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sdkSignature } from '../../src/signature.js';
import { notesWebhookRequest } from '../../src/sandbox/families/web-notes-webhook.js';
import { PRIVATE_KEY, useSandbox } from '../support/sandbox.js';

interface Received {
  method: string;
  url: string;
  contentType: string | undefined;
  signature: string | undefined;
  body: string;
}

let shop: Server;
let shopUrl = '';
const received: Received[] = [];

beforeAll(async () => {
  shop = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        method: request.method ?? '',
        url: request.url ?? '',
        contentType: request.headers['content-type'],
        signature: request.headers['x-signature'] as string | undefined,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      // WooCommerce: payment_callback ends in wp_redirect(...) and exit.
      response.writeHead(302, { Location: `${shopUrl}/checkout/order-received/` });
      response.end();
    });
  });
  await new Promise<void>((done) => shop.listen(0, '127.0.0.1', done));
  shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((done) => shop.close(() => done()));
});

const t = useSandbox();
const user = { name: 'Asha Rao', phoneNumber: '+919000000001' };
const hookOf = (key: string) => `${shopUrl}/?wc-api=Bharatx_Pay_In_3_Feature_Gateway_Webhook&key=${key}`;

describe('notes.webhook_url', () => {
  it('is called with its own query kept, txnId and txnStatus appended, the same pairs as a form; a 302 counts as received', async () => {
    const id = 'b5a2c0de-1111-4222-8333-944455556666';
    const initiated = await t.web('POST', '/api/transaction', { id, amount: 199_800, user, notes: { orderKey: 'wc_order_Xy12', webhook_url: hookOf('wc_order_Xy12') } });
    expect(initiated.status, initiated.text).toBe(200);
    await t.request('POST', `/sandbox/web/transactions/${id}/confirm`);
    await expect.poll(() => received.filter((call) => call.url.includes(id)).length).toBe(1);
    const call = received.find((each) => each.url.includes(id))!;
    const query = `wc-api=Bharatx_Pay_In_3_Feature_Gateway_Webhook&key=wc_order_Xy12&txnId=${id}&txnStatus=SUCCESS`;
    expect(call).toEqual({
      method: 'POST',
      url: `/?${query}`,
      contentType: 'application/x-www-form-urlencoded',
      signature: sdkSignature(query, PRIVATE_KEY),
      body: query,
    });
    // 1.5.x reads $_GET, 1.3.0 $_POST: both hold the order key and the result.
    for (const pairs of [new URL(call.url, shopUrl).searchParams, new URLSearchParams(call.body)]) {
      expect([pairs.get('key'), pairs.get('txnId'), pairs.get('txnStatus')]).toEqual(['wc_order_Xy12', id, 'SUCCESS']);
    }
    await expect
      .poll(async () => (await t.deliveries(id)).find((delivery) => delivery.event === 'transactionResult')?.status)
      .toBe('delivered');
  });

  it('reports CANCELLED and FAILURE the same way', async () => {
    for (const [action, status] of [['cancel', 'CANCELLED'], ['fail', 'FAILURE']] as const) {
      const id = `notes_${action}`;
      await t.web('POST', '/api/transaction', { id, amount: 10_000, user, notes: { webhook_url: hookOf(id) } });
      await t.request('POST', `/sandbox/web/transactions/${id}/${action}`);
      await expect.poll(() => received.find((call) => call.url.includes(`txnId=${id}`))?.url).toContain(`&txnStatus=${status}`);
    }
  });

  it('an earlier txnId or txnStatus in the URL is replaced; a fragment is not sent', () => {
    expect(notesWebhookRequest('https://shop.example.in/hook?txnStatus=x&a=1#top', 'o1', 'SUCCESS')).toEqual({
      url: 'https://shop.example.in/hook?a=1&txnId=o1&txnStatus=SUCCESS',
      body: 'a=1&txnId=o1&txnStatus=SUCCESS',
    });
  });

  it('a webhook_url that cannot be called is a 400 naming it; other notes are still free', async () => {
    for (const bad of [42, 'not a url', 'ftp://shop.example.in/hook', `https://shop.example.in/${'a'.repeat(2048)}`]) {
      const answer = await t.web('POST', '/api/transaction', { id: 'bad_hook', amount: 10_000, user, notes: { webhook_url: bad } });
      expect(answer.status, answer.text).toBe(400);
      expect(answer.body.message).toBe('BAD_REQUEST');
      // The schema (WebNotes) refuses what the sandbox refuses, so a validator and the mock agree with it.
      expect(answer.body.detail).toMatch(/notes[./]webhook_url/);
    }
    // A refused target passes the schema (no pattern can say it) and is refused by the sandbox, naming it.
    const loopback = await t.web('POST', '/api/transaction', { id: 'bad_hook', amount: 10_000, user, notes: { webhook_url: 'http://169.254.169.254/hook' } });
    expect(loopback.status, loopback.text).toBe(400);
    expect(loopback.body.detail).toMatch(/^notes\.webhook_url /);
    const free = await t.web('POST', '/api/transaction', { id: 'free_notes', amount: 10_000, user, notes: { webhookUrl: 42, nested: { webhook_url: 1 } } });
    expect(free.status, free.text).toBe(200);
  });
});
