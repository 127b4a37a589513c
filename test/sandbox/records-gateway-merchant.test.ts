/**
 * Gateway merchants cannot lose a field (src/sandbox/records.ts, gateway/records.ts), as
 * records-gateway.test.ts checks for transactions: a merchant created with every property of the
 * document's create request goes through each step of its life (documents uploaded, a rejected
 * verification, a passed one, dashboard access, the failed-status setting, disable), and
 * - each request (create, document upload, dashboard access, disable) sets every property its
 *   schema declares, so a request field added to the document fails here until it is sent, and
 *   each field it sends is on the stored record, under its own name or the one named in the
 *   request's `renamed` list: a field dropped at creation fails here;
 * - after each step the stored record still holds every field it was created with, each unchanged
 *   unless that step owns it;
 * - the Merchant API's views (`GET /api/merchant/{id}`, each document in it, the dashboard access
 *   answer) have every property their schema in the bundled document declares that applies in that
 *   state, with the request's values: a property the view in `gateway/views.ts` leaves out fails here.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { COLLECTIONS, type MerchantRecord } from '../../src/sandbox/gateway/records.js';
import { FILES, startGateway, type GatewayTest } from '../support/gateway.js';
import { propertiesOf, propertyNames } from '../support/gateway-schemas.js';

/** The record fields a step may change (every other field must keep its value). */
const CHANGED_BY_STEPS = new Set<string>([
  'stage', 'documents', 'verificationDueAt', 'verifications', 'credentials', 'disabledReason', 'failedStatus',
  'dashboardUsers', 'updatedAt',
]);

let t: GatewayTest;
beforeAll(async () => {
  t = await startGateway();
});
afterAll(async () => {
  await t.close();
});
afterEach(() => {
  expect(t.loggedErrors).toEqual([]);
});

function stored(id: string): MerchantRecord {
  const record = t.sandbox.store.collection<MerchantRecord>(COLLECTIONS.merchants).get(id);
  expect(record, `merchant record ${id}`).toBeDefined();
  return record!;
}

/** The fields of a record that hold a value. */
const present = (record: object) => Object.entries(record).filter(([, value]) => value !== undefined).map(([key]) => key).sort();

/** The request sets every property of its schema (`schema`, or a property of it one level down). */
function expectEveryProperty(request: object, schema: string, within?: string) {
  const properties = within === undefined ? propertiesOf(schema) : propertiesOf(propertiesOf(schema)[within]!);
  expect(Object.keys(request).sort(), `the request sets every property of ${schema}${within === undefined ? '' : `.${within}`}`)
    .toEqual(Object.keys(properties).sort());
}

/**
 * Every field of the request is on the record: under its own name with the same value, or, for a
 * field the record keeps in another form, under the name `renamed` gives it with the value given there.
 */
function expectStored(request: Record<string, unknown>, record: object, renamed: Record<string, [field: string, value: unknown]>, what: string) {
  for (const [name, value] of Object.entries(request)) {
    const [field, expected] = renamed[name] ?? [name, value];
    expect((record as Record<string, unknown>)[field], `${what}: request field ${name} stored as ${field}`).toEqual(expected);
  }
}

/** Every field the record was created with is still there, and those no step owns are unchanged. */
function expectRecordKept(created: MerchantRecord, now: MerchantRecord, after: string) {
  expect(present(now), `record fields after ${after}`).toEqual(expect.arrayContaining(present(created)));
  for (const field of present(created)) {
    if (CHANGED_BY_STEPS.has(field)) continue;
    expect(now[field as keyof MerchantRecord], `record.${field} after ${after}`).toEqual(created[field as keyof MerchantRecord]);
  }
}

/**
 * The view read back through the Merchant API: every property of `GatewayMerchant` but those that
 * do not apply in this state, the create request's values for the properties it shares with the
 * request, and every property of `GatewayMerchantDocument` in each document (`rejectionReason`
 * only on a rejected one).
 */
async function expectViewKept(request: Record<string, unknown>, after: string, notApplicable: string[]): Promise<any> {
  const read = await t.merchantApi('GET', `/api/merchant/${request.id as string}`);
  expect(read.status, read.text).toBe(200);
  const view = read.body.merchant;
  const expected = propertyNames('GatewayMerchant').filter((property) => !notApplicable.includes(property));
  expect(expected.length).toBeGreaterThan(9);
  expect(Object.keys(view).sort(), `merchant view properties after ${after}`).toEqual(expected);
  for (const property of expected) {
    if (property in request) expect(view[property], `view.${property} after ${after}`).toEqual(request[property]);
  }
  for (const document of view.documents) {
    const documentProperties = propertyNames('GatewayMerchantDocument').filter((property) => property !== 'rejectionReason' || document.status === 'rejected');
    expect(Object.keys(document).sort(), `document ${document.documentType} view properties after ${after}`).toEqual(documentProperties);
  }
  return view;
}

