/**
 * The memory budget (docs/sandbox.md, "Limits and memory budget", D67), with limits lowered so
 * that each test runs in milliseconds: notes and pushed data kept as JSON text and read back
 * identical, the limits of members and depth, the notes budget, the caps of pending transactions,
 * pages bounded by bytes, and the first page of deliveries.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { initiateSdk, startSandbox, type TestSandbox } from '../support/sandbox.js';
import { startGateway, type GatewayTest } from '../support/gateway.js';
import { WEB_TRANSACTIONS, type WebTransaction } from '../../src/sandbox/families/web.js';
import type { ConfigOverrides } from '../../src/sandbox/config.js';

let t: TestSandbox | GatewayTest | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function sandbox(limits: ConfigOverrides['limits'], retention?: ConfigOverrides['retention']): Promise<TestSandbox> {
  const s = await startSandbox({ config: { limits, ...(retention === undefined ? {} : { retention }) } });
  t = s;
  return s;
}

const USER = { name: 'A', phoneNumber: '+919000000001' };
const initiateWeb = (s: TestSandbox, id: string, notes?: unknown) =>
  s.web('POST', '/api/transaction', { id, amount: 10_000, user: USER, ...(notes === undefined ? {} : { notes }) });

/** Notes whose JSON text is about `bytes` long. */
const notesOf = (bytes: number) => ({ text: 'x'.repeat(Math.max(0, bytes - 11)) });

describe('notes', () => {
  it('are kept as JSON text and read back identical; webhook_url is taken out at initiate', async () => {
    const s = await sandbox({});
    const notes = { webhook_url: 'https://shop.example.in/wc-api/cb', orderId: 42, items: [{ quantity: 2, rate_per_item: 1.5 }], nested: { a: null, b: [true, 'ā'] } };
    expect((await initiateWeb(s, 'notes_1', notes)).status).toBe(200);
    const record = s.sandbox.store.collection<WebTransaction>(WEB_TRANSACTIONS).get('notes_1')!;
    expect(typeof record.notesJson).toBe('string');
    expect(record.webhookUrl).toBe('https://shop.example.in/wc-api/cb');
    expect((await s.request('GET', '/sandbox/web/transactions/notes_1')).body.notes).toEqual(notes);
  });

  it('refuse more values or deeper nesting than the limits with a 400 that names the limit', async () => {
    const s = await sandbox({ jsonMembers: 10, jsonDepth: 3 });
    const many = await initiateWeb(s, 'many', { a: Array.from({ length: 11 }, () => ({})) });
    expect(many.status).toBe(400);
    expect(many.body).toEqual({ message: 'BAD_REQUEST', detail: expect.stringContaining('more than 10 values') });
    expect(many.body.detail).toContain('--max-json-members');
    const deep = await initiateWeb(s, 'deep', { a: { b: { c: {} } } });
    expect(deep.status).toBe(400);
    expect(deep.body.detail).toContain('more than 3 levels');
    expect(deep.body.detail).toContain('--max-json-depth');
    // Within both limits: accepted.
    expect((await initiateWeb(s, 'fits', { a: { b: [1, 2, 3] } })).status).toBe(200);
    expect((await s.request('GET', '/sandbox/web/transactions/many')).status).toBe(404);
  });

  it('stay within the notes budget: a pending overflow is refused 429, the oldest final transactions are forgotten', async () => {
    const s = await sandbox({ notesBytes: 1000 });
    expect((await initiateWeb(s, 'budget_1', notesOf(600))).status).toBe(200);
    const refused = await initiateWeb(s, 'budget_2', notesOf(600));
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('900');
    expect(refused.body).toEqual({ message: 'TOO_MANY_REQUESTS', detail: expect.stringContaining('notes budget of 1000 bytes') });
    expect(refused.body.detail).toContain('--max-notes-bytes');
    // Nothing accepted was dropped; once final, the first can be forgotten to make room.
    expect((await s.request('GET', '/sandbox/web/transactions/budget_1')).body.notes).toEqual(notesOf(600));
    expect((await s.request('POST', '/sandbox/web/transactions/budget_1/confirm')).status).toBe(200);
    expect((await initiateWeb(s, 'budget_2', notesOf(600))).status).toBe(200);
    expect((await s.request('GET', '/sandbox/web/transactions/budget_1')).status).toBe(404);
    expect((await s.request('GET', '/sandbox/web/transactions/budget_2')).body.notes).toEqual(notesOf(600));
  });
});

