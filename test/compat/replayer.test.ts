/**
 * The compatibility suite's own machinery: PHP's JSON bytes, the raw requests (header names, case
 * and order, body bytes, signature), the judges (each integration's acceptance, reads, checks and
 * paths), the return-URL reading, and the data's consistency. These run without a server, except
 * one raw TCP listener that records what goes over the wire.
 */
import { createHash } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { webSignature, verifyWebSignature } from '../../src/signature.js';
import { encodeJson, phpJsonEncode } from '../support/php-json.js';
import { sendRaw } from '../support/raw-http.js';
import { FLOWS, WC_ORDER } from './flows.js';
import { CALLS, INTEGRATIONS, RETURNS, WEBHOOKS } from './integrations.js';
import { buildRequest, judgeCall, judgeReturn, judgeWebhook, render, renderBody } from './replayer.js';

const HOSTS = { web: 'http://web.test', gateway: 'http://gateway.test', sdk: 'http://sdk.test' };
const SITE = 'https://shop.example.in';
const TRANSACTION = '5f0c2a9e-7d1b-4c3e-9a8f-2b6d4e1c0a7f';
const KEY = 'test_private_key';
const values = {
  site: SITE,
  partnerId: 'partner_test',
  privateKey: KEY,
  orderId: 4711,
  orderKey: 'wc_order_Xq3vN8pLm2TzK',
  transactionId: TRANSACTION,
  amount: 1998,
  ratePerItem: WC_ORDER(SITE, () => TRANSACTION).ratePerItem,
  color: '',
  phoneNumber: '+919000000001',
};

const b64sha = (text: string) => createHash('sha256').update(text).digest('base64');

describe("PHP's json_encode bytes", () => {
  // Both lines were written by PHP 8.2's json_encode for the same values.
  it('escapes slashes and non-ASCII characters, writes whole floats as integers', () => {
    expect(phpJsonEncode({ transactionId: TRANSACTION, amount: Math.floor(14.98 * 100) })).toBe(
      '{"transactionId":"5f0c2a9e-7d1b-4c3e-9a8f-2b6d4e1c0a7f","amount":1498}',
    );
    expect(
      phpJsonEncode({
        url: 'https://shop.example.in/?wc-api=Bharatx_Pay_In_3_Feature_Gateway&key=wc_order_Xq3vN8pLm2TzK',
        image: '<img src="https://shop.example.in/a.jpg" alt="" />',
        name: 'Cotton Kurta – Indigo ₹',
        empty: '',
        list: [],
        obj: {},
        nested: { n: 1, f: 19.5, t: true, z: null },
        ctl: 'a\tb\nc\u007f',
      }),
    ).toBe(
      '{"url":"https:\\/\\/shop.example.in\\/?wc-api=Bharatx_Pay_In_3_Feature_Gateway&key=wc_order_Xq3vN8pLm2TzK",' +
        '"image":"<img src=\\"https:\\/\\/shop.example.in\\/a.jpg\\" alt=\\"\\" \\/>","name":"Cotton Kurta \\u2013 Indigo \\u20b9",' +
        '"empty":"","list":[],"obj":{},"nested":{"n":1,"f":19.5,"t":true,"z":null},"ctl":"a\\tb\\nc\u007f"}',
    );
  });

  it('leaves JavaScript bodies as JSON.stringify writes them', () => {
    expect(encodeJson({ u: 'https://a/b', n: 'é' }, 'javascript').toString('utf8')).toBe('{"u":"https://a/b","n":"é"}');
  });
});

describe('templates', () => {
  it('keep the JSON type of whole placeholders and drop zero amounts where the integration does', () => {
    expect(renderBody({ id: '{{transactionId}}', amount: '{{amount}}', url: '{{site}}/x' }, values)).toEqual({
      id: TRANSACTION,
      amount: 1998,
      url: `${SITE}/x`,
    });
    expect(renderBody({ transactionId: 'x', amount: '{{refundAmount|omit-if-zero}}' }, { refundAmount: 0 })).toEqual({ transactionId: 'x' });
    expect(renderBody({ transactionId: 'x', amount: '{{refundAmount|omit-if-zero}}' }, { refundAmount: 500 })).toEqual({ transactionId: 'x', amount: 500 });
    expect(render('Basic {{basic}}', { partnerId: 'a', privateKey: 'b' })).toBe(`Basic ${Buffer.from('a:b').toString('base64')}`);
    expect(() => render('{{nothing}}', {})).toThrow(/no earlier step produced/);
  });
});

