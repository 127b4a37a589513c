import { afterEach, describe, expect, it } from 'vitest';
import { verifySdkSignature, verifyStatusSignature } from '../../src/signature.js';
import { loadContract, validateRequest } from '../../src/sandbox/validation.js';
import { initiateSdk, PRIVATE_KEY, startReceiver, startSandbox, waitFor, type Receiver, type TestSandbox } from '../support/sandbox.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

let t: TestSandbox | undefined;
let receiver: Receiver | undefined;

afterEach(async () => {
  if (t !== undefined) expect(t.loggedErrors).toEqual([]);
  await t?.close();
  await receiver?.close();
  t = undefined;
  receiver = undefined;
});

async function setUp(answer: (index: number, body: string) => number) {
  receiver = await startReceiver(answer);
  t = await startSandbox({ config: { partner: { webhookUrl: receiver.url } } });
  return { t, receiver };
}

/** Waits until the delivery of `id` has `attempts` attempts recorded. */
async function attempts(t: TestSandbox, id: string, count: number) {
  return waitFor(async () => {
    const [delivery] = await t.deliveries(id);
    return delivery !== undefined && delivery.attempts.length === count ? delivery : undefined;
  });
}

describe('SDK webhooks (D23)', () => {
  it('retries at 30 s and 2 min after failures, keeps X-Event-Id, signs the exact body, records attempts', async () => {
    const { t, receiver } = await setUp((index) => (index < 2 ? 500 : 200));
    const id = `wh_${Date.now()}`;
    await initiateSdk(t, id);
    await t.request('POST', `/sandbox/sdk/transactions/${id}/confirm`);

    let delivery = await attempts(t, id, 1);
    expect(delivery.status).toBe('pending');
    expect(delivery.attempts[0].statusCode).toBe(500);
    expect(Date.parse(delivery.nextAttemptAt) - Date.parse(delivery.attempts[0].at)).toBeGreaterThanOrEqual(30_000);

    await t.advance(29_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(receiver.received).toHaveLength(1);

    await t.advance(1_000);
    delivery = await attempts(t, id, 2);
    expect(delivery.attempts[1].statusCode).toBe(500);

    await t.advance(2 * MINUTE);
    delivery = await attempts(t, id, 3);
    expect(delivery.status).toBe('delivered');
    expect(delivery.attempts.map((attempt: { statusCode: number }) => attempt.statusCode)).toEqual([500, 500, 200]);
    for (const attempt of delivery.attempts) {
      expect(typeof attempt.durationMs).toBe('number');
      expect(Number.isNaN(Date.parse(attempt.at))).toBe(false);
    }
    const gaps = delivery.attempts.slice(1).map((attempt: { at: string }, index: number) => Date.parse(attempt.at) - Date.parse(delivery.attempts[index].at));
    expect(gaps[0]).toBeGreaterThanOrEqual(30_000);
    expect(gaps[1]).toBeGreaterThanOrEqual(2 * MINUTE);

    expect(receiver.received).toHaveLength(3);
    const eventIds = new Set(receiver.received.map((request) => request.headers['x-event-id']));
    expect(eventIds.size).toBe(1);
    expect(delivery.eventId).toBe([...eventIds][0]);

    const contract = await loadContract('sdk');
    const webhook = contract.operation('notifySdkTransactionStatus');
    for (const request of receiver.received) {
      expect(request.body).toBe(`{"merchantTransactionId":"${id}","status":"SUCCESS"}`);
      expect(request.headers['content-type']).toBe('application/json');
      expect(verifySdkSignature(request.headers['x-signature'], request.body, PRIVATE_KEY)).toBe(true);
      const check = validateRequest(webhook, { params: {}, query: {}, headers: request.headers, body: JSON.parse(request.body) });
      expect(check.ok).toBe(true);
    }
    expect(delivery.body).toBe(receiver.received[0]!.body);
  });

  it('counts only HTTP 200 as success for the SDK flow', async () => {
    const { t, receiver } = await setUp((index) => (index === 0 ? 204 : 200));
    const id = `wh204_${Date.now()}`;
    await initiateSdk(t, id);
    await t.request('POST', `/sandbox/sdk/transactions/${id}/cancel`);
    await attempts(t, id, 1);
    await t.advance(30_000);
    const delivery = await attempts(t, id, 2);
    expect(delivery.status).toBe('delivered');
    expect(receiver.received.map((request) => JSON.parse(request.body).status)).toEqual(['CANCELLED', 'CANCELLED']);
  });

  it('does not count a redirect (302) as received for the SDK flow, and does not follow it', async () => {
    const { t, receiver } = await setUp((index) => (index === 0 ? 302 : 200));
    const id = `wh302_${Date.now()}`;
    await initiateSdk(t, id);
    await t.request('POST', `/sandbox/sdk/transactions/${id}/confirm`);
    expect((await attempts(t, id, 1)).status).toBe('pending');
    await t.advance(30_000);
    const delivery = await attempts(t, id, 2);
    expect(delivery.status).toBe('delivered');
    expect(delivery.attempts.map((attempt: { statusCode: number }) => attempt.statusCode)).toEqual([302, 200]);
    expect(receiver.received.map((request) => request.url)).toEqual(['/webhook', '/webhook']);
  });

  it('abandons after 6 attempts (at once, 30 s, 2 min, 10 min, 1 h, 6 h) and then stops', async () => {
    const { t, receiver } = await setUp(() => 503);
    const id = `whab_${Date.now()}`;
    await initiateSdk(t, id);
    await t.request('POST', `/sandbox/sdk/transactions/${id}/fail`);
    await attempts(t, id, 1);
    const delays = [30_000, 2 * MINUTE, 10 * MINUTE, HOUR, 6 * HOUR];
    for (const [index, delay] of delays.entries()) {
      await t.advance(delay);
      await attempts(t, id, index + 2);
    }
    const delivery = (await t.deliveries(id))[0];
    expect(delivery.status).toBe('abandoned');
    expect(delivery.nextAttemptAt).toBeNull();
    expect(delivery.attempts).toHaveLength(6);
    await t.advance(24 * HOUR);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(receiver.received).toHaveLength(6);
  });

  it('delivers the events of one ordering key in order, each waiting for the previous one', async () => {
    const bodies: string[] = [];
    const { t, receiver } = await setUp((index, body) => {
      bodies.push(body);
      return index === 0 ? 500 : 200;
    });
    // In a unit of work, as every change of state (the shared store refuses one outside).
    const enqueue = (n: number, key: string) =>
      t.sandbox.store.unit(() =>
        t.sandbox.deliveries.enqueue({
          url: receiver.url,
          body: JSON.stringify({ n }),
          headers: {},
          orderingKey: key,
          successStatus: '2xx',
          family: 'sdk',
          event: 'transactionStatus',
          transactionId: key,
        }),
      );
    await enqueue(1, 'k1');
    await enqueue(2, 'k1');
    await enqueue(3, 'k1');
    await waitFor(() => (receiver.received.length >= 1 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 100));
    // The first event failed: the later ones of the same key wait.
    expect(bodies).toEqual(['{"n":1}']);
    // Another key is not held up.
    await enqueue(4, 'k2');
    await waitFor(() => (receiver.received.length >= 2 ? true : undefined));
    await t.advance(30_000);
    await waitFor(() => (receiver.received.length >= 5 ? true : undefined));
    expect(bodies.filter((body) => body !== '{"n":4}')).toEqual(['{"n":1}', '{"n":1}', '{"n":2}', '{"n":3}']);
    const delivered = (await t.deliveries('k1')).map((delivery) => delivery.status);
    expect(delivered).toEqual(['delivered', 'delivered', 'delivered']);
  });

  it('an abandoned event lets the next one of the same key go', async () => {
    const { t, receiver } = await setUp((_index, body) => (body === '{"n":1}' ? 500 : 200));
    const enqueue = (n: number) =>
      t.sandbox.store.unit(() =>
        t.sandbox.deliveries.enqueue({
          url: receiver.url,
          body: JSON.stringify({ n }),
          headers: {},
          orderingKey: 'k',
          successStatus: '2xx',
          family: 'sdk',
          event: 'transactionStatus',
          transactionId: 'k',
        }),
      );
    await enqueue(1);
    await enqueue(2);
    await attempts(t, 'k', 1);
    for (const [index, delay] of [30_000, 2 * MINUTE, 10 * MINUTE, HOUR, 6 * HOUR].entries()) {
      await t.advance(delay);
      await attempts(t, 'k', index + 2);
    }
    await waitFor(() => (receiver.received.length >= 7 ? true : undefined));
    const statuses = (await t.deliveries('k')).map((delivery) => delivery.status);
    expect(statuses).toEqual(['abandoned', 'delivered']);
  });

  it('records an error when the receiver cannot be reached, and retries', async () => {
    // A port that was free a moment ago: nothing listens there.
    const closed = await startReceiver();
    await closed.close();
    t = await startSandbox({ config: { partner: { webhookUrl: closed.url } } });
    const id = `whdown_${Date.now()}`;
    await initiateSdk(t, id);
    await t.request('POST', `/sandbox/sdk/transactions/${id}/confirm`);
    const delivery = await attempts(t, id, 1);
    expect(delivery.status).toBe('pending');
    expect(delivery.attempts[0].statusCode).toBeUndefined();
    expect(delivery.attempts[0].error).toMatch(/ECONNREFUSED/);
  });
});

describe('without a webhook URL', () => {
  it('records the event as not_sent', async () => {
    t = await startSandbox();
    const id = `whnone_${Date.now()}`;
    await initiateSdk(t, id);
    await t.request('POST', `/sandbox/sdk/transactions/${id}/confirm`);
    const [delivery] = await t.deliveries(id);
    expect(delivery).toMatchObject({ status: 'not_sent', url: null, attempts: [], body: `{"merchantTransactionId":"${id}","status":"SUCCESS"}` });
  });
});

describe('web webhooks', () => {
  it('sends {transactionId, status, signature} with both signatures, a 2xx is received', async () => {
    const { t, receiver } = await setUp(() => 202);
    const id = `webwh_${Date.now()}`;
    const answer = await t.web('POST', '/api/transaction', { id, amount: 150_000, user: { name: 'Asha Rao', phoneNumber: '+919000000001' } });
    expect(answer.status).toBe(200);
    await t.request('POST', `/sandbox/web/transactions/${id}/cancel`);
    const delivery = await attempts(t, id, 1);
    expect(delivery.status).toBe('delivered');
    const [request] = receiver.received;
    const event = JSON.parse(request!.body);
    expect(event).toEqual({ transactionId: id, status: 'CANCELLED', signature: expect.any(String) });
    expect(verifyStatusSignature(event.signature, id, 'CANCELLED', PRIVATE_KEY)).toBe(true);
    expect(verifySdkSignature(request!.headers['x-signature'], request!.body, PRIVATE_KEY)).toBe(true);
    const contract = await loadContract('web');
    const check = validateRequest(contract.operation('notifyWebTransactionStatus'), {
      params: {},
      query: {},
      headers: request!.headers,
      body: event,
    });
    expect(check.ok).toBe(true);
  });

  it('counts a redirect (302, 303) as received without following it, and retries a 4xx', async () => {
    const { t, receiver } = await setUp((index) => [302, 400, 303][index] ?? 200);
    const user = { name: 'Asha Rao', phoneNumber: '+919000000001' };
    const first = `web302_${Date.now()}`;
    const second = `web400_${Date.now()}`;
    for (const id of [first, second]) expect((await t.web('POST', '/api/transaction', { id, amount: 150_000, user })).status).toBe(200);
    await t.request('POST', `/sandbox/web/transactions/${first}/confirm`);
    const delivered = await attempts(t, first, 1);
    expect(delivered).toMatchObject({ status: 'delivered', successStatus: '2xx-3xx' });
    expect(delivered.attempts[0].statusCode).toBe(302);
    await t.request('POST', `/sandbox/web/transactions/${second}/cancel`);
    expect((await attempts(t, second, 1)).status).toBe('pending');
    await t.advance(30_000);
    const retried = await attempts(t, second, 2);
    expect(retried.status).toBe('delivered');
    expect(retried.attempts.map((attempt: { statusCode: number }) => attempt.statusCode)).toEqual([400, 303]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(receiver.received.map((request) => request.url)).toEqual(['/webhook', '/webhook', '/webhook']);
  });

  it('sends FAILURE after the 15-minute expiry', async () => {
    const { t, receiver } = await setUp(() => 200);
    const id = `webexp_${Date.now()}`;
    await t.web('POST', '/api/transaction', { id, amount: 150_000, user: { name: 'Asha Rao', phoneNumber: '+919000000001' } });
    await t.advance(15 * MINUTE);
    await attempts(t, id, 1);
    expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({ transactionId: id, status: 'FAILURE' });
  });
});
