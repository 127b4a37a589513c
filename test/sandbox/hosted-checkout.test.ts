/**
 * The shopper's pages of a hosted sandbox (src/sandbox/access.ts `checkoutToken`): the hosted
 * checkout page and the endpoints it calls act only on the transaction their link was made for.
 * Without the link's token, or with another transaction's, each answers as for an unknown
 * transaction; sdk.js, which knows the id and the order's details but not the link, opens the page
 * with those details, and with them records a popup closed before its page gave the token; an owner's credential (a developer's tools, the dashboard) still works. And
 * another partner's id is answered as an unknown one everywhere but the initiate (D242).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUBLISHED_TEST_PARTNER, TEST_CREDENTIALS } from '../../src/sandbox/fixtures.js';
import { statusSignature } from '../../src/signature.js';
import { startGateway, type GatewayTest } from '../support/gateway.js';
import { PARTNER_ID } from '../support/sandbox.js';

const OPERATOR = { Authorization: 'Bearer operator-token-of-this-test-0123456789' };
const user = { name: 'Asha Rao', phoneNumber: '+919000000001' };
const B = { partnerId: PUBLISHED_TEST_PARTNER.id, key: PUBLISHED_TEST_PARTNER.privateKey };

/** The checkout token of a link. */
const tokenOf = (link: string) => new URL(link).searchParams.get('checkout') ?? '';

