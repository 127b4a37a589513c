/**
 * One story, continued (one-story.test.ts holds the webhooks): which code answers which condition,
 * and what each browser callback receives, read from the documents and compared with the sandbox.
 *
 * - Codes: each family's description carries its error table (rendered from the one list, D250,
 *   D251). For each condition a case names the words of the table's "When" cell that state it; the
 *   row found by those words gives the status and the code, and the sandbox, played into that
 *   condition, must answer exactly them.
 * - Callbacks: the web document's table of `sdk.js` parameters and the web checkout guide say, per
 *   status, whether `failureCallback` receives a signature (always, sometimes, never), and that
 *   `successCallback` receives one; the browser script's public types (src/browser/types.ts) must
 *   say the same.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorTableMarkers } from '../../src/contract/error-codes.js';
import type { Family } from '../../src/contract/families.js';
import { ROOT } from '../support/documents.js';
import { startGateway, type GatewayTest } from '../support/gateway.js';
import type { Answer } from '../support/sandbox.js';

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

interface TableRow {
  status: number;
  code: string;
  when: string;
}

/** The rows of a family's error table in its description, between the list's markers. */
function errorTable(family: Family): TableRow[] {
  const text = read(`openapi/descriptions/${family}.md`);
  const { start, end } = errorTableMarkers(family);
  const from = text.indexOf(start);
  const to = text.indexOf(end, from);
  if (from < 0 || to < 0) throw new Error(`openapi/descriptions/${family}.md has no error table`);
  const rows: TableRow[] = [];
  for (const line of text.slice(from, to).split('\n')) {
    const cells = /^\| (\d{3}) \| `([A-Z_]+)` \| (.*?) \| .* \|$/.exec(line);
    if (cells) rows.push({ status: Number(cells[1]), code: cells[2] as string, when: cells[3] as string });
  }
  return rows;
}

/** The one row of `family`'s table whose "When" states `words`. */
function stated(family: Family, words: string): TableRow {
  const rows = errorTable(family).filter((row) => row.when.includes(words));
  if (rows.length !== 1) throw new Error(`${family}: ${rows.length} rows of the error table say "${words}"`);
  return rows[0] as TableRow;
}

/** The code of an error answer: `errorCode` (gateway, extras) or `message` (web, SDK). */
const codeOf = (family: Family, answer: Answer) => (family === 'web' || family === 'sdk' ? answer.body?.message : answer.body?.errorCode);

interface Case {
  family: Family;
  condition: string;
  /** The words of the table's "When" cell that state the condition. */
  words: string;
  play: (t: GatewayTest, auth: string) => Promise<Answer>;
}

const USER = { name: 'Asha Rao', phoneNumber: '+919000000001' };
const webStart = (t: GatewayTest, id: string) => t.web('POST', '/api/transaction', { id, amount: 20_000, user: USER });
const sdkStart = (t: GatewayTest, id: string) =>
  t.sdk('/merchant/credit/initiateTransaction', { merchantTransactionId: id, userPhoneNumber: USER.phoneNumber, userId: 'u1', amount: 20_000 });
/** The second of two identical calls. */
const twice = async (call: () => Promise<Answer>) => {
  expect((await call()).status).toBeLessThan(300);
  return call();
};

