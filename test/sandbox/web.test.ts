import { describe, expect, it } from 'vitest';
import { statusSignature, verifyStatusSignature, webSignature } from '../../src/signature.js';
import { accentColour } from '../../src/sandbox/pages/checkout.js';
import { PRIVATE_KEY, useSandbox } from '../support/sandbox.js';

const t = useSandbox();
let counter = 0;
const newId = () => `web_${Date.now()}_${counter++}`;
const user = { name: 'Asha Rao', phoneNumber: '+919000000001', email: 'asha.rao@example.in' };

const statusPath = (id: string) => `/api/transaction/status?id=${encodeURIComponent(id)}`;

describe('initiate', () => {
  it('answers 200 TRANSACTION_INITIATED with the hosted page as redirectUrl', async () => {
    const id = newId();
    const answer = await t.web('POST', '/api/transaction', { id, amount: 150_000, user });
    expect(answer.status).toBe(200);
    expect(answer.operationId).toBe('initiateWebTransaction');
    expect(answer.body).toEqual({ message: 'TRANSACTION_INITIATED', redirectUrl: `${t.url}/checkout/${id}` });
  });

  it('accepts the worked example of the documentation', async () => {
    const body =
      '{"id":"web_20261122_0007","amount":150000,"user":{"name":"Asha Rao","phoneNumber":"+919000000001","email":"asha.rao@example.in"}}';
    const answer = await t.web('POST', '/api/transaction', body, { signature: 'ALXqn45gRZgB3Utc71vcVHJbzlMqr+P1EmQbdYSh+yM=' });
    expect(answer.status).toBe(200);
    const status = await t.web('GET', '/api/transaction/status?id=web_20261122_0007', undefined, {
      signature: 'annUDNqYp8/26vqnOCsgZAGzNvV4GuvtwFTJPKqybYc=',
    });
    expect(status.body).toEqual({
      transactionId: 'web_20261122_0007',
      status: 'PENDING',
      signature: 'SsSWZJDfUct/01gOsp17m9M1WH+A7/W/yI/+c8GHa3U=',
    });
  });

  it('answers 401 AUTHORIZATION_FAILED for a wrong signature, unknown partner, missing headers', async () => {
    const body = { id: newId(), amount: 150_000, user };
    for (const options of [{ key: 'wrong_key' }, { partnerId: 'partner_unknown' }, { signature: null }, { partnerId: null }]) {
      const answer = await t.web('POST', '/api/transaction', body, options);
      expect(answer.status, JSON.stringify(options)).toBe(401);
      expect(answer.body.message).toBe('AUTHORIZATION_FAILED');
    }
  });

  it('answers 400 BAD_REQUEST naming the expected form for a signature that is not 44 base64 characters', async () => {
    const text = JSON.stringify({ id: newId(), amount: 150_000, user });
    const digest = Buffer.from(webSignature(text, '/api/transaction', PRIVATE_KEY), 'base64');
    for (const signature of ['abc', digest.toString('hex'), digest.toString('base64url')]) {
      const answer = await t.web('POST', '/api/transaction', text, { signature });
      expect(answer.status, signature).toBe(400);
      expect(answer.body.message).toBe('BAD_REQUEST');
      expect(answer.body.detail).toContain(`X-Signature is malformed (${signature.length} characters)`);
      expect(answer.body.detail).toMatch(/44 characters .* ending in "="/);
      expect(answer.body.detail).toContain('trailing newline');
    }
  });

  it('accepts notes as any JSON object, stored unchanged, and empty overrides meaning none (D30, D31)', async () => {
    const id = newId();
    const notes = { woocommerceOrderId: 42, items: [{ sku: 'A-1', quantity: 2, price: 1999.5 }], shipping: { city: 'Pune', pin: null }, gift: true };
    const answer = await t.web('POST', '/api/transaction', { id, amount: 150_000, user, notes, redirect: { url: 'https://shop.example/r', colorOverride: '', logoOverride: '' } });
    expect(answer.status, answer.text).toBe(200);
    const view = await t.request('GET', `/sandbox/web/transactions/${id}`);
    expect(view.body).toMatchObject({ notes, redirect: { url: 'https://shop.example/r', colorOverride: null, logoOverride: null } });
    const page = await t.request('GET', `/checkout/${id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(accentColour(null));
    expect(page.text).not.toContain('<img src=');
  });

  it('covers the path and query as sent: a signature over another path does not verify', async () => {
    const text = JSON.stringify({ id: newId(), amount: 150_000, user });
    const answer = await t.web('POST', '/api/transaction', text, { signature: webSignature(text, '/api/transaction?x=1', PRIVATE_KEY) });
    expect(answer.status).toBe(401);
    // The query is part of what is signed, exactly as sent.
    const withQuery = await t.web('POST', '/api/transaction?source=test%2Dsuite', text);
    expect(withQuery.status).toBe(200);
  });

  it('answers 400 DUPLICATE_TRANSACTION_ID for an id used before', async () => {
    const id = newId();
    expect((await t.web('POST', '/api/transaction', { id, amount: 150_000, user })).status).toBe(200);
    const again = await t.web('POST', '/api/transaction', { id, amount: 150_000, user });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ message: 'DUPLICATE_TRANSACTION_ID', detail: `id '${id}' was already initiated.` });
  });

  it('answers 400 BAD_REQUEST for an invalid body (D20: name and phone number required)', async () => {
    const answer = await t.web('POST', '/api/transaction', { id: newId(), amount: 150_000, user: { phoneNumber: '+91900' } });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toBe('BAD_REQUEST');
    expect(answer.body.detail).toContain('/user/name is required');
    expect(answer.body.detail).toContain('/user/phoneNumber must be +91 and the ten digits');
    expect(answer.body.detail).not.toContain('[0-9]');
    const colour = await t.web('POST', '/api/transaction', { id: newId(), amount: 150_000, user, redirect: { colorOverride: 'red' } });
    expect(colour.body.detail).toContain('/redirect/colorOverride must be empty or a colour written # and six hex digits, e.g. #1A73E8');
  });

  it('accepts a phone number as the shopper typed it and keeps it as +91 and ten digits (D121)', async () => {
    for (const phoneNumber of ['+91-9000000001', '+91 90000 00001', '(+91) 90000-00001', '+91.900.000.0001', '+91-91-9000000001']) {
      const id = newId();
      const answer = await t.web('POST', '/api/transaction', { id, amount: 150_000, user: { ...user, phoneNumber } });
      expect(answer.status, `${phoneNumber}: ${answer.text}`).toBe(200);
      const view = await t.request('GET', `/sandbox/web/transactions/${id}`);
      expect(view.body.user.phoneNumber, phoneNumber).toBe('+919000000001');
    }
    // Separators do not make a number of another length acceptable: the 400 names the field.
    for (const phoneNumber of ['+91-900-000-001', '9000000001', '+44-9000000001', '+91-9000000001x']) {
      const answer = await t.web('POST', '/api/transaction', { id: newId(), amount: 150_000, user: { ...user, phoneNumber } });
      expect(answer.status, phoneNumber).toBe(400);
      expect(answer.body.detail, phoneNumber).toContain('/user/phoneNumber must be +91 and the ten digits');
    }
  });

  it('takes an empty email as no email (D122), and still refuses one that is not an address', async () => {
    const id = newId();
    const answer = await t.web('POST', '/api/transaction', { id, amount: 150_000, user: { ...user, email: '' } });
    expect(answer.status, answer.text).toBe(200);
    const view = await t.request('GET', `/sandbox/web/transactions/${id}`);
    expect(view.body.user).toEqual({ name: user.name, phoneNumber: user.phoneNumber });
    const wrong = await t.web('POST', '/api/transaction', { id: newId(), amount: 150_000, user: { ...user, email: 'not an address' } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.detail).toContain('/user/email');
  });

  it('answers 413 over 1 MiB', async () => {
    const answer = await t.web('POST', '/api/transaction', { id: newId(), amount: 150_000, user, pad: 'x'.repeat(1_100_000) });
    expect(answer.status).toBe(413);
    expect(answer.body.message).toBe('PAYLOAD_TOO_LARGE');
  });
});

describe('status check', () => {
  it('answers the status with a status signature that verifies (D22)', async () => {
    const id = newId();
    await t.web('POST', '/api/transaction', { id, amount: 150_000, user });
    const pending = await t.web('GET', statusPath(id));
    expect(pending.status).toBe(200);
    expect(pending.operationId).toBe('getWebTransactionStatus');
    expect(pending.body.status).toBe('PENDING');
    expect(verifyStatusSignature(pending.body.signature, id, 'PENDING', PRIVATE_KEY)).toBe(true);

    const action = await t.request('POST', `/sandbox/web/transactions/${id}/confirm`);
    expect(action.body).toEqual({
      transactionId: id,
      status: 'SUCCESS',
      signature: statusSignature(id, 'SUCCESS', PRIVATE_KEY),
      redirectTo: `https://merchant.example.in/?txnId=${id}&txnStatus=SUCCESS`,
    });
    const success = await t.web('GET', statusPath(id));
    expect(success.body).toEqual({ transactionId: id, status: 'SUCCESS', signature: statusSignature(id, 'SUCCESS', PRIVATE_KEY) });
  });

  it('answers 404 NO_SUCH_TRANSACTION for an unknown id (D21, D03)', async () => {
    const answer = await t.web('GET', statusPath('web_unknown'));
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({ message: 'NO_SUCH_TRANSACTION', detail: "No transaction with id 'web_unknown'." });
  });

  it('answers with X-Partner-Id alone, even with a Content-Type on the GET (D21)', async () => {
    const id = newId();
    await t.web('POST', '/api/transaction', { id, amount: 150_000, user });
    const unsigned = await t.web('GET', statusPath(id), undefined, { signature: null });
    expect(unsigned.status, unsigned.text).toBe(200);
    expect(unsigned.body).toEqual({ transactionId: id, status: 'PENDING', signature: statusSignature(id, 'PENDING', PRIVATE_KEY) });
    const withContentType = await t.request('GET', statusPath(id), { headers: { 'X-Partner-Id': 'partner_test', 'Content-Type': 'application/json' } });
    expect(withContentType.status, withContentType.text).toBe(200);
    const noPartner = await t.web('GET', statusPath(id), undefined, { signature: null, partnerId: null });
    expect(noPartner.status).toBe(401);
    expect(noPartner.body.message).toBe('AUTHORIZATION_FAILED');
  });

  it('verifies X-Signature when present: a wrong one is 401, a malformed one 400', async () => {
    const id = newId();
    await t.web('POST', '/api/transaction', { id, amount: 150_000, user });
    const wrong = await t.web('GET', statusPath(id), undefined, { key: 'wrong' });
    expect(wrong.status).toBe(401);
    expect(wrong.body.message).toBe('AUTHORIZATION_FAILED');
    const hex = await t.web('GET', statusPath(id), undefined, { signature: 'ab'.repeat(32) });
    expect(hex.status).toBe(400);
    expect(hex.body.detail).toContain('X-Signature is malformed (64 characters)');
  });

  it('answers 400 BAD_REQUEST when id is missing or malformed', async () => {
    const missing = await t.web('GET', '/api/transaction/status');
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ message: 'BAD_REQUEST', detail: 'query parameter id is required' });
    const malformed = await t.web('GET', statusPath('a b'));
    expect(malformed.status).toBe(400);
  });

  it('is signed over the empty body and the path and query: a signature over another query is 401', async () => {
    const id = newId();
    await t.web('POST', '/api/transaction', { id, amount: 150_000, user });
    const answer = await t.web('GET', statusPath(id), undefined, { signature: webSignature('', statusPath(`${id}x`), PRIVATE_KEY) });
    expect(answer.status).toBe(401);
  });

  it('moves to FAILURE after 15 minutes of virtual time (D13)', async () => {
    const id = newId();
    await t.web('POST', '/api/transaction', { id, amount: 150_000, user });
    await t.advance(14 * 60_000);
    expect((await t.web('GET', statusPath(id))).body.status).toBe('PENDING');
    await t.advance(60_000);
    expect((await t.web('GET', statusPath(id))).body.status).toBe('FAILURE');
  });
});

