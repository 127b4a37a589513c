import { describe, expect, expectTypeOf, it } from 'vitest';
import type { directLifecycle } from '../../src/sandbox/families/direct.js';
import type { SdkTransaction } from '../../src/sandbox/families/sdk.js';
import type { SendWebhook } from '../../src/sandbox/webhook-events.js';
import { sdkSignature } from '../../src/signature.js';
import { initiateSdk, PARTNER_ID, PRIVATE_KEY, useSandbox } from '../support/sandbox.js';

const INITIATE = '/merchant/credit/initiateTransaction';
const STATUS = '/merchant/credit/checkTransactionStatus';
const REFUND = '/merchant/credit/refundTransaction';

const t = useSandbox();
let counter = 0;
const newId = () => `sdk_${Date.now()}_${counter++}`;

async function status(id: string): Promise<string> {
  const answer = await t.sdk(STATUS, { merchantTransactionId: id });
  expect(answer.status, answer.text).toBe(200);
  return answer.body.message as string;
}

async function act(id: string, action: 'confirm' | 'cancel' | 'fail') {
  return t.request('POST', `/sandbox/sdk/transactions/${id}/${action}`);
}

async function successful(amount = 250_000): Promise<string> {
  const id = newId();
  await initiateSdk(t, id, amount);
  expect((await act(id, 'confirm')).status).toBe(200);
  return id;
}

describe('initiate', () => {
  it('answers 201 TRANSACTION_INITIATED and the status is PENDING', async () => {
    const id = newId();
    const answer = await t.sdk(INITIATE, { merchantTransactionId: id, userPhoneNumber: '+919000000001', userId: 'u_1', amount: 250000 });
    expect(answer.status).toBe(201);
    expect(answer.body).toEqual({ message: 'TRANSACTION_INITIATED' });
    expect(answer.operationId).toBe('initiateSdkTransaction');
    expect(await status(id)).toBe('PENDING');
  });

  it('accepts the worked example of the documentation byte for byte', async () => {
    const body = '{"merchantTransactionId":"ord_1","userPhoneNumber":"+919000000001","userId":"u_1","amount":10000}';
    const answer = await t.sdk(INITIATE, body, { signature: '0iMcdUZSYvAOZPde2GcbV3YdHbnfiW6yJYR29FlEG3A=' });
    expect(answer.status).toBe(201);
  });

  it('answers 400 DUPLICATE_TRANSACTION_ID for an id used before', async () => {
    const id = newId();
    await initiateSdk(t, id);
    const answer = await t.sdk(INITIATE, { merchantTransactionId: id, userPhoneNumber: '+919000000001', userId: 'u_1', amount: 100 });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toBe('DUPLICATE_TRANSACTION_ID');
  });

  it('answers 400 BAD_REQUEST with a detail for an invalid body', async () => {
    const answer = await t.sdk(INITIATE, { merchantTransactionId: newId(), userPhoneNumber: '9000000001', userId: 'u_1', amount: 50 });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toBe('BAD_REQUEST');
    expect(answer.body.detail).toContain('/userPhoneNumber must be +91 and the ten digits of an Indian mobile number, without spaces, e.g. +919000000001');
    expect(answer.body.detail).toContain('/amount must be at least 100 paise (₹1); amounts are integers in paise (₹1 = 100 paise: ₹1,500 is 150000)');
  });

  it('answers 400 BAD_REQUEST for a fractional amount, a missing field and an unknown field', async () => {
    const fractional = await t.sdk(INITIATE, { merchantTransactionId: newId(), userPhoneNumber: '+919000000001', userId: 'u', amount: 100.5 });
    expect(fractional.body).toMatchObject({ message: 'BAD_REQUEST' });
    expect(fractional.body.detail).toBe('/amount must be a whole number of paise, an integer (₹1 = 100 paise: ₹1,500 is 150000)');
    const missing = await t.sdk(INITIATE, { merchantTransactionId: newId(), userPhoneNumber: '+919000000001', amount: 100 });
    expect(missing.body).toEqual({ message: 'BAD_REQUEST', detail: '/userId is required' });
    const extra = await t.sdk(INITIATE, { merchantTransactionId: newId(), userPhoneNumber: '+919000000001', userId: 'u', amount: 100, x: 1 });
    expect(extra.body).toEqual({ message: 'BAD_REQUEST', detail: '/x is not allowed' });
  });

  it('answers 400 BAD_REQUEST for invalid JSON, with a clear message', async () => {
    const answer = await t.sdk(INITIATE, '{"merchantTransactionId": ');
    expect(answer.status).toBe(400);
    expect(answer.body.message).toBe('BAD_REQUEST');
    expect(answer.body.detail).toMatch(/^The request body is not valid JSON/);
  });

  it('answers 400 BAD_REQUEST for a wrong or missing Content-Type', async () => {
    const body = { merchantTransactionId: newId(), userPhoneNumber: '+919000000001', userId: 'u', amount: 100 };
    const text = await t.sdk(INITIATE, body, { contentType: 'text/plain' });
    expect(text.status).toBe(400);
    expect(text.body).toMatchObject({ message: 'BAD_REQUEST', detail: expect.stringContaining('application/json') });
    const none = await t.sdk(INITIATE, body, { contentType: null });
    expect(none.status).toBe(400);
    const latin1 = await t.sdk(INITIATE, body, { contentType: 'application/json; charset=iso-8859-1' });
    expect(latin1.status).toBe(400);
    const utf8 = await t.sdk(INITIATE, body, { contentType: 'application/json; charset=UTF-8' });
    expect(utf8.status).toBe(201);
  });

  it('answers 400 BAD_REQUEST for an empty body', async () => {
    const answer = await t.sdk(INITIATE, '');
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ message: 'BAD_REQUEST', detail: 'the request body is required' });
  });

  it('answers 413 PAYLOAD_TOO_LARGE over 1 MiB, before checking anything else', async () => {
    const big = JSON.stringify({ merchantTransactionId: newId(), padding: 'x'.repeat(1024 * 1024) });
    const answer = await t.sdk(INITIATE, big, { signature: null, partnerId: null });
    expect(answer.status).toBe(413);
    expect(answer.body.message).toBe('PAYLOAD_TOO_LARGE');
    // Still usable afterwards.
    expect((await t.request('GET', '/sandbox/clock')).status).toBe(200);
  });

  it('answers 413 for a chunked body over the limit (no Content-Length)', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 40) controller.close();
        else {
          sent++;
          controller.enqueue(chunk);
        }
      },
    });
    const response = await fetch(`${t.url}${INITIATE}`, {
      method: 'POST',
      body: stream,
      headers: { 'Content-Type': 'application/json', 'X-Partnerid': PARTNER_ID },
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ message: 'PAYLOAD_TOO_LARGE' });
  });
});

