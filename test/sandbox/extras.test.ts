import { describe, expect, it } from 'vitest';
import { nextDueDate, TEST_USERS } from '../../src/sandbox/test-users.js';
import { useSandbox } from '../support/sandbox.js';

const CREDIT = '/service/payments/merchant/user/credit/info';
const IDENTIFICATION = '/service/database/merchant/user/feed/identification';
const DATA = '/service/database/merchant/user/feed/merchant-data';

const t = useSandbox();

const credit = (phone: string) => t.extras(`${CREDIT}?userPhoneNumber=${encodeURIComponent(phone)}`);
const DEFAULTS = { creditLimit: 0, creditTaken: 0, paymentLink: '', upcomingDueDate: '', outstandingAmount: 0, dueAmount: 0 };

describe('credit info of the test users', () => {
  it('+919000000001: registered, ₹50,000 limit, credit taken and a due date', async () => {
    const answer = await credit('+919000000001');
    expect(answer.status).toBe(200);
    expect(answer.operationId).toBe('getCreditInfo');
    const clock = await t.request('GET', '/sandbox/clock');
    expect(answer.body).toEqual({
      registrationStatus: 'registered',
      creditLimit: 5_000_000,
      creditTaken: 1_250_000,
      paymentLink: 'https://pay.paylater.example/u/9000000001',
      upcomingDueDate: nextDueDate(5, new Date(clock.body.nowMs)),
      outstandingAmount: 1_250_000,
      dueAmount: 400_000,
    });
    expect(answer.body.upcomingDueDate).toMatch(/^05\/[01][0-9]\/[0-9]{4}$/);
  });

  it('+919000000002: registered (pre-eligibility declines it for risk)', async () => {
    const answer = await credit('+919000000002');
    expect(answer.body).toMatchObject({ registrationStatus: 'registered', creditLimit: 2_000_000 });
  });

  it('+919000000003: registered, ₹10,000 limit', async () => {
    const answer = await credit('+919000000003');
    expect(answer.body).toMatchObject({ registrationStatus: 'registered', creditLimit: 1_000_000, creditTaken: 0, upcomingDueDate: '' });
  });

  it('+919000000004: registered and approved', async () => {
    expect((await credit('+919000000004')).body).toMatchObject({ registrationStatus: 'registered', creditLimit: 5_000_000 });
  });

  it('+919000000005: registered, not approved: creditLimit 0 and defaults', async () => {
    expect((await credit('+919000000005')).body).toEqual({ registrationStatus: 'registered', ...DEFAULTS });
  });

  it('+919000000009: blocked: registered with no credit', async () => {
    expect((await credit('+919000000009')).body).toEqual({ registrationStatus: 'registered', ...DEFAULTS });
  });

  it('any other number: unregistered with defaults', async () => {
    expect((await credit('+919876543210')).body).toEqual({ registrationStatus: 'unregistered', ...DEFAULTS });
  });

  it('every documented test user answers a valid body', async () => {
    for (const user of TEST_USERS) expect((await credit(user.phoneNumber)).status).toBe(200);
  });

  it('due dates move with the virtual clock', async () => {
    const before = (await credit('+919000000001')).body.upcomingDueDate as string;
    await t.advance(20 * 24 * 60 * 60 * 1000);
    await t.advance(20 * 24 * 60 * 60 * 1000);
    const after = (await credit('+919000000001')).body.upcomingDueDate as string;
    expect(after).not.toBe(before);
  });
});

describe('credentials (D26)', () => {
  it("takes a partner's partnerId:privateKey, as the service's UPI sample sends it, beside the extras pair", async () => {
    for (const pair of ['partner_test:test_private_key', 'testPartnerId:testPrivateKey', 'extras_test:extras_test_secret']) {
      const authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
      const answer = await t.extras(`${CREDIT}?userPhoneNumber=%2B919000000001`, undefined, { authorization });
      expect(answer.status, pair.split(':')[0]).toBe(200);
      const push = await t.extras(IDENTIFICATION, { userPhoneNumber: '+919000000001', identification: { panNumber: 'ABCDE1234F' } }, { authorization });
      expect(push.status).toBe(200);
    }
    // A partner id with another partner's key, or the key alone, is refused and never echoed.
    for (const pair of ['partner_test:testPrivateKey', 'testPartnerId:test_private_key', ':test_private_key']) {
      const answer = await t.extras(`${CREDIT}?userPhoneNumber=%2B919000000001`, undefined, { authorization: `Basic ${Buffer.from(pair).toString('base64')}` });
      expect(answer.status, pair).toBe(401);
      expect(answer.text).not.toContain('private_key');
      expect(answer.text).not.toContain('PrivateKey');
      expect(answer.body.message).toContain("partner id and private key as username:password");
    }
  });
});