describe('the hosted page endpoints', () => {
  it('shows the merchant, the amount, the redirect fields and the status', async () => {
    const id = newId();
    const redirect = {
      url: 'https://merchant.example.in/done',
      failureUrl: 'https://merchant.example.in/failed',
      colorOverride: '#1A73E8',
    };
    await t.web('POST', '/api/transaction', { id, amount: 249_900, user, redirect });
    const view = await t.request('GET', `/sandbox/web/transactions/${id}`);
    expect(view.status).toBe(200);
    expect(view.body).toMatchObject({
      transactionId: id,
      status: 'PENDING',
      amount: 249_900,
      merchant: { name: 'Sandbox Test Merchant', homePageUrl: 'https://merchant.example.in/' },
      user,
      redirect: { ...redirect, logoOverride: null },
      redirectTo: null,
    });
    const cancelled = await t.request('POST', `/sandbox/web/transactions/${id}/cancel`);
    expect(cancelled.body.redirectTo).toBe(`https://merchant.example.in/failed?txnId=${id}&txnStatus=CANCELLED`);
    expect((await t.request('POST', `/sandbox/web/transactions/${id}/fail`)).status).toBe(409);
    const final = await t.request('GET', `/sandbox/web/transactions/${id}`);
    expect(final.body).toMatchObject({ redirect: { url: redirect.url, failureUrl: redirect.failureUrl }, redirectTo: cancelled.body.redirectTo });
  });

  it('sends the user back with txnId and txnStatus appended to the query of redirect.url, which is kept byte for byte (D33)', async () => {
    const id = newId();
    const url = 'https://shop.example/?wc-api=wc_gateway_paylater&key=wc_order_Ab%2F1';
    await t.web('POST', '/api/transaction', { id, amount: 150_000, user, redirect: { url } });
    const confirmed = await t.request('POST', `/sandbox/web/transactions/${id}/confirm`);
    expect(confirmed.body.redirectTo).toBe(`${url}&txnId=${id}&txnStatus=SUCCESS`);
    // Without failureUrl a failure goes to redirect.url too, with its own status.
    const failing = newId();
    await t.web('POST', '/api/transaction', { id: failing, amount: 150_000, user, redirect: { url } });
    const failed = await t.request('POST', `/sandbox/web/transactions/${failing}/fail`);
    expect(failed.body.redirectTo).toBe(`${url}&txnId=${failing}&txnStatus=FAILURE`);
  });

  it('answers 404 JSON for an unknown id', async () => {
    expect((await t.request('GET', '/sandbox/web/transactions/nope')).status).toBe(404);
    expect((await t.request('POST', '/sandbox/web/transactions/nope/confirm')).body.errorCode).toBe('NO_SUCH_TRANSACTION');
  });
});

describe('with --require-status-signature (D21 hardening)', () => {
  const strict = useSandbox({ config: { requireStatusSignature: true } });

  it('refuses a status check without X-Signature (401) and answers a signed one', async () => {
    const id = newId();
    expect((await strict.web('POST', '/api/transaction', { id, amount: 150_000, user })).status).toBe(200);
    const unsigned = await strict.web('GET', statusPath(id), undefined, { signature: null });
    expect(unsigned.status).toBe(401);
    expect(unsigned.body).toEqual({
      message: 'AUTHORIZATION_FAILED',
      detail:
        'X-Signature is missing: send base64(SHA-256(the exact body bytes + the path and query exactly as sent + your private key)), 44 characters of standard base64.',
    });
    expect((await strict.web('GET', statusPath(id))).status).toBe(200);
  });
});