describe('authorization', () => {
  const body = () => ({ merchantTransactionId: newId(), userPhoneNumber: '+919000000001', userId: 'u', amount: 100 });

  it('answers 401 AUTHORIZATION_FAILED for a wrong signature', async () => {
    const answer = await t.sdk(INITIATE, body(), { key: 'another_key' });
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({
      message: 'AUTHORIZATION_FAILED',
      detail: 'X-Signature does not match the request body: it must be base64(SHA-256(the exact body bytes + your private key)).',
    });
  });

  it('answers 401 for an unknown partner', async () => {
    const answer = await t.sdk(INITIATE, body(), { partnerId: 'partner_unknown' });
    expect(answer.status).toBe(401);
    expect(answer.body.message).toBe('AUTHORIZATION_FAILED');
    expect(answer.body.detail).toBe('X-Partnerid is not a known partner id: send the partner id the sandbox prints on start (PAYLATER_PARTNER_ID).');
    expect(answer.text).not.toContain('partner_unknown');
  });

  it('answers 400 BAD_REQUEST naming the expected form for a malformed signature, also a hex one (D28)', async () => {
    const text = JSON.stringify(body());
    const hex = Buffer.from(sdkSignature(text, PRIVATE_KEY), 'base64').toString('hex');
    for (const signature of ['not-a-signature', hex, `${sdkSignature(text, PRIVATE_KEY).slice(0, -1)}`]) {
      const answer = await t.sdk(INITIATE, text, { signature });
      expect(answer.status, signature).toBe(400);
      expect(answer.body.message).toBe('BAD_REQUEST');
      expect(answer.body.detail).toContain(`X-Signature is malformed (${signature.length} characters)`);
      expect(answer.body.detail).toContain('44 characters');
    }
    // Well-formed but not the signature of this body: 401.
    const other = await t.sdk(INITIATE, text, { signature: sdkSignature(`${text} `, PRIVATE_KEY) });
    expect(other.status).toBe(401);
    expect(other.body.message).toBe('AUTHORIZATION_FAILED');
  });

  it('answers 401 for a missing X-Signature or X-Partnerid', async () => {
    expect((await t.sdk(INITIATE, body(), { signature: null })).body).toEqual({
      message: 'AUTHORIZATION_FAILED',
      detail: 'X-Signature is missing: send base64(SHA-256(the exact body bytes + your private key)), 44 characters of standard base64.',
    });
    expect((await t.sdk(INITIATE, body(), { partnerId: null })).body).toEqual({
      message: 'AUTHORIZATION_FAILED',
      detail: 'X-Partnerid is missing: send your partner id in X-Partnerid, and the request signature in X-Signature.',
    });
    expect((await t.sdk(STATUS, { merchantTransactionId: 'x' }, { signature: null })).status).toBe(401);
    expect((await t.sdk(REFUND, { merchantTransactionId: 'x' }, { signature: null })).status).toBe(401);
  });

  it('checks authorization before the body: an unsigned invalid body is 401, not 400', async () => {
    const answer = await t.sdk(INITIATE, '{not json', { key: 'wrong' });
    expect(answer.status).toBe(401);
  });

  it('signs the exact bytes: re-serialized JSON does not verify', async () => {
    const text = JSON.stringify(body());
    const answer = await t.sdk(INITIATE, JSON.stringify(JSON.parse(text), null, 2), { signature: sdkSignature(text, PRIVATE_KEY) });
    expect(answer.status).toBe(401);
  });
});

