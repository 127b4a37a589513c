/**
 * The Merchant API of the gateway sandbox: create (D04), documents (D08), verification and stages
 * (D09), disable (D10), dashboard access (D11), credentials (D07) and their revocation, and the
 * sandbox helper /sandbox/gateway/merchants/{id}/verify. Every answer is validated against the
 * bundled document.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { basic, FILES, MERCHANT_AUTH, startGateway, type GatewayTest } from '../support/gateway.js';

let t: GatewayTest;

beforeAll(async () => {
  t = await startGateway();
});
afterAll(async () => {
  await t.close();
});
afterEach(() => {
  expect(t.loggedErrors).toEqual([]);
});

describe('create merchant', () => {
  it('answers 201 with the record in documentsPending, without images or settlement details', async () => {
    const id = t.id('m');
    const answer = await t.merchantApi('POST', '/api/merchant', {
      merchant: {
        id,
        brandName: 'Acme',
        entityName: 'Acme Retail Private Limited',
        brandHomePageUrl: 'https://acme.example.in',
        mccCode: 5411,
        defaultLogo: { type: 'base64', values: FILES.png },
        defaultWebhookUrl: 'https://pg.example.in/hooks',
        defaultColor: '#1A73E8',
        settlementDetails: { accountNumber: '001234567890', ifscCode: 'HDFC0001234', beneficiaryName: 'Acme', mdrChargedOnMerchant: true },
      },
    });
    expect(answer.status).toBe(201);
    expect(answer.operationId).toBe('createMerchant');
    const merchant = answer.body.merchant;
    expect(merchant).toMatchObject({
      id,
      stage: 'documentsPending',
      documents: [],
      requiredDocumentTypes: ['PAN', 'CANCELLED_CHEQUE'],
      defaultWebhookUrl: 'https://pg.example.in/hooks',
      defaultColor: '#1A73E8',
    });
    expect(merchant).not.toHaveProperty('defaultLogo');
    expect(merchant).not.toHaveProperty('settlementDetails');
    expect(merchant).not.toHaveProperty('basicAuthDetails');
    expect(merchant.createdAt).toBe(merchant.updatedAt);
  });

  it('answers 400 DUPLICATE_ID for an id that exists', async () => {
    const { id } = await t.createMerchant();
    const again = await t.createMerchant({ id });
    expect(again.answer.status).toBe(400);
    expect(again.answer.body.errorCode).toBe('DUPLICATE_ID');
  });

  it('answers 400 BAD_REQUEST for the reserved ids and for missing fields', async () => {
    for (const id of ['transaction', 'settlement']) {
      const answer = (await t.createMerchant({ id })).answer;
      expect(answer.status).toBe(400);
      expect(answer.body.errorCode).toBe('BAD_REQUEST');
      expect(answer.body.details.map((detail: { field: string }) => detail.field)).toContain('/merchant/id');
    }
    const missing = await t.merchantApi('POST', '/api/merchant', { merchant: { id: t.id('m'), brandName: 'x' } });
    expect(missing.status).toBe(400);
    expect(missing.body.details.length).toBeGreaterThanOrEqual(3);
  });

  it('answers 400 for a body that is not JSON or not sent as JSON', async () => {
    const notJson = await t.call('POST', '/api/merchant', MERCHANT_AUTH, '{"merchant":', { 'Content-Type': 'application/json' });
    expect(notJson.status).toBe(400);
    expect(notJson.body.errorCode).toBe('BAD_REQUEST');
    const wrongType = await t.call('POST', '/api/merchant', MERCHANT_AUTH, '{}', { 'Content-Type': 'text/plain' });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.details).toEqual([{ field: 'Content-Type', issue: 'must be application/json' }]);
  });

  it('answers 413 PAYLOAD_TOO_LARGE for a body over 1 MiB', async () => {
    const answer = await t.call('POST', '/api/merchant', MERCHANT_AUTH, `{"x":"${'a'.repeat(1024 * 1024)}"}`);
    expect(answer.status).toBe(413);
    expect(answer.body.errorCode).toBe('PAYLOAD_TOO_LARGE');
  });
});

describe('Merchant API credentials', () => {
  it('answers 401 AUTHORIZATION_FAILED without, with wrong, and with Transactional API credentials', async () => {
    const { id, credentials } = await t.onboard();
    const none = await t.call('GET', `/api/merchant/${id}`, null);
    expect(none.status).toBe(401);
    expect(none.body.errorCode).toBe('AUTHORIZATION_FAILED');
    expect(none.headers.get('www-authenticate')).toMatch(/^Basic /);
    const wrong = await t.call('GET', `/api/merchant/${id}`, basic('pg_test', 'nope'));
    expect(wrong.status).toBe(401);
    const otherKind = await t.call('GET', `/api/merchant/${id}`, credentials.auth);
    expect(otherKind.status).toBe(401);
    expect(otherKind.text).not.toContain(credentials.password);
    // ... and the Merchant API credentials do not reach the Transactional API.
    const reverse = await t.call('GET', '/api/merchant/transaction', MERCHANT_AUTH);
    expect(reverse.status).toBe(401);
  });

  it('answers 404 NOT_FOUND for an unknown merchant', async () => {
    for (const [method, path, body] of [
      ['GET', '/api/merchant/nobody_here', undefined],
      ['POST', '/api/merchant/nobody_here/document', { documentType: 'PAN', document: { type: 'base64', value: FILES.pdf } }],
      ['POST', '/api/merchant/nobody_here/disable', undefined],
      ['POST', '/api/merchant/nobody_here/dashboard-access', { dashboardUser: { name: 'P', email: 'p@example.in' } }],
    ] as const) {
      const answer = await t.merchantApi(method, path, body);
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.body.errorCode).toBe('NOT_FOUND');
    }
  });
});

describe('documents and verification', () => {
  it('accepts PDF, PNG and JPEG, replaces a type while pending, and rejects other files with 400', async () => {
    const { id } = await t.createMerchant();
    const pdf = await t.upload(id, 'GST_CERTIFICATE', FILES.pdf);
    expect(pdf.status).toBe(200);
    expect(pdf.body.merchant.documents).toEqual([{ documentType: 'GST_CERTIFICATE', status: 'uploaded' }]);
    expect((await t.upload(id, 'GST_CERTIFICATE', FILES.png)).body.merchant.documents).toHaveLength(1);
    expect((await t.upload(id, 'PAN', FILES.jpeg)).body.merchant.stage).toBe('documentsPending');

    const text = await t.upload(id, 'CANCELLED_CHEQUE', FILES.text);
    expect(text.status).toBe(400);
    expect(text.body.errorCode).toBe('BAD_REQUEST');
    expect(text.body.message).toMatch(/PDF, PNG or JPEG/);
    expect(text.body.details).toEqual([{ field: '/document/value', issue: 'must be the base64 of a PDF, PNG or JPEG file' }]);

    const unpadded = await t.upload(id, 'CANCELLED_CHEQUE', 'JVBERi0xLjQK1');
    expect(unpadded.status).toBe(400);
    const tooLarge = await t.upload(id, 'CANCELLED_CHEQUE', Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(700 * 1024)]).toString('base64'));
    expect(tooLarge.status).toBe(400);
    expect(tooLarge.body.details[0].field).toBe('/document/value');
    const notBase64 = await t.upload(id, 'CANCELLED_CHEQUE', 'not base64!');
    expect(notBase64.status).toBe(400);
    expect((await t.merchantApi('GET', `/api/merchant/${id}`)).body.merchant.stage).toBe('documentsPending');
  });

  it('moves to verificationInProgress with both required documents, and to enabled 5 s later', async () => {
    const { id } = await t.createMerchant();
    await t.upload(id, 'CANCELLED_CHEQUE');
    const both = await t.upload(id, 'PAN');
    expect(both.body.merchant.stage).toBe('verificationInProgress');
    expect(both.body.merchant.basicAuthDetails).toBeUndefined();

    const late = await t.upload(id, 'PAN');
    expect(late.status).toBe(409);
    expect(late.body.errorCode).toBe('INVALID_STATE');

    await t.advance(4_000);
    expect((await t.merchantApi('GET', `/api/merchant/${id}`)).body.merchant.stage).toBe('verificationInProgress');
    await t.advance(1_000);
    const enabled = (await t.merchantApi('GET', `/api/merchant/${id}`)).body.merchant;
    expect(enabled.stage).toBe('enabled');
    expect(enabled.basicAuthDetails.username).toMatch(new RegExp(`^txn_${id}_`));
    expect((await t.upload(id, 'GST_CERTIFICATE')).status).toBe(409);
  });

  it('rejects the PAN on the first verification when the entityName contains "Reject"; a new PAN passes', async () => {
    const { id } = await t.createMerchant({ entityName: 'Please Reject Me Pvt Ltd' });
    await t.upload(id, 'PAN');
    await t.upload(id, 'CANCELLED_CHEQUE');
    await t.advance(5_000);
    const rejected = (await t.merchantApi('GET', `/api/merchant/${id}`)).body.merchant;
    expect(rejected.stage).toBe('documentsPending');
    const pan = rejected.documents.find((document: { documentType: string }) => document.documentType === 'PAN');
    expect(pan.status).toBe('rejected');
    expect(pan.rejectionReason).toMatch(/PAN/);
    expect(rejected.basicAuthDetails).toBeUndefined();

    const again = await t.upload(id, 'PAN', FILES.png);
    expect(again.body.merchant.stage).toBe('verificationInProgress');
    expect(again.body.merchant.documents.find((document: { documentType: string }) => document.documentType === 'PAN')).toEqual({
      documentType: 'PAN',
      status: 'uploaded',
    });
    await t.advance(5_000);
    expect((await t.merchantApi('GET', `/api/merchant/${id}`)).body.merchant.stage).toBe('enabled');
  });

  it('POST /sandbox/gateway/merchants/{id}/verify finishes verification at once, pass or reject', async () => {
    const { id } = await t.createMerchant();
    const early = await t.request('POST', `/sandbox/gateway/merchants/${id}/verify`);
    expect(early.status).toBe(409);
    await t.upload(id, 'PAN');
    await t.upload(id, 'CANCELLED_CHEQUE');
    const rejected = await t.request('POST', `/sandbox/gateway/merchants/${id}/verify`, {
      body: '{"outcome":"reject"}',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(rejected.status).toBe(200);
    expect(rejected.body.merchant.stage).toBe('documentsPending');
    await t.upload(id, 'PAN');
    const passed = await t.request('POST', `/sandbox/gateway/merchants/${id}/verify`);
    expect(passed.body.merchant.stage).toBe('enabled');
    expect(passed.body.merchant.basicAuthDetails.password).toEqual(expect.any(String));
    const bad = await t.request('POST', `/sandbox/gateway/merchants/${id}/verify`, {
      body: '{"outcome":"maybe"}',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(bad.status).toBe(400);
    expect((await t.request('POST', '/sandbox/gateway/merchants/nobody/verify')).status).toBe(404);
  });
});

describe('disable', () => {
  it('is idempotent, final, hides and revokes the credentials (401 afterwards)', async () => {
    const { id, credentials } = await t.onboard();
    expect((await t.call('GET', '/api/merchant/transaction', credentials.auth)).status).toBe(200);

    const disabled = await t.merchantApi('POST', `/api/merchant/${id}/disable`, { reason: 'Closed its business.' });
    expect(disabled.status).toBe(200);
    expect(disabled.body.merchant.stage).toBe('disabled');
    expect(disabled.body.merchant.basicAuthDetails).toBeUndefined();
    const again = await t.merchantApi('POST', `/api/merchant/${id}/disable`);
    expect(again.status).toBe(200);
    expect(again.body.merchant.stage).toBe('disabled');

    const revoked = await t.call('GET', '/api/merchant/transaction', credentials.auth);
    expect(revoked.status).toBe(401);
    expect(revoked.body.errorCode).toBe('AUTHORIZATION_FAILED');
    const check = await t.call('POST', '/api/merchant/transaction/pre-eligibility', credentials.auth, {
      user: { name: 'A', phoneNumber: '+919000000001' },
      transaction: { amount: 1000 },
      deviceInformation: { userAgent: 'x', ipAddress: '1.2.3.4' },
    });
    expect(check.status).toBe(401);
    expect((await t.upload(id, 'PAN')).status).toBe(409);
    expect((await t.merchantApi('GET', `/api/merchant/${id}`)).body.merchant.stage).toBe('disabled');
  });

  it('disables from documentsPending and from verificationInProgress (no verification afterwards)', async () => {
    const pending = await t.createMerchant();
    expect((await t.merchantApi('POST', `/api/merchant/${pending.id}/disable`)).body.merchant.stage).toBe('disabled');

    const verifying = await t.createMerchant();
    await t.upload(verifying.id, 'PAN');
    await t.upload(verifying.id, 'CANCELLED_CHEQUE');
    expect((await t.merchantApi('POST', `/api/merchant/${verifying.id}/disable`)).body.merchant.stage).toBe('disabled');
    await t.advance(10_000);
    const read = await t.merchantApi('GET', `/api/merchant/${verifying.id}`);
    expect(read.body.merchant.stage).toBe('disabled');
    expect(read.body.merchant.basicAuthDetails).toBeUndefined();
  });
});

describe('dashboard access', () => {
  it('answers 201 with an invitation valid 7 days; the same email 400 DUPLICATE_ID; a disabled merchant 409 INVALID_STATE', async () => {
    const { id } = await t.createMerchant();
    const answer = await t.merchantApi('POST', `/api/merchant/${id}/dashboard-access`, {
      dashboardUser: { name: 'Priya Shah', email: 'priya@acme.example.in' },
    });
    expect(answer.status).toBe(201);
    const access = answer.body.dashboardAccess;
    expect(access).toMatchObject({ name: 'Priya Shah', email: 'priya@acme.example.in' });
    const clock = (await t.request('GET', '/sandbox/clock')).body;
    expect(Date.parse(access.invitationExpiresAt) - clock.nowMs).toBeGreaterThan(7 * 24 * 3600_000 - 60_000);
    const invitation = await t.request('GET', new URL(access.loginUrl).pathname);
    expect(invitation.body).toMatchObject({ merchantId: id, email: 'priya@acme.example.in', valid: true });

    const duplicate = await t.merchantApi('POST', `/api/merchant/${id}/dashboard-access`, {
      dashboardUser: { name: 'Priya again', email: 'PRIYA@acme.example.in' },
    });
    expect(duplicate.status).toBe(400);
    expect(duplicate.body.errorCode).toBe('DUPLICATE_ID');

    await t.merchantApi('POST', `/api/merchant/${id}/disable`);
    const disabled = await t.merchantApi('POST', `/api/merchant/${id}/dashboard-access`, {
      dashboardUser: { name: 'Ravi', email: 'ravi@acme.example.in' },
    });
    expect(disabled.status).toBe(409);
    expect(disabled.body.errorCode).toBe('INVALID_STATE');
  });

  it('answers 400 for an invalid email', async () => {
    const { id } = await t.createMerchant();
    const answer = await t.merchantApi('POST', `/api/merchant/${id}/dashboard-access`, { dashboardUser: { name: 'X', email: 'not-an-email' } });
    expect(answer.status).toBe(400);
    expect(answer.body.details[0].field).toBe('/dashboardUser/email');
  });
});