describe('the requests, as the integrations build them', () => {
  it('plugin 1.6 initiate: lowercase headers in its order, PHP bytes, signed over exactly those bytes', () => {
    const request = buildRequest(CALLS['wc16.web.create'], values, HOSTS);
    expect(request.url).toBe('http://web.test/api/transaction');
    expect(request.headers.map(([name]) => name)).toEqual(['content-type', 'x-partner-id', 'x-signature']);
    const body = request.body?.toString('utf8') ?? '';
    expect(body).toContain('"redirect":{"url":"https:\\/\\/shop.example.in\\/?wc-api=Bharatx_Pay_In_3_Feature_Gateway&key=wc_order_Xq3vN8pLm2TzK"');
    expect(body).toContain('"colorOverride":""');
    expect(body).toContain('"orderId":4711');
    expect(body).toContain('"sku":"Cotton Kurta \\u2013 Indigo"');
    // (int)(round(19.99, 2) * 100) is 1998 in PHP: the double 1998.9999999999998, truncated.
    expect(body).toContain('"quantity":1,"rate_per_item":1998,');
    expect(body.startsWith(`{"id":"${TRANSACTION}","amount":1998,"user":{"name":"Asha Rao","phoneNumber":"+919000000001"`)).toBe(true);
    const signature = request.headers.find(([name]) => name === 'x-signature')?.[1] ?? '';
    // The same digest as the project's own signer and verifier over the same bytes...
    expect(signature).toBe(webSignature(request.body ?? Buffer.alloc(0), '/api/transaction', KEY));
    expect(verifyWebSignature(signature, request.body ?? Buffer.alloc(0), '/api/transaction', KEY)).toBe(true);
    // ...and not the digest of the same object written by JSON.stringify: the bytes matter.
    const reserialised = JSON.stringify(JSON.parse(body));
    expect(reserialised).not.toBe(body);
    expect(signature).not.toBe(b64sha(`${reserialised}/api/transaction${KEY}`));
  });

  it('plugin 1.6 status check sends only x-partner-id; the 1.5 one also Content-Type, never a signature', () => {
    expect(buildRequest(CALLS['wc16.web.status'], values, HOSTS)).toEqual({
      url: `http://web.test/api/transaction/status?id=${TRANSACTION}`,
      method: 'GET',
      headers: [['x-partner-id', 'partner_test']],
    });
    const old = buildRequest(CALLS['wc15.status'], { ...values, txnId: TRANSACTION }, HOSTS);
    expect(old.headers).toEqual([
      ['Content-Type', 'application/json'],
      ['X-Partner-Id', 'partner_test'],
    ]);
    expect(old.body).toBeUndefined();
  });

  it('plugin 1.6 refund leaves the amount out when it is 0; version 2 sends {refund:{amount}} with Basic', () => {
    expect(buildRequest(CALLS['wc16.web.refund'], { ...values, refundAmount: 0 }, HOSTS).body?.toString()).toBe(`{"transactionId":"${TRANSACTION}"}`);
    const partial = buildRequest(CALLS['wc16.web.refund'], { ...values, refundAmount: 500 }, HOSTS);
    expect(partial.body?.toString()).toBe(`{"transactionId":"${TRANSACTION}","amount":500}`);
    expect(partial.headers[2]?.[1]).toBe(b64sha(`{"transactionId":"${TRANSACTION}","amount":500}/api/refund${KEY}`));
    const v2 = buildRequest(CALLS['wc16.gateway.refund'], { ...values, refundAmount: 500 }, HOSTS);
    expect(v2.url).toBe(`http://gateway.test/api/merchant/transaction/${TRANSACTION}/refund`);
    expect(v2.body?.toString()).toBe('{"refund":{"amount":500}}');
    expect(v2.headers).toEqual([
      ['content-type', 'application/json'],
      ['authorization', `Basic ${Buffer.from(`partner_test:${KEY}`).toString('base64')}`],
    ]);
  });

  it('plugin 1.6 version 2 create has no deviceInformation; Magento sends expiry in seconds and mode', () => {
    const v2 = JSON.parse(buildRequest(CALLS['wc16.gateway.create'], values, HOSTS).body?.toString() ?? '{}');
    expect(Object.keys(v2)).toEqual(['transaction', 'createConfiguration', 'user']);
    expect(v2.transaction.notes.items[0].dimensions).toEqual({ length: '30', width: '20', height: '2' });
    const magento = buildRequest(
      CALLS['magento.create'],
      { site: SITE, partnerId: 'p', privateKey: 'k', orderIncrementId: '000000101', amount: 249_900, mode: 'TEST', expiryTimestamp: 1_772_000_000 },
      HOSTS,
    );
    const body = magento.body?.toString() ?? '';
    expect(body).toContain('"mode":"TEST","notes":{"magento_order_id":"000000101"}');
    expect(body).toContain('"expiryTimestamp":1772000000}');
    expect(body).toContain('"webhookUrl":"https:\\/\\/shop.example.in\\/Bharatxpayment\\/standard\\/notify"');
    expect(magento.headers.map(([name]) => name)).toEqual(['Authorization', 'Content-Type']);
  });
});