describe('status and the user actions', () => {
  it('answers 400 NO_SUCH_TRANSACTION for an unknown id (D27)', async () => {
    const answer = await t.sdk(STATUS, { merchantTransactionId: 'ord_unknown' });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ message: 'NO_SUCH_TRANSACTION', detail: "No transaction with merchantTransactionId 'ord_unknown'." });
  });

  it('answers 400 BAD_REQUEST for an invalid status body', async () => {
    const answer = await t.sdk(STATUS, { merchantTransactionId: 'has space' });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toBe('BAD_REQUEST');
  });

  it.each([
    ['confirm', 'SUCCESS'],
    ['cancel', 'CANCELLED'],
    ['fail', 'FAILURE'],
  ] as const)('%s makes the status %s, which is final', async (action, expected) => {
    const id = newId();
    await initiateSdk(t, id);
    const answer = await act(id, action);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ merchantTransactionId: id, status: expected });
    expect(await status(id)).toBe(expected);
    const again = await act(id, 'confirm');
    expect(again.status).toBe(409);
    expect(again.body.errorCode).toBe('INVALID_STATE');
    expect(await status(id)).toBe(expected);
  });

  it('a user action on an unknown id answers 404 JSON', async () => {
    const answer = await t.request('POST', '/sandbox/sdk/transactions/nope/confirm');
    expect(answer.status).toBe(404);
    // D125: the code of an unknown transaction on the contract's paths, here too.
    expect(answer.body).toMatchObject({ errorCode: 'NO_SUCH_TRANSACTION' });
  });

  it('fails after 60 s of virtual time without a user action (D13)', async () => {
    const id = newId();
    await initiateSdk(t, id);
    await t.advance(59_000);
    expect(await status(id)).toBe('PENDING');
    await t.advance(1_000);
    expect(await status(id)).toBe('FAILURE');
    const late = await act(id, 'confirm');
    expect(late.status).toBe(409);
    expect(late.body.message).toContain('expired');
    const view = await t.request('GET', `/sandbox/sdk/transactions/${id}`);
    expect(view.body).toMatchObject({ status: 'FAILURE', failureReason: 'EXPIRED' });
  });
});