/** Uploads a document with every property of the upload request; checks what the record keeps of it. */
async function upload(merchantId: string, documentType: 'PAN' | 'CANCELLED_CHEQUE', value: string) {
  const body = { documentType, document: { type: 'base64', value } };
  expectEveryProperty(body, 'GatewayDocumentUploadRequest');
  expectEveryProperty(body.document, 'GatewayDocumentUploadRequest', 'document');
  const answer = await t.merchantApi('POST', `/api/merchant/${merchantId}/document`, body);
  expect(answer.status, answer.text).toBe(200);
  const document = stored(merchantId).documents.find((item) => item.documentType === documentType);
  expect(document, `stored ${documentType}`).toBeDefined();
  // The file is not kept: the record keeps what its bytes showed.
  expectStored(body, document!, { document: ['bytes', Buffer.from(value, 'base64').length] }, `upload ${documentType}`);
  return answer.body.merchant;
}

async function verify(merchantId: string, outcome: 'pass' | 'reject') {
  const answer = await t.request('POST', `/sandbox/gateway/merchants/${merchantId}/verify`, {
    body: JSON.stringify({ outcome }),
    headers: { 'Content-Type': 'application/json' },
  });
  expect(answer.status, answer.text).toBe(200);
}

describe('a gateway merchant with every request field, through its life', () => {
  it('keeps every field, in the record and in the Merchant API views, from creation to disable', async () => {
    const id = t.id('rec_m');
    const merchant = {
      id,
      brandName: 'Acme Retail',
      entityName: 'Acme Retail Private Limited',
      brandHomePageUrl: 'https://acme.example.in',
      mccCode: 5411,
      defaultLogo: { type: 'base64', values: FILES.png },
      defaultFavicon: { type: 'base64', values: FILES.png },
      defaultWebhookUrl: 'https://pg.example.in/hooks',
      defaultColor: '#1A73E8',
      settlementDetails: { accountNumber: '001234567890', ifscCode: 'HDFC0001234', beneficiaryName: 'Acme', mdrChargedOnMerchant: true },
    };
    const body = { merchant };
    expectEveryProperty(body, 'GatewayMerchantCreateRequest');
    expectEveryProperty(merchant, 'GatewayMerchantCreateRequest', 'merchant');
    const created = await t.merchantApi('POST', '/api/merchant', body);
    expect(created.status, created.text).toBe(201);
    const record = stored(id);
    // The images are not kept: the record notes that they were sent.
    expectStored(merchant, record, { defaultLogo: ['hasLogo', true], defaultFavicon: ['hasFavicon', true] }, 'create');
    // The create answer is the same view as the one read back.
    expect(created.body.merchant).toEqual(await expectViewKept(merchant, 'create', ['basicAuthDetails']));

    await upload(id, 'PAN', FILES.pdf);
    expectRecordKept(record, stored(id), 'the first upload');
    await expectViewKept(merchant, 'the first upload', ['basicAuthDetails']);

    expect((await upload(id, 'CANCELLED_CHEQUE', FILES.png)).stage).toBe('verificationInProgress');
    await verify(id, 'reject');
    expectRecordKept(record, stored(id), 'a rejected verification');
    const rejected = await expectViewKept(merchant, 'a rejected verification', ['basicAuthDetails']);
    expect(rejected.documents.map((document: any) => document.status).sort()).toEqual(['rejected', 'verified']);

    await upload(id, 'PAN', FILES.pdf);
    await verify(id, 'pass');
    expectRecordKept(record, stored(id), 'a passed verification');
    expect((await expectViewKept(merchant, 'a passed verification', [])).stage).toBe('enabled');

    const access = { dashboardUser: { name: 'Meera Iyer', email: 'meera.iyer@example.in' } };
    expectEveryProperty(access, 'GatewayDashboardAccessRequest');
    expectEveryProperty(access.dashboardUser, 'GatewayDashboardAccessRequest', 'dashboardUser');
    const invited = await t.merchantApi('POST', `/api/merchant/${id}/dashboard-access`, access);
    expect(invited.status, invited.text).toBe(201);
    const user = stored(id).dashboardUsers.find((item) => item.email === access.dashboardUser.email);
    expect(user, 'the dashboard user on the record').toBeDefined();
    expectStored(access.dashboardUser, user!, {}, 'dashboard access');
    expect(Object.keys(invited.body.dashboardAccess).sort(), 'dashboard access view properties')
      .toEqual(Object.keys(propertiesOf(propertiesOf('GatewayDashboardAccessEnvelope').dashboardAccess!)).sort());
    expectStored(access.dashboardUser, invited.body.dashboardAccess, {}, 'dashboard access view');
    expectRecordKept(record, stored(id), 'dashboard access');
    await expectViewKept(merchant, 'dashboard access', []);

    const failedStatus = await t.request('POST', `/sandbox/gateway/merchants/${id}/failed-status`, {
      body: JSON.stringify({ status: 'FAILURE' }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(failedStatus.status, failedStatus.text).toBe(200);
    expectRecordKept(record, stored(id), 'the failed status');
    await expectViewKept(merchant, 'the failed status', []);

    const disable = { reason: 'Closed its online store.' };
    expectEveryProperty(disable, 'GatewayDisableMerchantRequest');
    const disabled = await t.merchantApi('POST', `/api/merchant/${id}/disable`, disable);
    expect(disabled.status, disabled.text).toBe(200);
    expectStored(disable, stored(id), { reason: ['disabledReason', disable.reason] }, 'disable');
    expectRecordKept(record, stored(id), 'disable');
    expect((await expectViewKept(merchant, 'disable', ['basicAuthDetails'])).stage).toBe('disabled');
  });
});