describe('the raw transport', () => {
  it('sends header names in their case and order, the body bytes, and a Content-Length', async () => {
    const chunks: Buffer[] = [];
    const server = createServer((socket) => {
      socket.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        if (Buffer.concat(chunks).includes('\r\n\r\n{"a":"\\/"}')) {
          socket.end('HTTP/1.1 201 Created\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok');
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const answer = await sendRaw({
        url: `http://127.0.0.1:${port}/api/transaction/status?id=a-b`,
        method: 'POST',
        headers: [
          ['x-partner-id', 'p'],
          ['Content-Type', 'application/json'],
        ],
        body: Buffer.from('{"a":"\\/"}'),
      });
      expect(answer).toMatchObject({ status: 201, text: 'ok' });
      const head = Buffer.concat(chunks).toString('utf8').split('\r\n');
      expect(head[0]).toBe('POST /api/transaction/status?id=a-b HTTP/1.1');
      expect(head.slice(1, 4)).toEqual(['x-partner-id: p', 'Content-Type: application/json', 'Content-Length: 10']);
    } finally {
      server.close();
    }
  });
});

describe('the judges', () => {
  const ok = (body: unknown, status = 200) => ({ status, text: JSON.stringify(body) });

  it('plugin 1.6: exactly 200; a 201 is worse than a refusal, and the message says what the plugin does', () => {
    const accepted = judgeCall(CALLS['wc16.gateway.create'], ok({ transaction: { url: 'https://pay.example/t/1' } }), values, true);
    expect(accepted.problems).toEqual([]);
    expect(accepted.values).toEqual({ transactionUrl: 'https://pay.example/t/1' });
    const created = judgeCall(CALLS['wc16.gateway.create'], ok({ transaction: { url: 'https://pay.example/t/1' } }, 201), values, true);
    expect(created.problems).toHaveLength(1);
    expect(created.problems[0]).toMatch(/^the plugin accepts only HTTP 200: got 201 .*PHP throws an Error/);
    const refused = judgeCall(CALLS['wc16.web.create'], ok({ message: 'BAD_REQUEST' }, 400), values, true);
    expect(refused.problems[0]).toMatch(/got 400 .*Unable to generate the transaction ID/);
    const uri = judgeCall(CALLS['wc16.gateway.create'], ok({ transaction: { uri: 'https://pay.example/t/1' } }), values, true);
    expect(uri.problems[0]).toMatch(/reads transaction.url \(an http\(s\) URL\): absent/);
  });

  it('plugin 1.6 configuration: any non-200 means version 1, 200 reads version loosely as PHP does', () => {
    const refused = judgeCall(CALLS['wc16.configuration'], ok({ errorCode: 'AUTHORIZATION_FAILED' }, 401), values, true);
    expect(refused.problems).toEqual([]);
    expect(refused.outcome?.name).toBe('version 1');
    expect(judgeCall(CALLS['wc16.configuration'], ok({ version: '1' }), values, true).outcome?.name).toBe('version 1');
    expect(judgeCall(CALLS['wc16.configuration'], ok({ version: 2, maxOrderAmount: 1 }), values, true).outcome?.name).toBe('version 2');
    const missing = judgeCall(CALLS['wc16.configuration'], ok({}), values, true);
    expect(missing.outcome?.name).toBe('version 2');
    expect(missing.problems[0]).toMatch(/reads version/);
  });

  it('plugin 1.6 storefront: the payment method shows only for carts below maxOrderAmount / 100', () => {
    const shown = judgeCall(CALLS['wc16.storefrontConfiguration'], ok({ version: 2, maxOrderAmount: 2_000 }), { ...values, cartRupees: 19 }, true);
    expect(shown.problems).toEqual([]);
    const hidden = judgeCall(CALLS['wc16.storefrontConfiguration'], ok({ version: 2, maxOrderAmount: 1_900 }), { ...values, cartRupees: 19 }, true);
    expect(hidden.problems[0]).toMatch(/hides its payment method/);
    // A refusal is no failure: the plugin keeps its default of ₹15,000.
    const fallback = judgeCall(CALLS['wc16.storefrontConfiguration'], ok({}, 401), { ...values, cartRupees: 19 }, true);
    expect(fallback.problems).toEqual([]);
    expect(fallback.values).toEqual({ maxOrderAmount: 1_500_000 });
  });

  it('plugin 1.5: the status signature is id + status + key with no separator', () => {
    const withTxn = { ...values, txnId: TRANSACTION };
    const right = b64sha(`${TRANSACTION}SUCCESS${KEY}`);
    const piped = b64sha(`${TRANSACTION}|SUCCESS${KEY}`);
    expect(judgeCall(CALLS['wc15.status'], ok({ transactionId: TRANSACTION, status: 'SUCCESS', signature: right }), withTxn, true).problems).toEqual([]);
    const wrong = judgeCall(CALLS['wc15.status'], ok({ transactionId: TRANSACTION, status: 'SUCCESS', signature: piped }), withTxn, true);
    expect(wrong.problems).toHaveLength(1);
    expect(wrong.problems[0]).toMatch(/authorization error/);
    // Against a mock (no state) the value is not checked, only its presence and type.
    expect(judgeCall(CALLS['wc15.status'], ok({ transactionId: 'other', status: 'SUCCESS', signature: piped }), withTxn, false).problems).toEqual([]);
  });

  it('plugin 1.5 refund: a refusal is judged by the message it prints', () => {
    const refused = judgeCall(CALLS['wc15.refund'], ok({ message: 'ALREADY_REFUNDED' }, 400), values, true);
    expect(refused.accepted).toBe(false);
    expect(refused.refusalProblems).toEqual([]);
    expect(judgeCall(CALLS['wc15.refund'], ok({ errorCode: 'X' }, 400), values, true).refusalProblems?.[0]).toMatch(/reads message/);
  });

  it('Magento: the status code is not looked at; transaction.url and the status decide', () => {
    expect(judgeCall(CALLS['magento.create'], ok({ transaction: { url: 'https://pay.example/t/1' } }, 201), values, true).problems).toEqual([]);
    expect(judgeCall(CALLS['magento.create'], ok({ errorCode: 'BAD_REQUEST' }, 400), values, true).problems[0]).toMatch(/Unable to create your order/);
    const read = (status: string) =>
      judgeCall(CALLS['magento.status'], ok({ transaction: { id: '1', amount: 100, status, url: 'https://pay.example/t/1' } }), values, true).outcome?.name;
    expect([read('SUCCESS'), read('FAILURE'), read('CANCELLED'), read('PENDING'), read('FAILED')]).toEqual(['paid', 'cancelled', 'cancelled', 'pending', 'unrecognised']);
    const webhook = judgeWebhook(
      WEBHOOKS['magento.notify'],
      { url: '/Bharatxpayment/standard/notify', body: JSON.stringify({ transaction: { id: '1', amount: 1, status: 'SUCCESS', url: 'https://x.example/' } }) },
      values,
    );
    expect(webhook).toMatchObject({ problems: [], outcome: { name: 'paid' } });
  });

  it('WooCommerce 1.5: notes.webhook_url is read from the query ($_GET); without txnStatus the order fails', () => {
    const at = (url: string) => judgeWebhook(WEBHOOKS['wc15.webhook'], { url, body: '' }, values);
    expect(at('/?wc-api=Bharatx_Pay_In_3_Feature_Gateway_Webhook&key=k1&txnId=t1&txnStatus=SUCCESS')).toMatchObject({
      problems: [],
      outcome: { name: 'checks the status' },
      values: { webhookOrderKey: 'k1', webhookTxnId: 't1' },
    });
    const bare = at('/?wc-api=Bharatx_Pay_In_3_Feature_Gateway_Webhook&key=k1');
    expect(bare.problems.join('\n')).toMatch(/reads txnStatus .*marked failed/);
    expect(bare.outcome?.name).toBe('fails the order');
  });

  it('the Node sample accepts any 2xx', () => {
    expect(judgeCall(CALLS['node.create'], { status: 201, text: '' }, values, true).problems).toEqual([]);
    expect(judgeCall(CALLS['node.create'], { status: 302, text: '' }, values, true).problems[0]).toMatch(/accepts any 2xx: got 302/);
  });
});

describe('the return URL, as the plugins read it', () => {
  const gave = `${SITE}/?wc-api=Bharatx_Pay_In_3_Feature_Gateway&key=wc_order_Xq3vN8pLm2TzK`;

  it('1.5 needs txnId and txnStatus added to its own URL, its query kept', () => {
    const good = judgeReturn(RETURNS['wc15.return'], `${gave}&txnId=${TRANSACTION}&txnStatus=SUCCESS`, values, true);
    expect(good).toMatchObject({ problems: [], values: { txnId: TRANSACTION, txnStatus: 'SUCCESS' }, outcome: { name: 'proceeds' } });
    const bare = judgeReturn(RETURNS['wc15.return'], gave, values, true);
    expect(bare.problems.map((problem) => problem.split(':')[0])).toEqual([
      'the plugin reads txnStatus from the return URL https',
      'the plugin reads txnId from the return URL https',
    ]);
    const lost = judgeReturn(RETURNS['wc16.return'], `${SITE}/?txnId=${TRANSACTION}&txnStatus=SUCCESS`, values, true);
    expect(lost.problems.join('\n')).toMatch(/lost wc-api=Bharatx_Pay_In_3_Feature_Gateway/);
  });
});

describe('the data', () => {
  it('every flow names known calls, returns and webhooks, and every integration has a flow', () => {
    for (const flow of FLOWS) {
      for (const step of flow.steps) {
        if ('call' in step) expect(CALLS, `${flow.id}: ${step.call}`).toHaveProperty([step.call]);
        if ('returnTo' in step) expect(RETURNS, `${flow.id}: ${step.returnTo}`).toHaveProperty([step.returnTo]);
        if ('webhook' in step) expect(WEBHOOKS, `${flow.id}: ${step.webhook}`).toHaveProperty([step.webhook]);
      }
      if (flow.shop !== undefined) expect(WEBHOOKS).toHaveProperty([flow.shop]);
    }
    expect(new Set(FLOWS.map((flow) => flow.integration))).toEqual(new Set(Object.keys(INTEGRATIONS)));
    expect(new Set(FLOWS.map((flow) => flow.id)).size).toBe(FLOWS.length);
  });

  it('every entry cites a repository, a commit, a file, a function and the fact sheet', () => {
    const specs = [...Object.values(CALLS), ...Object.values(RETURNS), ...Object.values(WEBHOOKS)];
    for (const spec of specs) {
      expect(spec.source.repository, spec.label).toMatch(/^[\w-]+\/[\w.-]+$/);
      expect(spec.source.commit, spec.label).toMatch(/^[0-9a-f]{40}$/);
      expect(spec.source.path.length, spec.label).toBeGreaterThan(0);
      expect(spec.source.where.length, spec.label).toBeGreaterThan(0);
      expect(spec.source.facts, spec.label).toMatch(/^§\d/);
    }
  });
});
