/**
 * One story (issue: "two stories"): what the documents say about when each webhook fires and which
 * code answers an unknown transaction, read from the documents themselves, then compared with what
 * the sandbox does. Each webhook file declares the final statuses it is sent for (`x-sent-when`);
 * its description, the guides and the decision record must name each of them and no narrower
 * list, and the sandbox must send it for exactly those. A document that tells another story, or a
 * sandbox that does something else, fails here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUBLISHED_TEST_PARTNER } from '../../src/sandbox/fixtures.js';
import { ROOT } from '../support/documents.js';
import { startGateway, type Credentials, type GatewayTest } from '../support/gateway.js';

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

interface WebhookFile {
  key: string;
  family: 'gateway' | 'web' | 'sdk';
  event: string;
  file: string;
  /** Other statements of the same thing: a file and the passage of it that speaks of this webhook. */
  statements: ReadonlyArray<{ file: string; passage: (text: string) => string }>;
}

/** The text of a `## Dnn` section of a Markdown record. */
const section = (id: string) => (text: string) => {
  const start = text.indexOf(`\n## ${id} `);
  if (start < 0) throw new Error(`no section ${id}`);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end < 0 ? undefined : end);
};
/** The line of a Markdown table whose first cell names `name`. */
const tableRow = (name: string) => (text: string) => text.split('\n').find((line) => line.startsWith(`| \`${name}\``)) ?? '';

const WEBHOOKS: readonly WebhookFile[] = [
  {
    key: 'gateway transactionUpdated',
    family: 'gateway',
    event: 'transactionUpdated',
    file: 'openapi/webhooks/gateway_transactionUpdated.yaml',
    statements: [
      { file: 'docs/decisions.md', passage: (text) => section('D23')(text).split('The transaction webhook is sent')[1]?.split('.')[0] ?? '' },
      { file: 'openapi/descriptions/gateway.md', passage: tableRow('transactionUpdated') },
    ],
  },
  {
    key: 'gateway refundUpdated',
    family: 'gateway',
    event: 'refundUpdated',
    file: 'openapi/webhooks/gateway_refundUpdated.yaml',
    statements: [{ file: 'docs/decisions.md', passage: (text) => section('D23')(text).split('The refund webhook is')[1]?.split('.')[0] ?? '' }],
  },
  {
    key: 'web transactionStatus',
    family: 'web',
    event: 'transactionStatus',
    file: 'openapi/webhooks/web_transactionStatus.yaml',
    statements: [{ file: 'docs/decisions.md', passage: (text) => section('D21')(text).split('3. a webhook')[1]?.split(';')[0] ?? '' }],
  },
  {
    key: 'sdk transactionStatus',
    family: 'sdk',
    event: 'transactionStatus',
    file: 'openapi/webhooks/sdk_transactionStatus.yaml',
    statements: [],
  },
];

function declared(webhook: WebhookFile): { sentWhen: string[]; description: string } {
  const document = parse(read(webhook.file)) as { post: { 'x-sent-when'?: string[]; description?: string } };
  return { sentWhen: document.post['x-sent-when'] ?? [], description: document.post.description ?? '' };
}

describe('the documents tell one story about when each webhook fires', () => {
  for (const webhook of WEBHOOKS) {
    it(`${webhook.key}: its description and every other statement name each status of x-sent-when`, () => {
      const { sentWhen, description } = declared(webhook);
      expect(sentWhen.length, `${webhook.file} declares x-sent-when`).toBeGreaterThan(0);
      for (const status of sentWhen) expect(description, `${webhook.file}: ${status}`).toContain(`\`${status}\``);
      for (const statement of webhook.statements) {
        const passage = statement.passage(read(statement.file));
        expect(passage, `${statement.file} speaks of the ${webhook.key} webhook`).not.toBe('');
        for (const status of sentWhen) expect(passage, `${statement.file} on ${webhook.key}: ${status}`).toContain(`\`${status}\``);
      }
    });
  }

  it('no document keeps the older, narrower story of the transaction webhook ("SUCCESS or FAILED" only)', () => {
    const narrower = /(?:sent|fires) when\s+(?:the\s+status\s+becomes\s+)?`SUCCESS`\s+or\s+`FAILED`|webhook \{ transaction \} \(SUCCESS or FAILED\)/;
    for (const file of ['openapi/webhooks/gateway_transactionUpdated.yaml', 'openapi/descriptions/gateway.md', 'docs/flows.md', 'docs/webhooks.md', 'docs/decisions.md']) {
      expect(read(file), file).not.toMatch(narrower);
    }
  });
});

