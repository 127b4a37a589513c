/**
 * Item 9, replay: the SDK signature covers only body + key, so a status check whose body equals a
 * refund's could be replayed as a refund. The package's SDK client always sends `amount` in a
 * refund (0 = the whole order), so its refund and status bodies, and their signatures, never
 * coincide; and the sandbox refunds the whole order for `amount: 0`.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSdkClient, explicitRefundAmount } from '../../src/clients/sdk.js';
import { initiateSdk, PARTNER_ID, PRIVATE_KEY, startSandbox, type TestSandbox } from '../support/sandbox.js';

describe('the SDK client', () => {
  const sent: { path: string; body: string; headers: IncomingHttpHeaders }[] = [];
  let base: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        sent.push({ path: request.url ?? '', body: Buffer.concat(chunks).toString('utf8'), headers: request.headers });
        response.writeHead(200, { 'Content-Type': 'application/json' }).end('{"message":"ok"}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  });
  afterAll(() => close());

  it('sends amount 0 in a refund without an amount, so its body and signature differ from the status check', async () => {
    sent.length = 0;
    const client = createSdkClient({ baseUrl: base, partnerId: PARTNER_ID, privateKey: PRIVATE_KEY });
    await client.POST('/merchant/credit/checkTransactionStatus', { body: { merchantTransactionId: 'ord_9' } });
    await client.POST('/merchant/credit/refundTransaction', { body: { merchantTransactionId: 'ord_9' } });
    const [status, refund] = sent;
    expect(status!.body).toBe('{"merchantTransactionId":"ord_9"}');
    expect(JSON.parse(refund!.body)).toEqual({ merchantTransactionId: 'ord_9', amount: 0 });
    expect(refund!.body).not.toBe(status!.body);
    expect(refund!.headers['x-signature']).not.toBe(status!.headers['x-signature']);
  });

  it("keeps the caller's amount, and adds it through request() too", async () => {
    sent.length = 0;
    const client = createSdkClient({ baseUrl: base, partnerId: PARTNER_ID, privateKey: PRIVATE_KEY });
    await client.POST('/merchant/credit/refundTransaction', { body: { merchantTransactionId: 'ord_9', amount: 500 } });
    await client.request('post', '/merchant/credit/refundTransaction', { body: { merchantTransactionId: 'ord_9' } });
    expect(sent.map((request) => JSON.parse(request.body))).toEqual([
      { merchantTransactionId: 'ord_9', amount: 500 },
      { merchantTransactionId: 'ord_9', amount: 0 },
    ]);
    expect(explicitRefundAmount({ merchantTransactionId: 'x', amount: 7 })).toEqual({ merchantTransactionId: 'x', amount: 7 });
  });
});

describe('against the sandbox', () => {
  let t: TestSandbox;
  beforeAll(async () => {
    t = await startSandbox();
  });
  afterAll(() => t.close());

  it('a refund with amount 0 refunds what remains; a captured status body is no longer a refund body', async () => {
    await initiateSdk(t, 'replay_1', 100_000);
    await t.request('POST', '/sandbox/sdk/transactions/replay_1/confirm');
    const client = createSdkClient({ baseUrl: t.url, partnerId: PARTNER_ID, privateKey: PRIVATE_KEY });
    const partial = await client.POST('/merchant/credit/refundTransaction', { body: { merchantTransactionId: 'replay_1', amount: 30_000 } });
    expect(partial.data?.message).toBe('ok');
    const rest = await client.POST('/merchant/credit/refundTransaction', { body: { merchantTransactionId: 'replay_1' } });
    expect(rest.data?.message).toBe('ok');
    const view = await t.request('GET', '/sandbox/sdk/transactions/replay_1');
    expect(view.body.refundedAmount).toBe(100_000);
    expect(view.body.refunds.map((refund: { amount: number }) => refund.amount)).toEqual([30_000, 70_000]);
  });
});
