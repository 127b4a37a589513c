/**
 * The hosted mode (src/sandbox/access.ts, D142): two partners and two merchants, each trying every
 * control endpoint, the deliveries list and the live stream on the other's records, all refused as
 * if the record did not exist; each reaches its own; the operator sees all; on loopback nothing
 * changes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webSignature } from '../../src/signature.js';
import { isHosted, isLoopbackHost } from '../../src/sandbox/access.js';
import { banner } from '../../src/cli/sandbox-command.js';
import { resolveConfig } from '../../src/sandbox/config.js';
import { PUBLISHED_TEST_PARTNER } from '../../src/sandbox/fixtures.js';
import { ELIGIBLE, MERCHANT_AUTH, startGateway, type GatewayTest } from '../support/gateway.js';
import { initiateSdk, PARTNER_ID, PRIVATE_KEY, useSandbox, waitFor } from '../support/sandbox.js';

const OPERATOR_TOKEN = 'operator-token-of-this-test-0123456789';
const OPERATOR = { Authorization: `Bearer ${OPERATOR_TOKEN}` };
const user = { name: 'Asha Rao', phoneNumber: '+919000000001', email: 'asha.rao@example.in' };

interface PartnerKeys {
  id: string;
  key: string;
}
const A: PartnerKeys = { id: PARTNER_ID, key: PRIVATE_KEY };
const B: PartnerKeys = { id: PUBLISHED_TEST_PARTNER.id, key: PUBLISHED_TEST_PARTNER.privateKey };

/** The headers of a partner's signed request to a /sandbox/ endpoint (the web flow's signature). */
function partnerHeaders(partner: PartnerKeys, pathAndQuery: string, body = ''): Record<string, string> {
  return {
    'X-Partner-Id': partner.id,
    'X-Signature': webSignature(body, pathAndQuery, partner.key),
    ...(body === '' ? {} : { 'Content-Type': 'application/json' }),
  };
}

/** Reads a live stream's text as it comes. */
async function openStream(url: string, headers: Record<string, string>): Promise<{ text: () => string; close: () => void; status: number }> {
  const controller = new AbortController();
  const answer = await fetch(`${url}/sandbox/webhooks/stream`, { headers, signal: controller.signal });
  let text = '';
  if (answer.body !== null && answer.status === 200) {
    const reader = answer.body.getReader();
    void (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          text += Buffer.from(value).toString('utf8');
        }
      } catch {
        // Aborted.
      }
    })();
  } else {
    await answer.text();
  }
  return { text: () => text, close: () => controller.abort(), status: answer.status };
}