describe('pending transactions per partner', () => {
  it('are capped in the web flow: one more initiate is 429, nothing accepted is dropped', async () => {
    const s = await sandbox({ pendingPerPartner: 3 });
    for (const id of ['p1', 'p2', 'p3']) expect((await initiateWeb(s, id)).status).toBe(200);
    const refused = await initiateWeb(s, 'p4');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('900');
    expect(refused.body).toEqual({ message: 'TOO_MANY_REQUESTS', detail: expect.stringContaining('3 PENDING web transactions') });
    expect(refused.body.detail).toContain('--max-pending-per-partner');
    for (const id of ['p1', 'p2', 'p3']) expect((await s.request('GET', `/sandbox/web/transactions/${id}`)).body.status).toBe('PENDING');
    expect((await s.request('POST', '/sandbox/web/transactions/p1/cancel')).status).toBe(200);
    expect((await initiateWeb(s, 'p4')).status).toBe(200);
  });

  it('are capped in the SDK flow, and expiry frees a place', async () => {
    const s = await sandbox({ pendingPerPartner: 2 });
    await initiateSdk(s, 'sdk_1', 10_000);
    await initiateSdk(s, 'sdk_2', 10_000);
    const refused = await s.sdk('/merchant/credit/initiateTransaction', { merchantTransactionId: 'sdk_3', amount: 10_000, userPhoneNumber: '+919000000001', userId: 'u1' });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(refused.body.message).toBe('TOO_MANY_REQUESTS');
    await s.advance(61_000);
    await initiateSdk(s, 'sdk_3', 10_000);
  });
});

describe('gateway transactions', () => {
  async function merchant(limits: ConfigOverrides['limits']) {
    const g = await startGateway({ config: { limits } });
    t = g;
    const { credentials } = await g.onboard();
    return { g, auth: credentials.auth };
  }

  it('are capped per merchant (429 in the apiError format) and keep notes identical', async () => {
    const { g, auth } = await merchant({ pendingPerMerchant: 2 });
    const notes = { referenceId: 'r-1', billNo: 7, lines: [{ sku: 'a', qty: 1 }] };
    expect((await g.createTransaction(auth, { id: 'g1', amount: 10_000, notes })).status).toBe(200);
    expect((await g.createTransaction(auth, { id: 'g2', amount: 10_000 })).status).toBe(200);
    const refused = await g.createTransaction(auth, { id: 'g3', amount: 10_000 });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^[0-9]+$/);
    expect(refused.body).toEqual({ errorCode: 'TOO_MANY_REQUESTS', message: expect.stringContaining('--max-pending-per-merchant') });
    expect((await g.transaction(auth, 'g1')).notes).toEqual(notes);
    expect((await g.transaction(auth, 'g2')).notes).toEqual({});
  });

  it('refuse notes beyond the member limit with a 400 naming /transaction/notes', async () => {
    const { g, auth } = await merchant({ jsonMembers: 5 });
    const refused = await g.createTransaction(auth, { id: 'gm', amount: 10_000, notes: { a: [1, 2, 3, 4, 5, 6] } });
    expect(refused.status).toBe(400);
    expect(refused.body.details).toEqual([{ field: '/transaction/notes', issue: 'must hold at most 5 values' }]);
  });

  it('are listed in pages bounded by bytes, with a cursor that reaches every one', async () => {
    const { g, auth } = await merchant({ pageBytes: 4000 });
    for (let index = 0; index < 4; index++) {
      expect((await g.createTransaction(auth, { id: `gp${index}`, amount: 10_000, notes: notesOf(1500) })).status).toBe(200);
    }
    const seen: string[] = [];
    let path = '/api/merchant/transaction?limit=100';
    for (;;) {
      const page = await g.call('GET', path, auth);
      expect(page.status).toBe(200);
      expect(page.body.transactions.length).toBeGreaterThan(0);
      expect(page.body.transactions.length).toBeLessThan(4);
      for (const transaction of page.body.transactions) expect(transaction.notes).toEqual(notesOf(1500));
      seen.push(...page.body.transactions.map((transaction: { id: string }) => transaction.id));
      if (page.body.nextCursor === null) break;
      path = `/api/merchant/transaction?limit=100&cursor=${page.body.nextCursor}`;
    }
    expect(seen.sort()).toEqual(['gp0', 'gp1', 'gp2', 'gp3']);
  });
});