const CASES: readonly Case[] = [
  {
    family: 'gateway',
    condition: 'a transaction id used before',
    words: 'a transaction with this id exists',
    play: (t, auth) => {
      const id = t.id('dup');
      return twice(() => t.createTransaction(auth, { id, amount: 20_000 }));
    },
  },
  {
    family: 'web',
    condition: 'a transaction id used before',
    words: 'a transaction with this id exists',
    play: (t) => {
      const id = t.id('web_dup');
      return twice(() => webStart(t, id));
    },
  },
  {
    family: 'sdk',
    condition: 'a transaction id used before',
    words: 'a transaction with this id exists',
    play: (t) => {
      const id = t.id('sdk_dup');
      return twice(() => sdkStart(t, id));
    },
  },
  {
    family: 'gateway',
    condition: 'a merchant id used before',
    words: 'a merchant id',
    play: async (t) => {
      const { id } = await t.createMerchant();
      return (await t.createMerchant({ id })).answer;
    },
  },
  {
    family: 'gateway',
    condition: 'a refund id used before with another amount',
    words: 'a refund id with another amount',
    play: async (t, auth) => {
      const paid = await t.successful(auth, 20_000);
      const path = `/api/merchant/transaction/${paid}/refund`;
      expect((await t.call('POST', path, auth, { refund: { id: 'r_same', amount: 1_000 } })).status).toBe(200);
      return t.call('POST', path, auth, { refund: { id: 'r_same', amount: 2_000 } });
    },
  },
  {
    family: 'gateway',
    condition: 'a refund of a transaction that is not SUCCESS',
    words: 'the transaction is not `SUCCESS`',
    play: async (t, auth) => {
      const id = t.id('pending');
      expect((await t.createTransaction(auth, { id, amount: 20_000 })).status).toBe(200);
      return t.call('POST', `/api/merchant/transaction/${id}/refund`, auth, { refund: { amount: 1_000 } });
    },
  },
  {
    family: 'web',
    condition: 'a refund of a transaction that is not SUCCESS',
    words: 'the transaction is not `SUCCESS`',
    play: async (t) => {
      const id = t.id('web_pending');
      expect((await webStart(t, id)).status).toBe(200);
      return t.web('POST', '/api/refund', { transactionId: id, amount: 1_000 });
    },
  },
  {
    family: 'sdk',
    condition: 'a refund of a transaction that is not SUCCESS',
    words: 'the transaction is not `SUCCESS`',
    play: async (t) => {
      const id = t.id('sdk_pending');
      expect((await sdkStart(t, id)).status).toBe(201);
      return t.sdk('/merchant/credit/refundTransaction', { merchantTransactionId: id, amount: 1_000 });
    },
  },
  {
    family: 'gateway',
    condition: 'an OTP after the third wrong one',
    words: 'after the third wrong one',
    play: async (t, auth) => {
      const id = t.id('otp');
      expect((await t.createTransaction(auth, { id, amount: 20_000 })).status).toBe(200);
      const referenceId = (await t.stage(auth, id)).transactionStage.nextStep.options.userInputOptions[0].referenceId as string;
      const path = `/api/merchant/transaction/${id}/user-inputs/${referenceId}`;
      for (let attempt = 0; attempt < 3; attempt++) expect((await t.call('POST', path, auth, { value: '999999' })).status).toBe(400);
      return t.call('POST', path, auth, { value: '123456' });
    },
  },
  {
    family: 'gateway',
    condition: 'an unknown transaction in the address',
    words: 'the transaction named in the address',
    play: (t, auth) => t.call('GET', '/api/merchant/transaction/no_such_txn_9', auth),
  },
  {
    family: 'web',
    condition: 'an unknown transaction in the body',
    words: 'the transaction named in the body',
    play: (t) => t.web('POST', '/api/refund', { transactionId: 'no_such_txn_9' }),
  },
  ...(['gateway', 'extras', 'web', 'sdk'] as const).map(
    (family): Case => ({
      family,
      condition: 'a path no route has',
      words: 'no route has this path',
      play: (t) =>
        t.request('GET', { gateway: '/api/merchant/nope/deeper/than/any', extras: '/service/database/nope', web: '/api/transaction/nope/deeper', sdk: '/merchant/credit/nope' }[family]),
    }),
  ),
  {
    family: 'web',
    condition: 'a method the path does not take',
    words: 'the method does not',
    play: (t) => t.request('GET', '/api/refund'),
  },
  {
    family: 'sdk',
    condition: 'a method the path does not take',
    words: 'the method does not',
    play: (t) => t.request('GET', '/merchant/credit/initiateTransaction'),
  },
];