describe('the sandbox sends each webhook for exactly the statuses the documents declare', () => {
  let t: GatewayTest;
  let merchant: { id: string; credentials: Credentials };
  const published = `Basic ${Buffer.from(`${PUBLISHED_TEST_PARTNER.id}:${PUBLISHED_TEST_PARTNER.privateKey}`).toString('base64')}`;

  beforeAll(async () => {
    t = await startGateway();
    merchant = await t.onboard();
  });
  afterAll(async () => {
    await t.close();
  });

  /** The statuses of the `event` webhooks of these transactions of `family`. */
  async function statusesSent(family: string, event: string, ids: readonly string[], field: (body: any) => string): Promise<Set<string>> {
    const seen = new Set<string>();
    for (const id of ids) {
      for (const delivery of await t.deliveries(id)) {
        if (delivery.family === family && delivery.event === event) seen.add(field(JSON.parse(delivery.body)));
      }
    }
    return seen;
  }

  async function failWithOtps(auth: string): Promise<string> {
    const id = t.id('fail');
    const created = await t.createTransaction(auth, { id, amount: 30_000 });
    expect(created.status, created.text).toBe(200);
    for (let attempt = 0; attempt < 3; attempt++) {
      const referenceId = (await t.stage(auth, id)).transactionStage.nextStep.options.userInputOptions[0].referenceId;
      await t.call('POST', `/api/merchant/transaction/${id}/user-inputs/${referenceId}`, auth, { value: '999999' });
    }
    return id;
  }

  it('gateway transactionUpdated: SUCCESS, FAILED, FAILURE (a merchant on the alias) and CANCELLED', async () => {
    const auth = merchant.credentials.auth;
    const succeeded = await t.successful(auth, 20_000);
    const failed = await failWithOtps(auth);
    const aliased = await failWithOtps(published);
    const cancelledId = t.id('cancel');
    expect((await t.createTransaction(auth, { id: cancelledId, amount: 20_000 })).status).toBe(200);
    expect((await t.call('GET', `/api/merchant/transaction/${cancelledId}/cancel`, auth)).status).toBe(200);
    const seen = await statusesSent('gateway', 'transactionUpdated', [succeeded, failed, aliased, cancelledId], (body) => body.transaction.status);
    expect([...seen].sort()).toEqual([...declared(WEBHOOKS[0]!).sentWhen].sort());
  });

  it('gateway refundUpdated: SUCCESS and FAILED', async () => {
    const auth = merchant.credentials.auth;
    const paid = await t.successful(auth, 20_000);
    const good = await t.call('POST', `/api/merchant/transaction/${paid}/refund`, auth, { refund: { id: 'r_ok', amount: 1_000 } });
    expect(good.status, good.text).toBe(200);
    const bad = await t.call('POST', `/api/merchant/transaction/${paid}/refund`, auth, { refund: { id: 'r_bad', amount: 1_000 } });
    expect(bad.status, bad.text).toBe(200);
    const failing = await t.request('POST', `/sandbox/gateway/transactions/${merchant.id}/${paid}/refunds/r_bad/fail`);
    expect(failing.status, failing.text).toBe(200);
    await t.advance(10 * 60_000);
    const seen = await statusesSent('gateway', 'refundUpdated', [paid], (body) => body.refund.status);
    expect([...seen].sort()).toEqual([...declared(WEBHOOKS[1]!).sentWhen].sort());
  });

  for (const [index, family] of [[2, 'web'], [3, 'sdk']] as const) {
    it(`${family} transactionStatus: SUCCESS, FAILURE and CANCELLED`, async () => {
      const ids: string[] = [];
      for (const action of ['confirm', 'fail', 'cancel']) {
        const id = t.id(`${family}_${action}`);
        const user = { name: 'Asha Rao', phoneNumber: '+919000000001' };
        const started =
          family === 'web'
            ? await t.web('POST', '/api/transaction', { id, amount: 20_000, user })
            : await t.sdk('/merchant/credit/initiateTransaction', { merchantTransactionId: id, userPhoneNumber: '+919000000001', userId: 'u1', amount: 20_000 });
        expect(started.status, started.text).toBeLessThan(300);
        expect((await t.request('POST', `/sandbox/${family}/transactions/${id}/${action}`)).status).toBe(200);
        ids.push(id);
      }
      const seen = await statusesSent(family, 'transactionStatus', ids, (body) => body.status);
      expect([...seen].sort()).toEqual([...declared(WEBHOOKS[index]!).sentWhen].sort());
    });
  }
});