describe('extras data pushes', () => {
  const push = (s: TestSandbox, data: unknown) => s.extras('/service/database/merchant/user/feed/merchant-data', { userPhoneNumber: '+919000000001', data });

  it('read back identical, a page at most pageBytes long (at least one push)', async () => {
    const s = await sandbox({ pageBytes: 3000 });
    const pushed = Array.from({ length: 5 }, (_, index) => [{ index, text: 'y'.repeat(1000) }]);
    for (const data of pushed) expect((await push(s, data)).status).toBe(200);
    const seen: unknown[] = [];
    let path = '/sandbox/extras/users/%2B919000000001?limit=1000';
    for (;;) {
      const page = await s.request('GET', path);
      expect(page.status).toBe(200);
      expect(page.body.merchantDataCount).toBe(5);
      expect(page.body.merchantData.length).toBeGreaterThan(0);
      expect(Buffer.byteLength(JSON.stringify(page.body.merchantData))).toBeLessThanOrEqual(3000);
      seen.push(...page.body.merchantData.map((entry: { data: unknown }) => entry.data));
      if (page.body.merchantDataNextCursor === null) break;
      path = `/sandbox/extras/users/%2B919000000001?limit=1000&after=${page.body.merchantDataNextCursor}`;
    }
    expect(seen).toEqual(pushed);
    // One push larger than a page is still shown, alone.
    const big = [{ text: 'z'.repeat(5000) }];
    expect((await push(s, big)).status).toBe(200);
    const last = await s.request('GET', `/sandbox/extras/users/%2B919000000001?limit=1000&after=${Buffer.from('push:5').toString('base64url')}`);
    expect(last.body.merchantData.map((entry: { data: unknown }) => entry.data)).toEqual([big]);
  });

  it('refuse data beyond the member limit, and forget the oldest beyond the push budget', async () => {
    const s = await sandbox({ jsonMembers: 4, pushBytes: 100 });
    const refused = await push(s, [1, 2, 3, 4, 5]);
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      errorCode: 'BAD_REQUEST',
      message: expect.stringContaining('--max-json-members'),
      details: [{ field: '/data', issue: 'must hold at most 4 values' }],
    });
    for (let index = 0; index < 5; index++) expect((await push(s, [{ index, pad: 'p'.repeat(20) }])).status).toBe(200);
    const page = await s.request('GET', '/sandbox/extras/users/%2B919000000001');
    // Each push is 42 bytes of text: the newest two fit in 100.
    expect(page.body.merchantData.map((entry: { data: [{ index: number }] }) => entry.data[0].index)).toEqual([3, 4]);
    expect(page.body.merchantDataCount).toBe(2);
  });
});

describe('the deliveries list', () => {
  it('shows deliveries on its first page when the oldest records were forgotten', async () => {
    const s = await sandbox({}, { deliveries: 25_000 });
    await s.sandbox.store.unit(() => {
      for (let index = 0; index < 49_000; index++) {
        s.sandbox.deliveries.record({ url: undefined, body: '{}', orderingScope: 'sdk:p:', successStatus: 200, family: 'sdk', event: 'transactionStatus', transactionId: `d${index}` });
      }
    });
    const first = await s.request('GET', '/sandbox/webhooks/deliveries');
    expect(first.status).toBe(200);
    expect(first.body.deliveries.length).toBe(100);
    expect(first.body.deliveries[0].transactionId).toBe('d24000');
  });

  it('stops a page at the byte budget, with a cursor', async () => {
    const s = await sandbox({ pageBytes: 5000 });
    await s.sandbox.store.unit(() => {
      for (let index = 0; index < 4; index++) {
        s.sandbox.deliveries.record({ url: undefined, body: JSON.stringify({ pad: 'q'.repeat(2000) }), orderingScope: 'sdk:p:', successStatus: 200, family: 'sdk', event: 'transactionStatus', transactionId: `b${index}` });
      }
    });
    const first = await s.request('GET', '/sandbox/webhooks/deliveries');
    expect(first.body.deliveries.length).toBe(1);
    expect(first.body.nextCursor).not.toBeNull();
    const rest = await s.request('GET', `/sandbox/webhooks/deliveries?after=${first.body.nextCursor}&limit=1000`);
    expect(rest.body.deliveries.length).toBeGreaterThan(0);
  });
});

describe('the limits as settings', () => {
  it('are read from their variables and refused out of range, naming the flag', async () => {
    const { resolveConfig, ConfigError } = await import('../../src/sandbox/config.js');
    const config = resolveConfig({}, { PAYLATER_MAX_PENDING_PER_PARTNER: '5', PAYLATER_MAX_PAGE_BYTES: '4096' });
    expect(config.limits.pendingPerPartner).toBe(5);
    expect(config.limits.pageBytes).toBe(4096);
    expect(config.limits.pendingPerMerchant).toBe(200_000);
    expect(() => resolveConfig({}, { PAYLATER_MAX_JSON_DEPTH: '65' })).toThrow(ConfigError);
    expect(() => resolveConfig({ limits: { notesBytes: 0 } })).toThrow(/--max-notes-bytes/);
  });
});