describe("a hosted sandbox's checkout pages", () => {
  let t: GatewayTest;
  const links: Record<string, string> = {};

  beforeAll(async () => {
    t = await startGateway({ config: { hosted: true, operatorToken: OPERATOR.Authorization.slice(7) } });
    for (const [id, options] of [
      ['shop_a', {}],
      ['shop_a2', {}],
      ['shop_b', B],
    ] as const) {
      const answer = await t.web('POST', '/api/transaction', { id, amount: 150_000, user }, options);
      expect(answer.status, answer.text).toBe(200);
      links[id] = answer.body.redirectUrl as string;
    }
  });
  afterAll(() => t?.close());

  it('give each transaction a link with a token of its own', () => {
    const tokens = Object.values(links).map(tokenOf);
    for (const token of tokens) expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(new Set(tokens).size).toBe(tokens.length);
  });

  it('answer every shopper endpoint as for an unknown transaction without the token, or with another transaction\'s', async () => {
    const base = '/sandbox/web/transactions/shop_a';
    for (const query of ['', `?checkout=${tokenOf(links.shop_b!)}`, `?checkout=${tokenOf(links.shop_a2!)}`, '?checkout=']) {
      expect((await t.request('GET', `${base}${query}`)).status, query).toBe(404);
      for (const action of ['otp', 'pay', 'cancel', 'fail', 'abandon']) {
        const answer = await t.request('POST', `${base}/${action}${query}`, { body: '{"otp":"123456","method":"UPI"}', headers: { 'Content-Type': 'application/json' } });
        expect([action, answer.status]).toEqual([action, 404]);
      }
      expect((await fetch(`${t.url}/checkout/shop_a${query}`)).status).toBe(404);
    }
    // Nothing happened to it.
    expect((await t.request('GET', base, { headers: OPERATOR })).body.status).toBe('PENDING');
  });

  it('open the page by its link, whose endpoints carry the token, and take the shopper\'s steps with it', async () => {
    const page = await fetch(links.shop_a!);
    expect(page.status).toBe(200);
    const html = await page.text();
    const token = tokenOf(links.shop_a!);
    expect(html).toContain(`/sandbox/web/transactions/shop_a/otp?checkout=${token}`);
    expect(html).toContain(`/sandbox/web/transactions/shop_a/cancel?checkout=${token}`);
    expect((await t.request('GET', `/sandbox/web/transactions/shop_a?checkout=${token}`)).status).toBe(200);
    const cancelled = await t.request('POST', `/sandbox/web/transactions/shop_a/cancel?checkout=${token}`);
    expect([cancelled.status, cancelled.body.status]).toEqual([200, 'CANCELLED']);
  });

  it("open the page for sdk.js with the order's own details only", async () => {
    const query = (amount: number) =>
      new URLSearchParams({ flow: 'popup', origin: 'https://shop.example.in', partnerId: PARTNER_ID, amount: String(amount), phoneNumber: user.phoneNumber });
    const page = await fetch(`${t.url}/checkout/shop_a2?${query(150_000).toString()}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`/sandbox/web/transactions/shop_a2/otp?checkout=${tokenOf(links.shop_a2!)}`);
    expect((await fetch(`${t.url}/checkout/shop_a2?${query(150_001).toString()}`)).status).toBe(404);
  });

  it("take sdk.js's popup-closed call with the order's own details, when the popup closed before its page gave the token", async () => {
    const id = 'shop_a3';
    const initiated = await t.web('POST', '/api/transaction', { id, amount: 150_000, user });
    expect(initiated.status, initiated.text).toBe(200);
    const details = (amount: number, partnerId = PARTNER_ID) =>
      new URLSearchParams({ flow: 'popup', partnerId, amount: String(amount), phoneNumber: user.phoneNumber }).toString();
    const path = `/sandbox/web/transactions/${id}/abandon`;
    for (const query of [details(150_001), details(150_000, B.partnerId), 'flow=popup']) {
      expect((await t.request('POST', `${path}?${query}`)).status, query).toBe(404);
    }
    expect((await t.request('GET', `/sandbox/web/transactions/${id}`, { headers: OPERATOR })).body.status).toBe('PENDING');
    const closed = await t.request('POST', `${path}?${details(150_000)}`);
    expect([closed.status, closed.body.status]).toEqual([200, 'CANCELLED']);
    expect(closed.body.signature).toBe(statusSignature(id, 'CANCELLED', TEST_CREDENTIALS.partner.privateKey));
  });

  it('let an owner act with its credential, another partner not', async () => {
    const path = '/sandbox/web/transactions/shop_a2';
    expect((await t.web('GET', path)).status).toBe(200);
    expect((await t.web('GET', path, undefined, B)).status).toBe(404);
    expect((await t.request('GET', path, { headers: OPERATOR })).status).toBe(200);
  });

  it("keep the gateway's hosted page to its transaction: by its link's token or its merchant's credentials", async () => {
    const first = await t.onboard();
    const second = await t.onboard();
    const created = await t.createTransaction(first.credentials.auth, { id: t.id('page'), amount: 10_000 });
    expect(created.status, created.text).toBe(200);
    const link = created.body.transaction.url as string;
    const other = await t.createTransaction(first.credentials.auth, { id: t.id('page'), amount: 10_000 });
    const path = new URL(link).pathname;
    expect(tokenOf(link)).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect((await t.request('GET', path)).status).toBe(404);
    expect((await t.request('GET', `${path}?checkout=${tokenOf(other.body.transaction.url as string)}`)).status).toBe(404);
    expect((await t.request('GET', path, { headers: { Authorization: second.credentials.auth } })).status).toBe(404);
    expect((await t.request('POST', `${path}/cancel`)).status).toBe(404);
    expect((await t.request('GET', `${path}?checkout=${tokenOf(link)}`)).status).toBe(200);
    expect((await t.request('GET', path, { headers: { Authorization: first.credentials.auth } })).status).toBe(200);
    const cancelled = await t.request('POST', `${path}/cancel?checkout=${tokenOf(link)}`);
    expect(cancelled.status).toBe(200);
  });

  it("answer a partner another partner's id exactly as an unknown id, everywhere but the initiate", async () => {
    /** The answer with the id and the request id taken out. */
    const shape = (answer: { status: number; text: string }, id: string) => ({
      status: answer.status,
      text: answer.text.replaceAll(id, '<id>').replace(/"requestId":"[^"]*"/, ''),
    });
    const sdkB = await t.sdk(
      '/merchant/credit/initiateTransaction',
      { merchantTransactionId: 'sdk_b_9', userPhoneNumber: user.phoneNumber, userId: 'u_b', amount: 250_000 },
      B,
    );
    expect(sdkB.status).toBe(201);
    const asA = {
      status: (id: string) => t.web('GET', `/api/transaction/status?id=${id}`),
      refund: (id: string) => t.web('POST', '/api/refund', { transactionId: id, amount: 100 }),
      view: (id: string) => t.web('GET', `/sandbox/web/transactions/${id}`),
      confirm: (id: string) => t.web('POST', `/sandbox/web/transactions/${id}/confirm`),
      sdkStatus: (id: string) => t.sdk('/merchant/credit/checkTransactionStatus', { merchantTransactionId: id }),
      sdkRefund: (id: string) => t.sdk('/merchant/credit/refundTransaction', { merchantTransactionId: id, amount: 100 }),
      sdkConfirm: (id: string) => t.web('POST', `/sandbox/sdk/transactions/${id}/confirm`),
    };
    for (const [name, ask] of Object.entries(asA)) {
      const theirs = name.startsWith('sdk') ? 'sdk_b_9' : 'shop_b';
      const unknown = name.startsWith('sdk') ? 'sdk_x_9' : 'shop_x';
      const [other, none] = [await ask(theirs), await ask(unknown)];
      expect(other.status, name).toBeGreaterThanOrEqual(400);
      expect(shape(other, theirs), name).toEqual(shape(none, unknown));
    }
  });
});
