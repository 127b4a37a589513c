/**
 * Records cannot lose a field (src/sandbox/records.ts): each field-by-field copy of a record is
 * checked against the record type's own list of keys, read from the sources with the TypeScript
 * compiler (so a field added to the type is checked without touching this file); and a whole
 * transaction, initiated with every optional field, keeps each field it had through its
 * transitions (confirm, refund) in the store, and the sandbox's view of it shows each request
 * field. The gateway's transitions, and its views read back
 * through the API, are checked the same way in records-gateway.test.ts.
 */
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { copySdkTransaction, SDK_TRANSACTIONS, type SdkTransaction } from '../../src/sandbox/families/sdk.js';
import { copyWebTransaction, WEB_TRANSACTIONS, type WebTransaction } from '../../src/sandbox/families/web.js';
import { copyCheck, copyDocument, copyMerchant, copyOtp, copyRefund, copyTransaction } from '../../src/sandbox/gateway/records.js';
import { bundleOf, requireDocument, topLevelProperties, type Family } from '../support/documents.js';
import { REPOSITORY } from '../support/hermetic.js';
import { compileSources } from '../support/typescript.js';
import { APPROVED_TEST_USER } from '../../src/sandbox/fixtures.js';
import { useSandbox, type TestSandbox } from '../support/sandbox.js';

const GATEWAY_RECORDS = 'src/sandbox/gateway/records.ts';

/** Each record with a field-by-field copy: where its type is declared, and the copy. */
const COPIES: { type: string; file: string; copy: (record: never) => object }[] = [
  { type: 'WebTransaction', file: 'src/sandbox/families/web-records.ts', copy: copyWebTransaction },
  { type: 'SdkTransaction', file: 'src/sandbox/families/sdk.ts', copy: copySdkTransaction },
  { type: 'TransactionRecord', file: GATEWAY_RECORDS, copy: copyTransaction },
  { type: 'OtpState', file: GATEWAY_RECORDS, copy: copyOtp },
  { type: 'RefundRecord', file: GATEWAY_RECORDS, copy: copyRefund },
  { type: 'MerchantRecord', file: GATEWAY_RECORDS, copy: copyMerchant },
  { type: 'StoredDocument', file: GATEWAY_RECORDS, copy: copyDocument },
  { type: 'CheckRecord', file: GATEWAY_RECORDS, copy: copyCheck },
];

/**
 * One compiled program for every file that declares a record (several records share a file, and
 * the files share most of their imports): the compiler reads and checks each module once.
 */
let program: ts.Program | undefined;

/** The property names of the interface `name` declared in `file`, as the compiler sees them. */
function fieldsOf(file: string, name: string): string[] {
  const path = join(REPOSITORY, file);
  program ??= compileSources([...new Set(COPIES.map((copy) => join(REPOSITORY, copy.file)))]);
  const checker = program.getTypeChecker();
  let fields: string[] | undefined;
  const visit = (node: ts.Node): void => {
    if (ts.isInterfaceDeclaration(node) && node.name.text === name) {
      fields = checker.getPropertiesOfType(checker.getTypeAtLocation(node.name)).map((property) => property.name);
    }
    ts.forEachChild(node, visit);
  };
  visit(program.getSourceFile(path)!);
  if (fields === undefined) throw new Error(`no interface ${name} in ${file}`);
  return fields;
}

describe('a copy of a record', () => {
  for (const { type, file, copy } of COPIES) {
    it(`of ${type} keeps every field the type declares, optional ones included`, () => {
      const fields = fieldsOf(file, type);
      expect(fields.length).toBeGreaterThanOrEqual(5);
      // Every field holds a value of its own, so a copy that drops or swaps one is seen.
      const record = Object.fromEntries(fields.map((field) => [field, `value of ${field}`]));
      const copied = copy(record as never) as Record<string, unknown>;
      expect(Object.keys(copied).sort()).toEqual([...fields].sort());
      for (const field of fields) expect(copied[field], field).toBe(record[field]);
    });
  }
});

/**
 * The request sets every property of its schema in the family's bundled document (a request field
 * added to the document fails here until it is sent), and each one is on the stored record, under
 * its own name or the one `renamed` gives it: a field dropped at the initiate fails here.
 */