describe('errors', () => {
  it('answers 401 AUTHORIZATION_FAILED without, with wrong or with malformed credentials', async () => {
    const wrong = `Basic ${Buffer.from('extras_test:nope').toString('base64')}`;
    const gateway = `Basic ${Buffer.from('pg_test:pg_test_secret').toString('base64')}`;
    for (const authorization of [null, wrong, gateway, 'Basic !!!', 'Bearer abc', `Basic ${Buffer.from('nocolon').toString('base64')}`]) {
      const answer = await t.extras(`${CREDIT}?userPhoneNumber=%2B919000000001`, undefined, { authorization });
      expect(answer.status, String(authorization)).toBe(401);
      expect(answer.body.errorCode).toBe('AUTHORIZATION_FAILED');
      expect(answer.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
    }
    const push = await t.extras(IDENTIFICATION, { userPhoneNumber: '+919000000001', identification: { panNumber: 'ABCDE1234F' } }, { authorization: wrong });
    expect(push.status).toBe(401);
  });

  it('answers 400 BAD_REQUEST with details for a bad phone number (also an unencoded +)', async () => {
    const bad = await credit('9000000001');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({
      errorCode: 'BAD_REQUEST',
      details: [{ field: 'userPhoneNumber', issue: 'must be +91 and the ten digits of an Indian mobile number, without spaces, e.g. +919000000001' }],
    });
    const plus = await t.extras(`${CREDIT}?userPhoneNumber=+919000000001`);
    expect(plus.status).toBe(400);
    expect(plus.body.details[0].issue).toContain('write it %2B');
    const missing = await t.extras(CREDIT);
    expect(missing.body).toMatchObject({ errorCode: 'BAD_REQUEST', details: [{ field: 'userPhoneNumber', issue: 'is required' }] });
    const twice = await t.extras(`${CREDIT}?userPhoneNumber=%2B919000000001&userPhoneNumber=%2B919000000002`);
    expect(twice.body).toMatchObject({ errorCode: 'BAD_REQUEST', details: [{ field: 'userPhoneNumber', issue: 'must be given once' }] });
  });
});

describe('identification push', () => {
  it('stores what it receives; a later push replaces the fields it carries', async () => {
    const phone = '+919111111111';
    const first = await t.extras(IDENTIFICATION, { userPhoneNumber: phone, identification: { aadharNumber: '123412341234', panNumber: 'ABCDE1234F' } });
    expect(first.status).toBe(200);
    expect(first.operationId).toBe('pushIdentification');
    expect(first.body).toEqual({ message: 'ok' });
    await t.extras(IDENTIFICATION, { userPhoneNumber: phone, identification: { panNumber: 'ZZZZZ9999Z' } });
    const stored = await t.request('GET', `/sandbox/extras/users/${encodeURIComponent(phone)}`);
    expect(stored.body).toMatchObject({
      userPhoneNumber: phone,
      testUser: null,
      identification: { aadharNumber: '123412341234', panNumber: 'ZZZZZ9999Z' },
    });
  });

  it('validates the identification (D26)', async () => {
    const cases: [unknown, string][] = [
      [{ userPhoneNumber: '+919000000001', identification: {} }, '/identification'],
      [{ userPhoneNumber: '+919000000001', identification: { aadharNumber: '1234' } }, '/identification/aadharNumber'],
      [{ userPhoneNumber: '+919000000001', identification: { panNumber: 'abcde1234f' } }, '/identification/panNumber'],
      [{ userPhoneNumber: '+919000000001', identification: { panNumber: 'ABCDE1234F', voterId: 'x' } }, '/identification/voterId'],
      [{ identification: { panNumber: 'ABCDE1234F' } }, '/userPhoneNumber'],
      [{ userPhoneNumber: '+1555', identification: { panNumber: 'ABCDE1234F' } }, '/userPhoneNumber'],
    ];
    for (const [body, field] of cases) {
      const answer = await t.extras(IDENTIFICATION, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.errorCode).toBe('BAD_REQUEST');
      expect(answer.body.message).toMatch(/^Request body is invalid: /);
      expect(answer.body.details.map((detail: { field: string }) => detail.field)).toContain(field);
    }
  });

  it('answers 400 for invalid JSON and a wrong content type, 413 over 1 MiB', async () => {
    const invalid = await t.request('POST', IDENTIFICATION, {
      body: '{',
      headers: { 'Content-Type': 'application/json', Authorization: `Basic ${Buffer.from('extras_test:extras_test_secret').toString('base64')}` },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.message).toMatch(/not valid JSON/);
    const text = await t.request('POST', IDENTIFICATION, {
      body: '{}',
      headers: { 'Content-Type': 'text/plain', Authorization: `Basic ${Buffer.from('extras_test:extras_test_secret').toString('base64')}` },
    });
    expect(text.status).toBe(400);
    expect(text.body.details).toEqual([{ field: 'Content-Type', issue: 'must be application/json' }]);
    const big = await t.extras(DATA, { userPhoneNumber: '+919000000001', data: { blob: 'x'.repeat(1_048_576) } });
    expect(big.status).toBe(413);
    expect(big.body).toEqual({ errorCode: 'PAYLOAD_TOO_LARGE', message: 'The request body exceeds the limit of 1048576 bytes.' });
  });
});

describe('merchant data push', () => {
  it('accepts an object and an array, and records every push as sent', async () => {
    const phone = '+919222222222';
    const object = await t.extras(DATA, { userPhoneNumber: phone, data: { customerSince: '2023-04-01', ordersLast90Days: 7 } });
    expect(object.status).toBe(200);
    expect(object.body).toEqual({ message: 'ok' });
    const array = await t.extras(DATA, { userPhoneNumber: phone, data: [{ orderId: 'ord_1001', amount: 249900 }] });
    expect(array.body).toEqual({ message: 'ok' });
    const stored = await t.request('GET', `/sandbox/extras/users/${encodeURIComponent(phone)}`);
    expect(stored.body.merchantData.map((push: { data: unknown }) => push.data)).toEqual([
      { customerSince: '2023-04-01', ordersLast90Days: 7 },
      [{ orderId: 'ord_1001', amount: 249900 }],
    ]);
  });

  it('reads back a page of large and non-ASCII pushes with the Content-Length of its UTF-8 bytes', async () => {
    const phone = '+919222222223';
    // Over 256 KiB of text, written in pieces; accents and an emoji count more bytes than characters.
    const large = { note: 'é'.repeat(200_000), more: '\u{1F600}'.repeat(30_000) };
    const small = ['ü', { nested: 'ß' }];
    expect((await t.extras(DATA, { userPhoneNumber: phone, data: large })).status).toBe(200);
    expect((await t.extras(DATA, { userPhoneNumber: phone, data: small })).status).toBe(200);
    const stored = await t.request('GET', `/sandbox/extras/users/${encodeURIComponent(phone)}?limit=2`);
    expect(stored.status).toBe(200);
    expect(stored.headers.get('content-length')).toBe(String(Buffer.byteLength(stored.text)));
    expect(stored.body.merchantData.map((push: { data: unknown }) => push.data)).toEqual([large, small]);
  });

  it('rejects data that is neither an object nor an array', async () => {
    for (const data of ['text', 42, null]) {
      const answer = await t.extras(DATA, { userPhoneNumber: '+919000000001', data });
      expect(answer.status).toBe(400);
      expect(answer.body.details[0].field).toBe('/data');
    }
  });
});

describe("the UPI sample's calls outside the description (D124)", () => {
  const basic = `Basic ${Buffer.from('partner_test:test_private_key').toString('base64')}`;
  const calls = [
    ['GET', '/service/payments/merchant/user/registration/status?userPhoneNumber=%2B919000000001'],
    ['POST', '/service/payments/merchant/user/registration/otp/request'],
    ['POST', '/service/payments/merchant/user/registration/otp/verify'],
    ['POST', '/service/payments/merchant/transactions/instant'],
    ['GET', '/service/payments/merchant/transactions/status?merchantTransactionId=upi_1'],
  ] as const;

  it('answers each with 404 in the extras format, saying it is outside the interface description', async () => {
    for (const [method, path] of calls) {
      const answer = await t.request(method, path, {
        headers: { Authorization: basic, 'Content-Type': 'application/json' },
        ...(method === 'POST' ? { body: '{"userPhoneNumber":"+919000000001"}' } : {}),
      });
      expect(answer.status, path).toBe(404);
      expect(answer.body.errorCode, path).toBe('NOT_FOUND');
      expect(answer.body.message, path).toContain("is an endpoint of the service's UPI sample");
      expect(answer.body.message, path).toContain('the interface description does not have');
      expect(answer.body.message, path).toContain(path.split('?')[0]);
    }
  });

  it('keeps the plain 404 for any other unknown path', async () => {
    const answer = await t.request('POST', '/service/payments/merchant/transactions/other');
    expect(answer.status).toBe(404);
    expect(answer.body.message).toMatch(/^No route for POST/);
  });
});
