/**
 * Large bodies with free values (src/sandbox/json-offload.ts, src/http/raw-json.ts): a web
 * initiate, a gateway transaction and a data push of a few hundred KiB are parsed, measured and
 * written as text in the worker, and their notes and data are written into answers as their text.
 * Not timed: the tests watch `JSON.parse` and `JSON.stringify` on the sandbox's own thread and
 * assert that neither handles the large value, and that the answers are the ones a small body gets.
 */
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { stringifyJson, RawJson } from '../../src/http/raw-json.js';
import { JsonOffload, OFFLOAD_BYTES } from '../../src/sandbox/json-offload.js';
import { keepJson, keepMeasured } from '../../src/sandbox/stored-json.js';
import { MAX_JSON_DEPTH } from '../../src/http/json.js';
import { ELIGIBLE, startGateway, type GatewayTest } from '../support/gateway.js';
import { webSignature } from '../../src/signature.js';
import { EXTRAS_AUTH, PARTNER_ID, PRIVATE_KEY, startSandbox, type TestSandbox } from '../support/sandbox.js';

const USER = { name: 'A', phoneNumber: '+919000000001' };
/** An object of about `bytes` bytes of JSON text made of many small objects (what is costly to parse). */
const manyObjects = (bytes: number) => ({ a: Array.from({ length: Math.ceil(bytes / 3) }, () => ({})) });

/**
 * Whether `JSON.parse` read, or `JSON.stringify` wrote, `needle` as JSON text (not inside a JSON
 * string, where its quotes are escaped: the shared store keeps a record's kept text as a string)
 * while `work` ran: whether the large value was parsed into objects, or written from them.
 */
async function watchJson(needle: string, work: () => Promise<void>): Promise<{ parsed: boolean; written: boolean }> {
  const parse: MockInstance<typeof JSON.parse> = vi.spyOn(JSON, 'parse');
  const stringify: MockInstance<typeof JSON.stringify> = vi.spyOn(JSON, 'stringify');
  try {
    await work();
    return {
      parsed: parse.mock.calls.some(([text]) => typeof text === 'string' && text.includes(needle)),
      written: stringify.mock.results.some((result) => result.type === 'return' && typeof result.value === 'string' && result.value.includes(needle)),
    };
  } finally {
    parse.mockRestore();
    stringify.mockRestore();
  }
}

/** What the large values below hold, as JSON text. */
const NEEDLE = '"a":[{},{},{}';

describe('the worker for large bodies', () => {
  let offload: JsonOffload;
  beforeEach(() => {
    offload = new JsonOffload();
  });
  afterEach(async () => {
    await offload.close();
  });
  const limits = { maxDepth: MAX_JSON_DEPTH, jsonMembers: 1000, jsonDepth: 4 };
  const parse = (value: string) => offload.parse(Buffer.from(value, 'utf8'), ['/notes', '/transaction/notes'], limits);

  it('gives the verdicts and texts of stored-json.ts, with a stand-in left in the body', async () => {
    const cases: unknown[] = [
      { a: [1, 'ā', null, { b: true }] },
      { a: Array.from({ length: 1001 }, () => 0) },
      { a: { b: { c: { d: {} } } } },
      [{}, []],
      {},
    ];
    for (const notes of cases) {
      const answer = await parse(JSON.stringify({ id: 'x', notes }));
      expect(answer?.ok).toBe(true);
      if (answer?.ok !== true) continue;
      expect(keepMeasured(answer.free.get('/notes'), undefined, 'notes', limits)).toEqual(keepJson(notes, 'notes', limits));
      expect(answer.value).toEqual({ id: 'x', notes: Array.isArray(notes) ? [] : {} });
    }
  });

  it('keeps webhook_url (not its object) in the stand-in, and finds a nested free value', async () => {
    const url = await parse(JSON.stringify({ notes: { webhook_url: 'https://shop.example.in/cb', other: [1] } }));
    expect(url?.ok === true && url.value).toEqual({ notes: { webhook_url: 'https://shop.example.in/cb' } });
    const object = await parse(JSON.stringify({ notes: { webhook_url: { a: [1, 2] } } }));
    expect(object?.ok === true && object.value).toEqual({ notes: { webhook_url: {} } });
    const nested = await parse(JSON.stringify({ transaction: { id: 't', notes: { n: 1 } } }));
    expect(nested?.ok === true && nested.value).toEqual({ transaction: { id: 't', notes: {} } });
    expect(nested?.ok === true && nested.free.get('/transaction/notes')?.text).toBe('{"n":1}');
  });

  it('refuses what the event loop refuses: bad UTF-8, bad JSON, too deep', async () => {
    expect(await offload.parse(Buffer.from([0x7b, 0xff, 0x7d]), ['/notes'], limits)).toEqual({ ok: false, problem: 'utf-8' });
    expect(await parse('{"notes":')).toMatchObject({ ok: false, problem: 'syntax', reason: expect.any(String) });
    const deep = `${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`;
    expect(await parse(deep)).toEqual({ ok: false, problem: 'depth' });
  });
});

