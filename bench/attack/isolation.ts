/**
 * Finding 2 and 3 of the hosting attack: tenants of a hosted sandbox reaching each other's state.
 * A sandbox started `--hosted` with a known operator token; two partners (the sandbox's test
 * partner and the published one) each initiate a web and an SDK transaction, two merchants each
 * create a gateway transaction. Then each tenant tries, on the other's transactions, every control
 * endpoint (read, confirm, cancel, fail), the shopper's endpoints without the link's token, the
 * deliveries list filtered by the other's transaction and its own unfiltered list; all must be
 * refused or show nothing of the other, and the operator must see and reach everything. Every
 * request is held to the stall budget like any other attack.
 */
import { sdkSignature, webSignature } from '../../src/signature.js';
import { PUBLISHED_TEST_PARTNER, TEST_CREDENTIALS } from '../../src/sandbox/fixtures.js';
import { MERCHANT_API, runId } from './flows.js';
import { request, type Reply } from './http.js';
import type { Attack } from './context.js';
import type { Check } from './verdict.js';

const OPERATOR_TOKEN = 'attack-operator-token-0123456789abcdef';
const OPERATOR = { Authorization: `Bearer ${OPERATOR_TOKEN}` };
const PARTNERS = [
  { id: TEST_CREDENTIALS.partner.id, key: TEST_CREDENTIALS.partner.privateKey },
  { id: PUBLISHED_TEST_PARTNER.id, key: PUBLISHED_TEST_PARTNER.privateKey },
] as const;
const PHONE = '+919000000001';
const PDF = Buffer.from('%PDF-1.4\n%attack\n').toString('base64');

type Headers = Record<string, string>;
interface Tenant {
  name: string;
  /** The headers of a request to `path` with `body`, signed or with credentials as the tenant does. */
  headers(path: string, body?: string): Headers;
  /** Its transactions: the sandbox paths that name them, and the ids as deliveries show them. */
  paths: string[];
  ids: string[];
}