describe('refunds', () => {
  it('refunds the whole amount without amount, then ALREADY_REFUNDED', async () => {
    const id = await successful(250_000);
    const answer = await t.sdk(REFUND, { merchantTransactionId: id });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ message: 'ok' });
    const again = await t.sdk(REFUND, { merchantTransactionId: id, amount: 100 });
    expect(again.status).toBe(400);
    expect(again.body.message).toBe('ALREADY_REFUNDED');
  });

  it('partial refunds sum to the amount; amount 0 refunds what remains', async () => {
    const id = await successful(250_000);
    expect((await t.sdk(REFUND, { merchantTransactionId: id, amount: 100_000 })).body).toEqual({ message: 'ok' });
    expect((await t.sdk(REFUND, { merchantTransactionId: id, amount: 50_000 })).body).toEqual({ message: 'ok' });
    const tooLarge = await t.sdk(REFUND, { merchantTransactionId: id, amount: 100_001 });
    expect(tooLarge.status).toBe(400);
    expect(tooLarge.body).toEqual({ message: 'REFUND_AMOUNT_TOO_LARGE', detail: 'Refund of 100,001 paise (₹1,000.01) exceeds the remaining 100,000 paise (₹1,000).' });
    expect((await t.sdk(REFUND, { merchantTransactionId: id, amount: 0 })).body).toEqual({ message: 'ok' });
    const view = await t.request('GET', `/sandbox/sdk/transactions/${id}`);
    expect(view.body.refundedAmount).toBe(250_000);
    expect(view.body.refunds.map((refund: { amount: number }) => refund.amount)).toEqual([100_000, 50_000, 100_000]);
    expect((await t.sdk(REFUND, { merchantTransactionId: id })).body.message).toBe('ALREADY_REFUNDED');
  });

  it('answers REFUND_AMOUNT_TOO_LARGE above the order amount', async () => {
    const id = await successful(10_000);
    const answer = await t.sdk(REFUND, { merchantTransactionId: id, amount: 10_001 });
    expect(answer.body.message).toBe('REFUND_AMOUNT_TOO_LARGE');
  });

  it('answers NO_SUCH_TRANSACTION for an unknown id', async () => {
    const answer = await t.sdk(REFUND, { merchantTransactionId: 'ord_unknown', amount: 100 });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toBe('NO_SUCH_TRANSACTION');
  });

  it('answers TRANSACTION_NOT_REFUNDABLE unless the transaction is SUCCESS (D27)', async () => {
    const pending = newId();
    await initiateSdk(t, pending);
    const answer = await t.sdk(REFUND, { merchantTransactionId: pending });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      message: 'TRANSACTION_NOT_REFUNDABLE',
      detail: "The transaction's status is PENDING; only a SUCCESS transaction can be refunded.",
    });
    await act(pending, 'cancel');
    expect((await t.sdk(REFUND, { merchantTransactionId: pending })).body.message).toBe('TRANSACTION_NOT_REFUNDABLE');
  });

  it('answers BAD_REQUEST for a malformed refund body', async () => {
    const answer = await t.sdk(REFUND, { merchantTransactionId: 'x', amount: -1 });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ message: 'BAD_REQUEST', detail: '/amount must be at least 0 paise (₹0); amounts are integers in paise (₹1 = 100 paise: ₹1,500 is 150000)' });
  });
});

describe('routing', () => {
  it('answers 405 with Allow for a known path and another method', async () => {
    const answer = await t.request('GET', INITIATE);
    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')).toBe('POST');
    expect(answer.body.message).toBe('METHOD_NOT_ALLOWED');
  });

  it('answers 404 JSON for an unknown path', async () => {
    const sdk = await t.request('POST', '/merchant/credit/unknown');
    expect(sdk.status).toBe(404);
    expect(sdk.body).toMatchObject({ message: 'NOT_FOUND' });
    const other = await t.request('GET', '/nothing/here');
    expect(other.status).toBe(404);
    expect(other.body).toMatchObject({ errorCode: 'NOT_FOUND' });
  });
});

describe("the SDK module's webhooks", () => {
  it('are sent with a send typed for the SDK flow alone (tsc), so an event only the SDK has can be sent', () => {
    // Typed for web and SDK together, the payload of an event one flow lacks would be `never`.
    type LifecycleSend = ReturnType<typeof directLifecycle<SdkTransaction, 'sdk'>>['send'];
    expectTypeOf<LifecycleSend>().toEqualTypeOf<SendWebhook<'sdk'>>();
    expectTypeOf<LifecycleSend>().not.toEqualTypeOf<SendWebhook<'web' | 'sdk'>>();
  });
});