/** Every `enum` value under a JSON value (the codes a response's schema can carry). */
function enumValues(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) enumValues(item, into);
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key === 'enum' && Array.isArray(item)) for (const entry of item) into.add(String(entry));
      else enumValues(item, into);
    }
  }
  return into;
}

/** The schema of an operation's response in a bundled document, its `$ref`s resolved. */
function responseCodes(family: string, path: string, method: string, status: string): Set<string> {
  const bundle = JSON.parse(read(`generated/openapi/${family}.json`));
  const resolve = (value: unknown, depth = 0): unknown => {
    if (depth > 20 || value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map((item) => resolve(item, depth + 1));
    const ref = (value as { $ref?: string }).$ref;
    if (typeof ref === 'string') {
      return resolve(ref.slice(2).split('/').reduce<any>((node, part) => node?.[part.replaceAll('~1', '/').replaceAll('~0', '~')], bundle), depth + 1);
    }
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolve(item, depth + 1)]));
  };
  return enumValues(resolve(bundle.paths[path][method].responses[status]));
}

describe('one code for an unknown transaction: the documents, the record and the sandbox agree', () => {
  let t: GatewayTest;
  let auth: string;
  beforeAll(async () => {
    t = await startGateway();
    auth = (await t.onboard()).credentials.auth;
  });
  afterAll(async () => {
    await t.close();
  });

  it('the record says NO_SUCH_TRANSACTION for a transaction named in the address (404) and in the body (400)', () => {
    const d02 = section('D02')(read('docs/decisions.md'));
    expect(d02).toMatch(/\| 404 \| `NO_SUCH_TRANSACTION` \| the transaction named in the address/);
    expect(d02).not.toMatch(/\| 404 \| `NOT_FOUND` \| [^|]*transaction/);
    expect(section('D37')(read('docs/decisions.md'))).toContain('404 `NO_SUCH_TRANSACTION`');
  });

  const cases = [
    { family: 'gateway', path: '/api/merchant/transaction/{id}', method: 'get', status: '404', field: 'errorCode' },
    { family: 'gateway', path: '/api/merchant/transaction/{transactionId}/cancel', method: 'get', status: '404', field: 'errorCode' },
    { family: 'web', path: '/api/transaction/status', method: 'get', status: '404', field: 'message' },
    { family: 'web', path: '/api/refund', method: 'post', status: '400', field: 'message' },
    { family: 'sdk', path: '/merchant/credit/checkTransactionStatus', method: 'post', status: '400', field: 'message' },
    { family: 'sdk', path: '/merchant/credit/refundTransaction', method: 'post', status: '400', field: 'message' },
  ] as const;

  for (const entry of cases) {
    it(`${entry.family} ${entry.method.toUpperCase()} ${entry.path}: documented and answered ${entry.status} NO_SUCH_TRANSACTION`, async () => {
      expect(responseCodes(entry.family, entry.path, entry.method, entry.status)).toContain('NO_SUCH_TRANSACTION');
      const unknown = 'no_such_txn_1';
      const answer =
        entry.family === 'gateway'
          ? await t.call('GET', entry.path.replace('{id}', unknown).replace('{transactionId}', unknown), auth)
          : entry.family === 'web'
            ? entry.method === 'get'
              ? await t.web('GET', `${entry.path}?id=${unknown}`)
              : await t.web('POST', entry.path, { transactionId: unknown })
            : await t.sdk(entry.path, { merchantTransactionId: unknown });
      expect(answer.status, answer.text).toBe(Number(entry.status));
      expect(answer.body[entry.field]).toBe('NO_SUCH_TRANSACTION');
    });
  }
});