describe('a hosted sandbox', () => {
  let t: GatewayTest;
  const ids = { webA: 'web_a_1', webB: 'web_b_1', sdkA: 'sdk_a_1', sdkB: 'sdk_b_1' };
  let m1: { id: string; auth: string; transaction: string };
  let m2: { id: string; auth: string; transaction: string };

  beforeAll(async () => {
    t = await startGateway({ config: { hosted: true, operatorToken: OPERATOR_TOKEN } });
    for (const [id, partner] of [
      [ids.webA, A],
      [ids.webB, B],
    ] as const) {
      const answer = await t.web('POST', '/api/transaction', { id, amount: 150_000, user }, { partnerId: partner.id, key: partner.key });
      expect(answer.status, answer.text).toBe(200);
    }
    await initiateSdk(t, ids.sdkA);
    const sdkB = await t.sdk(
      '/merchant/credit/initiateTransaction',
      { merchantTransactionId: ids.sdkB, userPhoneNumber: ELIGIBLE, userId: 'user_1', amount: 250_000 },
      { partnerId: B.id, key: B.key },
    );
    expect(sdkB.status, sdkB.text).toBe(201);
    const merchants = [];
    for (let index = 0; index < 2; index++) {
      const { id, credentials } = await t.onboard();
      const transaction = await t.successful(credentials.auth);
      merchants.push({ id, auth: credentials.auth, transaction });
    }
    [m1, m2] = merchants as [typeof m1, typeof m2];
  }, 60_000);
  afterAll(() => t?.close());

  it('is on by itself beyond loopback, and off on loopback unless asked', () => {
    expect(isLoopbackHost('127.0.0.1')).toBe(true);
    expect(isLoopbackHost('::1')).toBe(true);
    expect(isLoopbackHost('localhost')).toBe(true);
    expect(isLoopbackHost('0.0.0.0')).toBe(false);
    expect(isLoopbackHost('192.168.1.5')).toBe(false);
    expect(isHosted(resolveConfig())).toBe(false);
    expect(isHosted(resolveConfig({ host: '0.0.0.0' }))).toBe(true);
    expect(isHosted(resolveConfig({ host: '0.0.0.0' }, { PAYLATER_HOSTED: '0' }))).toBe(false);
    expect(isHosted(resolveConfig({}, { PAYLATER_HOSTED: '1' }))).toBe(true);
  });

  it('refuses a short operator token, and prints a token it made with a ready link, one it was given never', () => {
    expect(() => resolveConfig({}, { PAYLATER_OPERATOR_TOKEN: 'short' })).toThrow('PAYLATER_OPERATOR_TOKEN must be at least 16 characters, without spaces');
    const made = { hosted: true, operatorToken: 'made-at-start-abcdefghijklmnop' };
    const printed = banner('http://0.0.0.0:4000', resolveConfig({ host: '0.0.0.0' }), undefined, made);
    expect(printed).toContain('Operator token:                made-at-start-abcdefghijklmnop');
    expect(printed).toContain('Ready link (operator):         http://0.0.0.0:4000/sandbox/webhooks/deliveries?token=made-at-start-abcdefghijklmnop');
    expect(printed).toContain('Dashboard (operator):          http://0.0.0.0:4000/dashboard#token=made-at-start-abcdefghijklmnop');
    const given = banner('http://0.0.0.0:4000', resolveConfig({ host: '0.0.0.0', operatorToken: OPERATOR_TOKEN }), undefined, { hosted: true, operatorToken: OPERATOR_TOKEN });
    expect(given).not.toContain(OPERATOR_TOKEN);
    expect(given).toContain('(set, not shown; from PAYLATER_OPERATOR_TOKEN)');
    expect(banner('http://127.0.0.1:4000', resolveConfig(), undefined, { hosted: false, operatorToken: 'x'.repeat(20) })).not.toContain('x'.repeat(20));
  });

  it('takes the ready link\'s token in the query as the operator', async () => {
    const answer = await t.request('GET', `/sandbox/webhooks/deliveries?token=${OPERATOR_TOKEN}`);
    expect(answer.status).toBe(200);
  });

  it('answers 401 without a credential, or with a wrong one, saying which credentials it takes', async () => {
    for (const [method, path] of [
      ['GET', '/sandbox/clock'],
      ['GET', '/sandbox/webhooks/deliveries'],
      ['GET', `/sandbox/sdk/transactions/${ids.sdkA}`],
      ['POST', `/sandbox/web/transactions/${ids.webA}/confirm`],
    ] as const) {
      const none = await t.request(method, path);
      expect(none.status, path).toBe(401);
      expect(none.body.message).toContain('Authorization: Bearer <token>');
      const wrong = await t.request(method, path, { headers: { Authorization: 'Bearer not-the-token' } });
      expect(wrong.status).toBe(401);
      const forged = await t.request(method, path, { headers: partnerHeaders({ id: A.id, key: 'not-the-key' }, path) });
      expect(forged.status).toBe(401);
    }
    const stream = await openStream(t.url, {});
    expect(stream.status).toBe(401);
  });

  it("refuses each partner every control endpoint on the other's transactions, as if they did not exist", async () => {
    for (const [me, other, web, sdk] of [
      [A, B, ids.webB, ids.sdkB],
      [B, A, ids.webA, ids.sdkA],
    ] as const) {
      const attempts: [string, string][] = [
        ['GET', `/sandbox/sdk/transactions/${sdk}`],
        // The web checkout page's own actions (cancel, fail, otp, pay, abandon) are the shopper's, keyed by the id.
        ['POST', `/sandbox/web/transactions/${web}/confirm`],
        ...['confirm', 'cancel', 'fail'].map((action): [string, string] => ['POST', `/sandbox/sdk/transactions/${sdk}/${action}`]),
      ];
      for (const [method, path] of attempts) {
        const answer = await t.request(method, path, { headers: partnerHeaders(me, path) });
        expect(answer.status, `${me.id} ${method} ${path}`).toBe(404);
        // The same answer as for an id nobody has.
        const nobody = path.replace(/(web|sdk)_[ab]_1/, 'nobody_1');
        const unknown = await t.request(method, nobody, { headers: partnerHeaders(me, nobody) });
        expect(answer.body.errorCode).toBe(unknown.body.errorCode);
      }
      void other;
    }
    // Nothing changed: both still PENDING.
    const stillPending = await t.request('GET', `/sandbox/sdk/transactions/${ids.sdkB}`, { headers: OPERATOR });
    expect(stillPending.body.status).toBe('PENDING');
  });

  it("refuses each merchant the other's refunds, verification and invitations; the gateway's Merchant API credentials reach every merchant", async () => {
    for (const [me, other] of [
      [m1, m2],
      [m2, m1],
    ] as const) {
      for (const [method, path] of [
        ['POST', `/sandbox/gateway/transactions/${other.id}/${other.transaction}/refunds/r_1/fail`],
        ['POST', `/sandbox/gateway/merchants/${other.id}/verify`],
      ] as const) {
        const answer = await t.request(method, path, { headers: { Authorization: me.auth } });
        expect(answer.status, path).toBe(404);
      }
      // Its own merchant is found (it is enabled, so verification says so).
      const own = await t.request('POST', `/sandbox/gateway/merchants/${me.id}/verify`, { headers: { Authorization: me.auth } });
      expect(own.status).toBe(409);
      // Partners and the extras client reach no merchant.
      const path = `/sandbox/gateway/merchants/${me.id}/verify`;
      expect((await t.request('POST', path, { headers: partnerHeaders(A, path) })).status).toBe(404);
    }
    const gateway = await t.request('POST', `/sandbox/gateway/merchants/${m1.id}/verify`, { headers: { Authorization: MERCHANT_AUTH } });
    expect(gateway.status).toBe(409);
  });

  it('lets only the operator move the shared clock', async () => {
    const path = '/sandbox/clock/advance';
    const body = JSON.stringify({ ms: 1 });
    const partner = await t.request('POST', path, { body, headers: partnerHeaders(A, path, body) });
    expect(partner.status).toBe(403);
    expect((await t.request('POST', path, { body, headers: { 'Content-Type': 'application/json', Authorization: m1.auth } })).status).toBe(403);
    const clock = await t.request('GET', '/sandbox/clock', { headers: { Authorization: m1.auth } });
    expect(clock.status).toBe(200);
    expect((await t.request('POST', path, { body, headers: { 'Content-Type': 'application/json', ...OPERATOR } })).status).toBe(200);
  });

  it('lists each tenant its own deliveries only; the operator sees all', async () => {
    const confirmA = `/sandbox/web/transactions/${ids.webA}/confirm`;
    expect((await t.request('POST', confirmA, { headers: partnerHeaders(A, confirmA) })).status).toBe(200);
    const confirmB = `/sandbox/sdk/transactions/${ids.sdkB}/confirm`;
    expect((await t.request('POST', confirmB, { headers: partnerHeaders(B, confirmB) })).status).toBe(200);
    const list = async (headers: Record<string, string>, path = '/sandbox/webhooks/deliveries?limit=1000') => {
      const answer = await t.request('GET', path, { headers });
      expect(answer.status, answer.text).toBe(200);
      return (answer.body.deliveries as { transactionId: string; family: string }[]).map((delivery) => `${delivery.family}:${delivery.transactionId}`);
    };
    const path = '/sandbox/webhooks/deliveries?limit=1000';
    const all = await list(OPERATOR);
    expect(all).toEqual(expect.arrayContaining([`web:${ids.webA}`, `sdk:${ids.sdkB}`, `gateway:${m1.transaction}`, `gateway:${m2.transaction}`]));
    expect(await list(partnerHeaders(A, path))).toEqual([`web:${ids.webA}`]);
    expect(await list(partnerHeaders(B, path))).toEqual([`sdk:${ids.sdkB}`]);
    const ofM1 = await list({ Authorization: m1.auth });
    expect(ofM1.length).toBeGreaterThan(0);
    expect(ofM1.every((entry) => entry === `gateway:${m1.transaction}`)).toBe(true);
    const ofM2 = await list({ Authorization: m2.auth });
    expect(ofM2.every((entry) => entry === `gateway:${m2.transaction}`)).toBe(true);
    // Asking for another's transaction by id finds nothing.
    const byId = `/sandbox/webhooks/deliveries?transactionId=${ids.webA}`;
    expect(await list(partnerHeaders(B, byId), byId)).toEqual([]);
    expect(await list({ Authorization: MERCHANT_AUTH })).toEqual(expect.arrayContaining([`gateway:${m1.transaction}`, `gateway:${m2.transaction}`]));
    expect((await list({ Authorization: MERCHANT_AUTH })).some((entry) => !entry.startsWith('gateway:'))).toBe(false);
  });

  it("shows each tenant its own requests in the dashboard's request log; the operator sees all", async () => {
    const principals = async (headers: Record<string, string>, path = '/sandbox/requests?limit=500') => {
      const answer = await t.request('GET', path, { headers });
      expect(answer.status, answer.text).toBe(200);
      return new Set((answer.body.requests as { principal: string | null }[]).map((entry) => entry.principal));
    };
    const path = '/sandbox/requests?limit=500';
    const all = await principals(OPERATOR);
    expect([...all]).toEqual(expect.arrayContaining([`partner ${A.id}`, `partner ${B.id}`, `merchant ${m1.id}`, `merchant ${m2.id}`]));
    expect([...(await principals(partnerHeaders(A, path)))]).toEqual([`partner ${A.id}`]);
    expect([...(await principals(partnerHeaders(B, path)))]).toEqual([`partner ${B.id}`]);
    expect([...(await principals({ Authorization: m1.auth }))]).toEqual([`merchant ${m1.id}`]);
    expect((await t.request('GET', path)).status).toBe(401);
  });

  it("streams each tenant its own events only; the operator's stream has every one", async () => {
    const streamPath = '/sandbox/webhooks/stream';
    const operator = await openStream(t.url, OPERATOR);
    const ofA = await openStream(t.url, partnerHeaders(A, streamPath));
    const ofB = await openStream(t.url, partnerHeaders(B, streamPath));
    const ofM1 = await openStream(t.url, { Authorization: m1.auth });
    try {
      expect([operator.status, ofA.status, ofB.status, ofM1.status]).toEqual([200, 200, 200, 200]);
      const cancelA = `/sandbox/sdk/transactions/${ids.sdkA}/cancel`;
      expect((await t.request('POST', cancelA, { headers: partnerHeaders(A, cancelA) })).status).toBe(200);
      const cancelB = `/sandbox/web/transactions/${ids.webB}/confirm`;
      expect((await t.request('POST', cancelB, { headers: partnerHeaders(B, cancelB) })).status).toBe(200);
      await waitFor(() => (operator.text().includes(ids.sdkA) && operator.text().includes(ids.webB) ? true : undefined));
      await waitFor(() => (ofA.text().includes(ids.sdkA) ? true : undefined));
      await waitFor(() => (ofB.text().includes(ids.webB) ? true : undefined));
      expect(ofA.text()).not.toContain(ids.webB);
      expect(ofB.text()).not.toContain(ids.sdkA);
      expect(ofM1.text()).not.toContain(ids.sdkA);
      expect(ofM1.text()).not.toContain(ids.webB);
    } finally {
      for (const stream of [operator, ofA, ofB, ofM1]) stream.close();
    }
  });
});

describe('a sandbox on loopback', () => {
  const t = useSandbox();

  it('needs no credential, as before', async () => {
    expect(t.sandbox.access.hosted).toBe(false);
    expect((await t.request('GET', '/sandbox/clock')).status).toBe(200);
    expect((await t.request('GET', '/sandbox/webhooks/deliveries')).status).toBe(200);
    await t.advance(1);
  });
});
