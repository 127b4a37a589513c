/**
 * What a 401 says: the kind of credentials the endpoint takes, and which kind the caller sent when
 * it sent valid credentials of another kind (Merchant API, Transactional API, extras); for the web
 * and SDK flows, which partner header is missing (two spellings) and how the signature is computed.
 * A 401 never says whether a username or password was close, and never repeats credentials.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sdkSignature, webSignature } from '../../src/signature.js';
import { basic, MERCHANT_AUTH, startGateway, type Credentials, type GatewayTest } from '../support/gateway.js';
import { EXTRAS_AUTH, PRIVATE_KEY } from '../support/sandbox.js';

let t: GatewayTest;
let merchant: { id: string; credentials: Credentials };

beforeAll(async () => {
  t = await startGateway();
  merchant = await t.onboard();
});
afterAll(async () => {
  await t?.close();
});

const TRANSACTIONAL_WANTED =
  "This endpoint takes the merchant's Transactional API credentials (HTTP Basic), read from merchant.basicAuthDetails once the merchant is enabled";
const MERCHANT_WANTED = "This endpoint takes the payment gateway's Merchant API credentials (HTTP Basic)";
const EXTRAS_WANTED =
  "This endpoint takes the extras credentials issued by the operator, or the direct integration's partner id and private key as username:password (HTTP Basic)";
const EXTRAS_PATH = '/service/payments/merchant/user/credit/info?userPhoneNumber=%2B919000000001';

async function unauthorized(method: string, path: string, authorization: string | null) {
  const answer = await t.call(method, path, authorization);
  expect(answer.status, answer.text).toBe(401);
  expect(answer.body.errorCode).toBe('AUTHORIZATION_FAILED');
  return { message: answer.body.message as string, realm: answer.headers.get('www-authenticate') };
}

describe('HTTP Basic of the wrong kind', () => {
  it('Merchant API credentials on a Transactional API endpoint', async () => {
    const { message, realm } = await unauthorized('GET', '/api/merchant/transaction', MERCHANT_AUTH);
    expect(message).toBe(`${TRANSACTIONAL_WANTED}; these are Merchant API credentials.`);
    expect(realm).toBe('Basic realm="paylater Transactional API", charset="UTF-8"');
  });

  it("a merchant's Transactional API credentials on a Merchant API endpoint", async () => {
    const { message, realm } = await unauthorized('GET', `/api/merchant/${merchant.id}`, merchant.credentials.auth);
    expect(message).toBe(`${MERCHANT_WANTED}; these are a merchant's Transactional API credentials.`);
    expect(realm).toBe('Basic realm="paylater Merchant API", charset="UTF-8"');
  });

  it('extras credentials on either gateway API', async () => {
    expect((await unauthorized('GET', `/api/merchant/${merchant.id}`, EXTRAS_AUTH)).message).toBe(
      `${MERCHANT_WANTED}; these are extras credentials.`,
    );
    expect((await unauthorized('GET', '/api/merchant/settlement', EXTRAS_AUTH)).message).toBe(
      `${TRANSACTIONAL_WANTED}; these are extras credentials.`,
    );
  });

  it('gateway credentials of either kind on the extras', async () => {
    expect((await unauthorized('POST', EXTRAS_PATH, MERCHANT_AUTH)).message).toBe(`${EXTRAS_WANTED}; these are Merchant API credentials.`);
    expect((await unauthorized('POST', EXTRAS_PATH, merchant.credentials.auth)).message).toBe(
      `${EXTRAS_WANTED}; these are a merchant's Transactional API credentials.`,
    );
  });
});

describe('HTTP Basic that is missing, malformed or wrong', () => {
  it('says what the endpoint takes when nothing, or not Basic, was sent', async () => {
    expect((await unauthorized('GET', '/api/merchant/transaction', null)).message).toBe(
      `Missing HTTP Basic credentials: ${TRANSACTIONAL_WANTED.replace('This endpoint', 'this endpoint')}.`,
    );
    expect((await unauthorized('GET', `/api/merchant/${merchant.id}`, 'Bearer abc.def')).message).toBe(
      `The Authorization header is not HTTP Basic: ${MERCHANT_WANTED.replace('This endpoint', 'this endpoint')}.`,
    );
    expect((await unauthorized('POST', EXTRAS_PATH, `Basic ${Buffer.from('no-colon').toString('base64')}`)).message).toMatch(
      /^Malformed HTTP Basic credentials: send "Basic " and the base64 of username:password\. This endpoint takes the extras/,
    );
  });

  it('answers a wrong password and a wrong username alike, and repeats neither', async () => {
    const { username, password } = merchant.credentials;
    const wrongPassword = await unauthorized('GET', '/api/merchant/transaction', basic(username, `${password.slice(0, -1)}${password.endsWith('x') ? 'y' : 'x'}`));
    const wrongUsername = await unauthorized('GET', '/api/merchant/transaction', basic(`${username}x`, password));
    const nearMerchantApi = await unauthorized('GET', '/api/merchant/transaction', basic('pg_test', 'pg_test_secreT'));
    expect(wrongPassword.message).toBe(`Invalid HTTP Basic credentials: ${TRANSACTIONAL_WANTED.replace('This endpoint', 'this endpoint')}.`);
    expect(wrongUsername.message).toBe(wrongPassword.message);
    expect(nearMerchantApi.message).toBe(wrongPassword.message);
    for (const { message } of [wrongPassword, wrongUsername, nearMerchantApi]) {
      expect(message).not.toContain(username);
      expect(message).not.toContain(password.slice(0, 8));
      expect(message).not.toContain('pg_test');
    }
  });

  it("a disabled merchant's revoked credentials are simply invalid, though the same header was accepted before", async () => {
    const other = await t.onboard();
    // Accepted twice first: the header's credentials (and their digest) are then kept, and must still be checked.
    for (let round = 0; round < 2; round++) expect((await t.call('GET', '/api/merchant/transaction', other.credentials.auth)).status).toBe(200);
    expect((await t.merchantApi('POST', `/api/merchant/${other.id}/disable`)).status).toBe(200);
    expect((await unauthorized('GET', '/api/merchant/transaction', other.credentials.auth)).message).toMatch(/^Invalid HTTP Basic credentials/);
  });
});

describe('web and SDK partner headers and signatures', () => {
  const sdkBody = JSON.stringify({ merchantTransactionId: 'cred_1' });
  const webBody = JSON.stringify({ id: 'cred_web_1', amount: 10_000, user: { name: 'Asha Rao', phoneNumber: '+919000000001' } });

  async function detail(path: string, headers: Record<string, string>, body: string): Promise<string> {
    const answer = await t.request('POST', path, { body, headers: { 'Content-Type': 'application/json', ...headers } });
    expect(answer.status, answer.text).toBe(401);
    expect(answer.body.message).toBe('AUTHORIZATION_FAILED');
    expect(answer.text).not.toContain(PRIVATE_KEY);
    return answer.body.detail as string;
  }

  it('names the header of the other flow when it was sent instead', async () => {
    const sdk = await detail('/merchant/credit/checkTransactionStatus', { 'X-Partner-Id': 'partner_test', 'X-Signature': sdkSignature(sdkBody, PRIVATE_KEY) }, sdkBody);
    expect(sdk).toBe("X-Partnerid is missing: the SDK flow spells the partner id header X-Partnerid (X-Partner-Id is the web flow's).");
    const web = await detail('/api/transaction', { 'X-Partnerid': 'partner_test', 'X-Signature': webSignature(webBody, '/api/transaction', PRIVATE_KEY) }, webBody);
    expect(web).toBe("X-Partner-Id is missing: the web flow spells the partner id header X-Partner-Id (X-Partnerid is the SDK flow's).");
  });

  it('says that Basic credentials are not how these flows authenticate', async () => {
    const web = await detail('/api/transaction', { Authorization: MERCHANT_AUTH }, webBody);
    expect(web).toBe(
      'X-Partner-Id is missing: the web flow takes no HTTP Basic credentials; send your partner id in X-Partner-Id and the request signature in X-Signature.',
    );
  });

  it('says how each flow computes X-Signature when it is missing, malformed or wrong, without the key', async () => {
    const web = await detail('/api/transaction', { 'X-Partner-Id': 'partner_test' }, webBody);
    expect(web).toBe(
      'X-Signature is missing: send base64(SHA-256(the exact body bytes + the path and query exactly as sent + your private key)), 44 characters of standard base64.',
    );
    const hex = Buffer.from(webSignature(webBody, '/api/transaction', PRIVATE_KEY), 'base64').toString('hex');
    // A signature not of the D28 form is a malformed request (400), as the mock answers it too.
    const malformed = await t.request('POST', '/api/transaction', {
      body: webBody,
      headers: { 'Content-Type': 'application/json', 'X-Partner-Id': 'partner_test', 'X-Signature': hex },
    });
    expect(malformed.status, malformed.text).toBe(400);
    expect(malformed.body.message).toBe('BAD_REQUEST');
    expect(malformed.body.detail).toMatch(/^X-Signature is malformed \(64 characters\): expected the standard base64 of the 32-byte SHA-256 digest, 44 characters/);
    expect(malformed.text).not.toContain(hex);
    expect(malformed.text).not.toContain(PRIVATE_KEY);
    const wrongKey = webSignature(webBody, '/api/transaction', 'another_key');
    const wrong = await detail('/api/transaction', { 'X-Partner-Id': 'partner_test', 'X-Signature': wrongKey }, webBody);
    expect(wrong).toBe(
      'X-Signature does not match the request body, path and query: it must be base64(SHA-256(the exact body bytes + the path and query exactly as sent + your private key)).',
    );
    expect(wrong).not.toContain(wrongKey);
    expect(wrong).not.toContain(webSignature(webBody, '/api/transaction', PRIVATE_KEY));
  });
});