describe('JSON kept as text in answers', () => {
  it('is written as its text, and as the same JSON by a plain JSON.stringify', () => {
    const value = { a: 1, notes: new RawJson('{"x":[1,{"y":"ā"}]}'), list: [new RawJson('[]'), 'z'] };
    expect(stringifyJson(value)).toBe('{"a":1,"notes":{"x":[1,{"y":"ā"}]},"list":[[],"z"]}');
    expect(JSON.stringify(value)).toBe(stringifyJson(value));
  });

  it('is right when a string of the answer looks like its marker', () => {
    const marker = '\u0000paylater-raw-json\u0000';
    const value = { name: marker, notes: new RawJson('{"k":2}') };
    expect(JSON.parse(stringifyJson(value))).toEqual({ name: marker, notes: { k: 2 } });
  });
});

describe('a sandbox given large notes and data', () => {
  let s: TestSandbox | GatewayTest | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('keeps web notes without parsing them on its thread, and gives them back as sent', async () => {
    const t = await startSandbox();
    s = t;
    const notes = { webhook_url: 'https://shop.example.in/cb', ...manyObjects(4 * OFFLOAD_BYTES) };
    const body = JSON.stringify({ id: 'large_1', amount: 10_000, user: USER, notes });
    expect(body.length).toBeGreaterThan(OFFLOAD_BYTES);
    const headers = { 'X-Partner-Id': PARTNER_ID, 'X-Signature': webSignature(body, '/api/transaction', PRIVATE_KEY), 'Content-Type': 'application/json' };
    const seen = await watchJson(NEEDLE, async () => {
      const answer = await fetch(`${t.url}/api/transaction`, { method: 'POST', headers, body });
      expect([answer.status, (await answer.text()).length < 1000]).toEqual([200, true]);
    });
    // Neither the sandbox nor the test parsed or wrote the notes while they were kept.
    expect(seen).toEqual({ parsed: false, written: false });
    const read = await fetch(`${t.url}/sandbox/web/transactions/large_1`);
    const text = await read.text();
    expect(text).toContain(`"notes":${JSON.stringify(notes)}`);
  });

  it('answers a large body that breaks a rule as a small one: JSON syntax, webhook_url, the values limit', async () => {
    const t = await startSandbox({ config: { limits: { jsonMembers: 1000 } } });
    s = t;
    const filler = 'x'.repeat(2 * OFFLOAD_BYTES);
    const broken = `{"id":"large_2","amount":10000,"user":${JSON.stringify(USER)},"notes":{"f":"${filler}"}`;
    const syntax = await t.web('POST', '/api/transaction', broken);
    expect(syntax.status).toBe(400);
    expect(syntax.body.detail).toMatch(/^The request body is not valid JSON: /);
    for (const url of ['ftp://x', 'http://169.254.169.254/cb', 42, { a: 1 }]) {
      const small = await t.web('POST', '/api/transaction', { id: 'large_3', amount: 10_000, user: USER, notes: { webhook_url: url, f: 'x' } });
      const large = await t.web('POST', '/api/transaction', { id: 'large_3', amount: 10_000, user: USER, notes: { webhook_url: url, f: filler } });
      expect([small.status, small.body.detail]).toEqual([400, expect.stringContaining('webhook_url')]);
      expect([large.status, large.body.detail]).toEqual([400, small.body.detail]);
    }
    const many = await t.web('POST', '/api/transaction', { id: 'large_4', amount: 10_000, user: USER, notes: manyObjects(2 * OFFLOAD_BYTES) });
    expect(many.status).toBe(400);
    expect(many.body.detail).toContain('more than 1000 values');
    const push = await t.extras('/service/database/merchant/user/feed/merchant-data', { userPhoneNumber: '+919812345678', data: manyObjects(2 * OFFLOAD_BYTES).a });
    expect(push.status).toBe(400);
    expect(push.body.details).toEqual([{ field: '/data', issue: 'must hold at most 1000 values' }]);
  });

  it('keeps pushed data and gateway notes without parsing them on its thread', async () => {
    const g = await startGateway();
    s = g;
    const { credentials } = await g.onboard();
    const data = manyObjects(2 * OFFLOAD_BYTES).a;
    const notes = { orderId: 7, ...manyObjects(2 * OFFLOAD_BYTES) };
    const pushBody = JSON.stringify({ userPhoneNumber: '+919812345678', data });
    const notesText = JSON.stringify(notes);
    const createBody = JSON.stringify({ transaction: { id: 'large_g', amount: 10_000, notes }, user: { name: 'A', phoneNumber: ELIGIBLE } });
    const post = (path: string, authorization: string, text: string) =>
      fetch(`${g.url}${path}`, { method: 'POST', headers: { Authorization: authorization, 'Content-Type': 'application/json' }, body: text });
    const seen = await watchJson(NEEDLE, async () => {
      // Answers read as text: the test parses nothing large itself.
      const push = await post('/service/database/merchant/user/feed/merchant-data', EXTRAS_AUTH, pushBody);
      expect([push.status, (await push.text()).length < 1000]).toEqual([200, true]);
      const created = await post('/api/merchant/transaction', credentials.auth, createBody);
      expect(created.status).toBe(200);
      expect(await created.text()).toContain(`"notes":${notesText}`);
    });
    expect(seen).toEqual({ parsed: false, written: false });
    const read = await fetch(`${g.url}/api/merchant/transaction/large_g`, { headers: { Authorization: credentials.auth } });
    expect(await read.text()).toContain(`"notes":${JSON.stringify(notes)}`);
    const pushed = await fetch(`${g.url}/sandbox/extras/users/${encodeURIComponent('+919812345678')}`);
    expect(await pushed.text()).toContain(`"data":${JSON.stringify(data)}`);
  });
});