function expectEveryRequestFieldStored(family: Family, schema: string, body: object, record: object, renamed: Record<string, string> = {}) {
  const properties = topLevelProperties(requireDocument(bundleOf(family)), { $ref: `#/components/schemas/${schema}` });
  expect(properties.size).toBeGreaterThan(2);
  expect(Object.keys(body).sort(), `the initiate sets every property of ${schema}`).toEqual([...properties].sort());
  for (const name of Object.keys(body)) {
    const field = renamed[name] ?? name;
    expect((record as Record<string, unknown>)[field], `request field ${name} stored as ${field}`).toBeDefined();
  }
}

/**
 * Each request field is shown by the sandbox's view of the transaction (`GET
 * /sandbox/<family>/transactions/{id}`), under its name or the one `renamed` gives, after each
 * transition: a field stored but left out of the view fails here.
 */
async function expectEveryRequestFieldShown(t: TestSandbox, family: 'web' | 'sdk', id: string, body: object, renamed: Record<string, string> = {}) {
  const view = await t.request('GET', `/sandbox/${family}/transactions/${encodeURIComponent(id)}`);
  expect(view.status, view.text).toBe(200);
  const shown = Object.keys(view.body as object);
  const missing = Object.keys(body).filter((name) => !shown.includes(renamed[name] ?? name));
  expect(missing, `request fields the ${family} view leaves out`).toEqual([]);
}

describe('a transaction through its transitions', () => {
  const t = useSandbox();
  /** The fields of a stored record that hold a value. */
  const present = (record: object) => Object.entries(record).filter(([, value]) => value !== undefined).map(([key]) => key).sort();

  it('web: every field present at the initiate is still there after confirm and refund', async () => {
    const id = `rec_web_${Date.now()}`;
    const body = {
      id,
      amount: 150_000,
      user: { name: 'Asha Rao', phoneNumber: '+919000000001', email: 'asha.rao@example.in' },
      notes: { webhook_url: 'https://shop.example.in/wc-api/cb?key=k', orderId: 'o_1' },
      redirect: { url: 'https://shop.example.in/done', failureUrl: 'https://shop.example.in/failed', colorOverride: '#112233' },
    };
    expect((await t.web('POST', '/api/transaction', body)).status).toBe(200);
    const store = t.sandbox.store.collection<WebTransaction>(WEB_TRANSACTIONS);
    expectEveryRequestFieldStored('web', 'WebInitiateRequest', body, store.get(id)!, { notes: 'notesJson' });
    const created = present(store.get(id)!);
    expect(created).toEqual(expect.arrayContaining(['notesJson', 'webhookUrl', 'redirect', 'user']));
    await expectEveryRequestFieldShown(t, 'web', id, body, { id: 'transactionId' });
    expect((await t.request('POST', `/sandbox/web/transactions/${id}/confirm`)).status).toBe(200);
    expect(present(store.get(id)!)).toEqual(expect.arrayContaining(created));
    await expectEveryRequestFieldShown(t, 'web', id, body, { id: 'transactionId' });
    expect((await t.web('POST', '/api/refund', { transactionId: id, amount: 50_000 })).status).toBe(200);
    expect(present(store.get(id)!)).toEqual(expect.arrayContaining(created));
  });

  it('sdk: every field present at the initiate is still there after confirm and refund', async () => {
    const id = `rec_sdk_${Date.now()}`;
    const body = { merchantTransactionId: id, userPhoneNumber: APPROVED_TEST_USER.phoneNumber, userId: 'user_1', amount: 250_000 };
    const initiated = await t.sdk('/merchant/credit/initiateTransaction', body);
    expect(initiated.status, initiated.text).toBe(201);
    const store = t.sandbox.store.collection<SdkTransaction>(SDK_TRANSACTIONS);
    expectEveryRequestFieldStored('sdk', 'SdkInitiateRequest', body, store.get(id)!);
    const created = present(store.get(id)!);
    await expectEveryRequestFieldShown(t, 'sdk', id, body);
    expect((await t.request('POST', `/sandbox/sdk/transactions/${id}/confirm`)).status).toBe(200);
    expect(present(store.get(id)!)).toEqual(expect.arrayContaining(created));
    await expectEveryRequestFieldShown(t, 'sdk', id, body);
    const refund = await t.sdk('/merchant/credit/refundTransaction', { merchantTransactionId: id, amount: 1_000 });
    expect(refund.status, refund.text).toBe(200);
    expect(present(store.get(id)!)).toEqual(expect.arrayContaining(created));
  });
});