describe('which code answers which condition: the documents\' error tables and the sandbox agree', () => {
  let t: GatewayTest;
  let auth: string;
  beforeAll(async () => {
    t = await startGateway();
    auth = (await t.onboard()).credentials.auth;
  });
  afterAll(async () => {
    await t.close();
  });

  for (const entry of CASES) {
    it(`${entry.family}: ${entry.condition}`, async () => {
      const row = stated(entry.family, entry.words);
      const answer = await entry.play(t, auth);
      expect([answer.status, codeOf(entry.family, answer)], answer.text).toEqual([row.status, row.code]);
    });
  }

  it('a condition of several families has the same row in each of their tables', () => {
    for (const words of ['a transaction with this id exists', 'the transaction is not `SUCCESS`', 'no route has this path', 'the method does not']) {
      const rows = (['gateway', 'web', 'sdk'] as const).map((family) => stated(family, words));
      expect(new Set(rows.map((row) => `${row.status} ${row.code}`)).size, words).toBe(1);
    }
  });
});

type Receives = 'signature' | 'sometimes' | 'no signature';

/**
 * Per status named in a table cell, what the text after it (up to the next status) says of the
 * signature: "no signature" never, "without" sometimes, else "signature" always.
 */
function receivesFromText(cell: string): Map<string, Receives> {
  const found = new Map<string, Receives>();
  const parts = cell.split(/`(SUCCESS|FAILURE|CANCELLED|GET_TXN_ID_FAILED)`/);
  for (let index = 1; index < parts.length; index += 2) {
    const status = parts[index] as string;
    const after = parts[index + 1] ?? '';
    if (found.has(status)) continue;
    if (/no signature/.test(after)) found.set(status, 'no signature');
    else if (/without/.test(after)) found.set(status, 'sometimes');
    else if (/signature/.test(after)) found.set(status, 'signature');
  }
  return found;
}

/** What `failureCallback`'s argument tuples in the browser script's types give each status. */
function receivesFromTypes(): Map<string, Receives> {
  const types = read('src/browser/types.ts');
  const union = types.slice(types.indexOf('export type FailureCallbackArguments'), types.indexOf(';', types.indexOf('export type FailureCallbackArguments')));
  const found = new Map<string, Receives>();
  for (const match of union.matchAll(/\[status: '(\w+)', signature(\??): ([^\]]+)\]/g)) {
    const type = (match[3] as string).trim();
    found.set(match[1] as string, type === 'undefined' ? 'no signature' : type.includes('undefined') || match[2] === '?' ? 'sometimes' : 'signature');
  }
  return found;
}

/** The cell of a Markdown table row whose first cell is `name` (in backticks), by column index. */
function cell(text: string, name: string, column: number): string {
  const line = text.split('\n').find((candidate) => candidate.trim().startsWith(`| \`${name}\``));
  if (line === undefined) throw new Error(`no row for ${name}`);
  return line.split(' | ')[column] ?? '';
}

describe('what each callback receives: the web document, the guide and the browser script\'s types agree', () => {
  const sdkJs = (parse(read('openapi/paths/web/sdk.js.yaml')) as { get: { description: string } }).get.description;
  const guide = read('docs/web-checkout.md');
  const types = receivesFromTypes();

  it('the types give failureCallback FAILURE, CANCELLED and GET_TXN_ID_FAILED, as the description does', () => {
    expect([...types.keys()].sort()).toEqual(['CANCELLED', 'FAILURE', 'GET_TXN_ID_FAILED']);
  });

  it('the web document says of each status what the types give it', () => {
    expect(receivesFromText(cell(sdkJs, 'failureCallback', 3))).toEqual(types);
  });

  it('the guide says of each status what the types give it', () => {
    expect(receivesFromText(cell(guide, 'failureCallback', 2))).toEqual(types);
  });

  it('successCallback receives the signature of SUCCESS in the document, the guide and the types', () => {
    expect(cell(sdkJs, 'successCallback', 1)).toBe('function(signature)');
    expect(cell(sdkJs, 'successCallback', 3)).toContain('`SUCCESS`');
    expect(cell(guide, 'successCallback', 2)).toMatch(/^`\(signature\) => …`.*`SUCCESS`/);
    expect(read('src/browser/types.ts')).toMatch(/successCallback: \(signature: StatusSignature\) => void;/);
  });
});