export const isolationAttack: Attack = {
  finding: '2',
  name: 'isolation',
  title: 'a hosted sandbox: two partners and two merchants try every control endpoint, list and shopper endpoint on the other\'s transactions',
  deadlineSeconds: 120,
  async run(ctx) {
    process.env.PAYLATER_OPERATOR_TOKEN = OPERATOR_TOKEN;
    ctx.defer(() => delete process.env.PAYLATER_OPERATOR_TOKEN);
    const sandbox = await ctx.sandbox(['--hosted'], { probePath: `/sandbox/clock?token=${OPERATOR_TOKEN}` });
    const base = sandbox.url;
    const run = runId('i');
    const call = (method: string, path: string, headers: Headers = {}, body?: string): Promise<Reply> =>
      request(base, method, path, { headers: { ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers }, ...(body === undefined ? {} : { body }), timeoutMs: 10_000 });
    const setup: string[] = [];
    const expect = (what: string, reply: Reply, status: number) => {
      if (reply.status !== status) setup.push(`${what}: ${reply.status} ${reply.body.slice(0, 120)}`);
    };

    const tenants: Tenant[] = [];
    for (const [index, partner] of PARTNERS.entries()) {
      const web = `${run}_w${index}`;
      const sdk = `${run}_s${index}`;
      const webBody = JSON.stringify({ id: web, amount: 150_000, user: { name: 'Attack', phoneNumber: PHONE } });
      expect('web initiate', await call('POST', '/api/transaction', { 'X-Partner-Id': partner.id, 'X-Signature': webSignature(webBody, '/api/transaction', partner.key) }, webBody), 200);
      const sdkBody = JSON.stringify({ merchantTransactionId: sdk, userPhoneNumber: PHONE, userId: 'u_attack', amount: 250_000 });
      expect('SDK initiate', await call('POST', '/merchant/credit/initiateTransaction', { 'X-Partnerid': partner.id, 'X-Signature': sdkSignature(sdkBody, partner.key) }, sdkBody), 201);
      tenants.push({
        name: `partner ${index + 1}`,
        headers: (path, body = '') => ({ 'X-Partner-Id': partner.id, 'X-Signature': webSignature(body, path, partner.key) }),
        paths: [`/sandbox/web/transactions/${web}`, `/sandbox/sdk/transactions/${sdk}`],
        ids: [web, sdk],
      });
    }
    for (let index = 0; index < 2; index++) {
      const id = `m_${run}_${index}`;
      const merchantBody = JSON.stringify({ merchant: { id, brandName: 'Attack', entityName: 'Attack Pvt Ltd', brandHomePageUrl: 'https://attack.example.in', mccCode: 5812 } });
      expect('merchant', await call('POST', '/api/merchant', { Authorization: MERCHANT_API }, merchantBody), 201);
      for (const documentType of ['PAN', 'CANCELLED_CHEQUE']) {
        await call('POST', `/api/merchant/${id}/document`, { Authorization: MERCHANT_API }, JSON.stringify({ documentType, document: { type: 'base64', value: PDF } }));
      }
      expect('verify', await call('POST', `/sandbox/gateway/merchants/${id}/verify`, OPERATOR), 200);
      const details = JSON.parse((await call('GET', `/api/merchant/${id}`, { Authorization: MERCHANT_API })).body || '{}') as { merchant?: { basicAuthDetails?: { username: string; password: string } } };
      const credentials = details.merchant?.basicAuthDetails;
      const auth = credentials === undefined ? '' : `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
      const transaction = `${run}_g${index}`;
      const created = await call('POST', '/api/merchant/transaction', { Authorization: auth }, JSON.stringify({ transaction: { id: transaction, amount: 10_000 }, user: { name: 'Attack', phoneNumber: PHONE } }));
      expect('gateway transaction', created, 200);
      tenants.push({
        name: `merchant ${index + 1}`,
        headers: () => ({ Authorization: auth }),
        paths: [`/sandbox/gateway/checkout/${id}/${transaction}`],
        ids: [transaction],
      });
    }
    if (setup.length > 0) return { checks: [{ ok: false, reason: `setting up: ${setup[0]}` }], note: '' };

    // Each tenant on the other's transactions (partner 1 <-> 2, merchant 1 <-> 2), and without any credential.
    const leaks: string[] = [];
    let tried = 0;
    const refused = (who: string, what: string, reply: Reply) => {
      tried++;
      if (reply.status < 400 || reply.status >= 500) leaks.push(`${who} ${what}: ${reply.status}`);
    };
    const pairs: [Tenant, Tenant][] = [[tenants[0]!, tenants[1]!], [tenants[1]!, tenants[0]!], [tenants[2]!, tenants[3]!], [tenants[3]!, tenants[2]!]];
    for (const [who, victim] of pairs) {
      for (const path of victim.paths) {
        const gateway = path.startsWith('/sandbox/gateway/');
        refused(who.name, `GET ${path}`, await call('GET', path, who.headers(path)));
        refused('anyone', `GET ${path}`, await call('GET', path));
        for (const action of gateway ? ['cancel'] : ['confirm', 'cancel', 'fail']) {
          const target = `${path}/${action}`;
          refused(who.name, `POST ${target}`, await call('POST', target, who.headers(target)));
          refused('anyone', `POST ${target}`, await call('POST', target));
        }
      }
      for (const id of victim.ids) {
        const list = `/sandbox/webhooks/deliveries?transactionId=${id}`;
        const reply = await call('GET', list, who.headers(list));
        tried++;
        if (reply.status === 200 && reply.body.includes(id)) leaks.push(`${who.name} listed ${id}'s deliveries`);
      }
      const own = '/sandbox/webhooks/deliveries?limit=1000';
      const mine = await call('GET', own, who.headers(own));
      tried++;
      for (const id of victim.ids) if (mine.body.includes(id)) leaks.push(`${who.name}'s deliveries show ${id}`);
    }
    // The operator reaches every transaction and lists every delivery.
    const unseen: string[] = [];
    for (const tenant of tenants) {
      for (const path of tenant.paths) if ((await call('GET', path, OPERATOR)).status !== 200) unseen.push(path);
    }
    const checks: Check[] = [
      { ok: leaks.length === 0, reason: `${leaks.length} of ${tried} tries reached another tenant's records, first: ${leaks[0]}` },
      { ok: unseen.length === 0, reason: `the operator could not read ${unseen.length} transactions, first: ${unseen[0]}` },
    ];
    return { checks, note: `${tried} tries on the other tenant's records, all refused; the operator read all ${tenants.flatMap((tenant) => tenant.paths).length}` };
  },
};
