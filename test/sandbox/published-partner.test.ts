/**
 * The service's published test credentials `testPartnerId` / `testPrivateKey` (D72), which its
 * web samples use unchanged: accepted beside the sandbox's own partner by default, with their own
 * key in every signature the sandbox makes for their transactions, and refused when turned off.
 */
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/sandbox/config.js';
import { PUBLISHED_TEST_PARTNER } from '../../src/sandbox/fixtures.js';
import { statusSignature } from '../../src/signature.js';
import { PRIVATE_KEY, useSandbox } from '../support/sandbox.js';

const published = { partnerId: PUBLISHED_TEST_PARTNER.id, key: PUBLISHED_TEST_PARTNER.privateKey };
const order = (id: string) => ({ id, amount: 30_000, user: { name: 'Shyam', phoneNumber: '+919000000001', email: 'shyam@example.in' } });

describe('the published test partner, on by default', () => {
  const t = useSandbox();

  it('initiates, checks the status and signs with testPrivateKey', async () => {
    const initiated = await t.web('POST', '/api/transaction', order('new-transaction-000'), published);
    expect(initiated.status, initiated.text).toBe(200);
    expect(initiated.body.message).toBe('TRANSACTION_INITIATED');
    const confirmed = await t.request('POST', '/sandbox/web/transactions/new-transaction-000/confirm');
    expect(confirmed.body.signature).toBe(statusSignature('new-transaction-000', 'SUCCESS', PUBLISHED_TEST_PARTNER.privateKey));
    const status = await t.web('GET', '/api/transaction/status?id=new-transaction-000', undefined, published);
    expect(status.body).toEqual({
      transactionId: 'new-transaction-000',
      status: 'SUCCESS',
      signature: statusSignature('new-transaction-000', 'SUCCESS', PUBLISHED_TEST_PARTNER.privateKey),
    });
  });

  it("keeps the partners apart: the sandbox's own partner does not see the published partner's transaction", async () => {
    await t.web('POST', '/api/transaction', order('published_only'), published);
    const other = await t.web('GET', '/api/transaction/status?id=published_only');
    expect(other.status).toBe(404);
    const wrongKey = await t.web('POST', '/api/transaction', order('mixed_keys'), { partnerId: PUBLISHED_TEST_PARTNER.id, key: PRIVATE_KEY });
    expect(wrongKey.status).toBe(401);
  });

  it('signs the webhook of its transactions with testPrivateKey', async () => {
    await t.web('POST', '/api/transaction', order('published_hook'), published);
    await t.request('POST', '/sandbox/web/transactions/published_hook/fail');
    const [delivery] = await t.deliveries('published_hook');
    expect(JSON.parse(delivery.body)).toMatchObject({
      status: 'FAILURE',
      signature: statusSignature('published_hook', 'FAILURE', PUBLISHED_TEST_PARTNER.privateKey),
    });
  });
});

describe('turned off', () => {
  const t = useSandbox({ config: { publishedTestPartner: false } });

  it('answers 401 to the published credentials', async () => {
    const answer = await t.web('POST', '/api/transaction', order('refused'), published);
    expect(answer.status).toBe(401);
    expect(answer.body.detail).toContain('X-Partner-Id is not a known partner id');
    // The value sent is never echoed (D71).
    expect(answer.text).not.toContain('testPartnerId');
  });

  it('by the environment variable too', () => {
    expect(resolveConfig({}, { PAYLATER_PUBLISHED_TEST_PARTNER: '0' }).publishedTestPartner).toBe(false);
    expect(resolveConfig({}, {}).publishedTestPartner).toBe(true);
  });
});
