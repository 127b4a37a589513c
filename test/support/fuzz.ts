/**
 * The fuzz harness of test/sandbox/fuzz.test.ts: the request spec of every operation (from the
 * contract model's examples and parameters), the fast-check arbitraries that mutate them, building
 * and sending each case, the state the cases run against, and the run itself with its figures.
 * The test files keep the assertions (fuzz.test.ts, fuzz-volume.test.ts); the first's header says what is fuzzed and how to reproduce a case
 * (FUZZ_SEED, FUZZ_ONLY, FUZZ_REQUESTS).
 */
import { request as httpRequest, Agent } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, expect } from 'vitest';
import { contractOf, type Contract, type Family } from '../../src/contract/index.js';
import { APPROVED_TEST_USER, TEST_OTP } from '../../src/sandbox/fixtures.js';
import { sdkSignature, webSignature } from '../../src/signature.js';
import { checkAgainstContract, initiateSdk, PRIVATE_KEY, PARTNER_ID, EXTRAS_AUTH } from './sandbox.js';
import { basic, ELIGIBLE, MERCHANT_AUTH, startGateway, type GatewayTest } from './gateway.js';

/** A run of the fuzzer: the seed its cases come from, and how many requests it sends. */
export interface FuzzRun {
  seed: number;
  count: number;
}
/**
 * `npm test`'s run (test/sandbox/fuzz.test.ts): 1,500 requests, every operation reached with
 * each kind of mutation many times over; the slow group's (test/sandbox/fuzz-volume.test.ts),
 * which `.ci/run` always runs, sends 10,000 more from another seed (why the quick run is not
 * larger: docs/code-decisions.md, D331). FUZZ_SEED and FUZZ_REQUESTS change either.
 */
export const QUICK_RUN: FuzzRun = { seed: Number(process.env.FUZZ_SEED ?? 20_261_122), count: Number(process.env.FUZZ_REQUESTS ?? 1_500) };
export const VOLUME_RUN: FuzzRun = { seed: Number(process.env.FUZZ_SEED ?? 20_261_128), count: Number(process.env.FUZZ_REQUESTS ?? 10_000) };
const ONLY = process.env.FUZZ_ONLY === undefined ? undefined : Number(process.env.FUZZ_ONLY);
const CONCURRENCY = 16;
const REQUEST_TIMEOUT_MS = 20_000;
/** Bodies stay under the 1 MiB limit (D24): the huge strings are at most this many bytes as JSON. */
const HUGE_BYTES = 900_000;
/** Node's default limit of the request line and headers is 16 KiB; long values stay under it. */
const LONG_HEADER = 2_000;

type AuthKind = 'sdk' | 'web' | 'extras' | 'merchantApi' | 'transactional' | 'none';
type Json = null | boolean | number | string | Json[] | { [key: string]: Json } | Huge | Deep;

/** A huge string, made only when the body is serialized (the 10,000 cases stay small in memory). */
class Huge {
  constructor(
    readonly unit: string,
    readonly count: number,
  ) {}
  toString(): string {
    return this.unit.repeat(this.count);
  }
}

/** A value nested `depth` levels deep (arrays or objects), written into the body text directly. */
class Deep {
  constructor(
    readonly depth: number,
    readonly open: '[' | '{"a":',
  ) {}
  toString(): string {
    const close = this.open === '[' ? ']' : '}';
    return `${this.open.repeat(this.depth)}1${close.repeat(this.depth)}`;
  }
}

// ---------------------------------------------------------------------------------------------
// State made by the setup, and the base requests of every operation.

export interface State {
  merchantId: string;
  pendingMerchants: string[];
  disableTargets: string[];
  transactional: string;
  otherTransactional: string;
  checkId: string;
  authTransactions: { id: string; referenceId: string }[];
  paymentTransaction: { id: string; amount: number };
  successTransactions: string[];
  failedTransaction: string;
  sdkPending: string;
  sdkSuccess: string[];
  webPending: string;
  webSuccess: string;
}

interface Base {
  path: Record<string, string>;
  query: [string, string][];
  body: Json | undefined;
}

export interface OperationSpec {
  family: Family;
  operationId: string;
  method: 'GET' | 'POST';
  template: string;
  auth: AuthKind;
  /** Request examples from the document (empty for operations without a body). */
  examples: Json[];
  /** Ways to bind the example to the setup's state. */
  bindings: ((example: Json | undefined, state: State) => Base)[];
  /** Where a fresh, unique id goes in the body (mutation `freshId`). */
  idPath?: (string | number)[];
  /** Query parameters the operation declares. */
  queryNames: string[];
  /** Share of its family's cases, relative to the others (default 3). */
  weight: number;
}

const clone = <T>(value: T): T => (value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T));

function withPath(example: Json | undefined, path: (string | number)[], value: Json): Json | undefined {
  const copy = clone(example) as any;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key];
  node[path[path.length - 1]!] = value;
  return copy;
}

function examplesOf(contract: Contract, operationId: string): Json[] {
  const operation = contract.operation(operationId);
  const found: Json[] = [];
  const item = (contract.document.paths as any)[operation.path][operation.method.toLowerCase()];
  const media = item.requestBody?.content?.['application/json'];
  if (media?.example !== undefined) found.push(media.example);
  for (const example of Object.values<any>(media?.examples ?? {})) found.push(example.value);
  return found;
}

function queryNamesOf(contract: Contract, operationId: string): string[] {
  return contract.operation(operationId).parameters.filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name);
}

const body = (example: Json | undefined): Base => ({ path: {}, query: [], body: clone(example) });

function operationSpecs(contracts: Record<Family, Contract>): OperationSpec[] {
  const spec = (
    family: Family,
    operationId: string,
    auth: AuthKind,
    bindings: OperationSpec['bindings'],
    idPath?: (string | number)[],
    weight = 3,
  ): OperationSpec => {
    const operation = contracts[family].operation(operationId);
    return {
      family,
      operationId,
      method: operation.method as 'GET' | 'POST',
      template: operation.path,
      auth,
      examples: examplesOf(contracts[family], operationId),
      bindings,
      queryNames: queryNamesOf(contracts[family], operationId),
      weight,
      ...(idPath === undefined ? {} : { idPath }),
    };
  };
  const sdkId = (pick: (state: State) => string) => (example: Json | undefined, state: State) =>
    body(withPath(example, ['merchantTransactionId'], pick(state)));
  return [
    // SDK flow
    spec('sdk', 'initiateSdkTransaction', 'sdk', [body], ['merchantTransactionId']),
    spec('sdk', 'checkSdkTransactionStatus', 'sdk', [
      sdkId((state) => state.sdkPending),
      sdkId((state) => state.sdkSuccess[0]!),
      body,
    ]),
    spec('sdk', 'refundSdkTransaction', 'sdk', [
      sdkId((state) => state.sdkSuccess[0]!),
      sdkId((state) => state.sdkSuccess[1]!),
      sdkId((state) => state.sdkSuccess[2]!),
      sdkId((state) => state.sdkPending),
      body,
    ]),
    // Web flow
    spec('web', 'initiateWebTransaction', 'web', [body], ['id']),
    spec('web', 'getWebTransactionStatus', 'web', [
      (_example, state) => ({ path: {}, query: [['id', state.webPending]], body: undefined }),
      (_example, state) => ({ path: {}, query: [['id', state.webSuccess]], body: undefined }),
      () => ({ path: {}, query: [['id', 'web_20261122_0007']], body: undefined }),
    ]),
    // The browser script: no credentials, only its query and headers to mutate.
    spec('web', 'downloadBrowserScript', 'none', [() => ({ path: {}, query: [], body: undefined })], undefined, 1),
    // Extras
    spec('extras', 'getCreditInfo', 'extras', [
      ...['+919000000001', '+919000000003', '+919000000009', '+919876543210'].map(
        (phone) => () => ({ path: {}, query: [['userPhoneNumber', phone]] as [string, string][], body: undefined }),
      ),
    ]),
    spec('extras', 'pushIdentification', 'extras', [body]),
    spec('extras', 'pushMerchantData', 'extras', [body]),
    // Gateway, Merchant API
    spec('gateway', 'createMerchant', 'merchantApi', [body], ['merchant', 'id']),
    spec('gateway', 'getMerchant', 'merchantApi', [
      (_example, state) => ({ path: { id: state.merchantId }, query: [], body: undefined }),
      (_example, state) => ({ path: { id: state.pendingMerchants[0]! }, query: [], body: undefined }),
      () => ({ path: { id: 'merchant_acme_01' }, query: [], body: undefined }),
    ]),
    spec('gateway', 'uploadMerchantDocument', 'merchantApi', [
      (example, state) => ({ path: { id: state.pendingMerchants[0]! }, query: [], body: clone(example) }),
      (example, state) => ({ path: { id: state.pendingMerchants[1]! }, query: [], body: clone(example) }),
      (example, state) => ({ path: { id: state.merchantId }, query: [], body: clone(example) }),
    ]),
    spec('gateway', 'disableMerchant', 'merchantApi', [
      ...[0, 1, 2, 3].map((index) => (example: Json | undefined, state: State) => ({
        path: { id: state.disableTargets[index]! },
        query: [] as [string, string][],
        body: clone(example),
      })),
    ]),
    spec(
      'gateway',
      'createDashboardAccess',
      'merchantApi',
      [
        (example, state) => ({ path: { id: state.merchantId }, query: [], body: clone(example) }),
        (example, state) => ({ path: { id: state.pendingMerchants[2]! }, query: [], body: clone(example) }),
      ],
      ['dashboardUser', 'email'],
    ),
    // Gateway, Transactional API
    spec('gateway', 'checkPreEligibility', 'transactional', [body]),
    spec(
      'gateway',
      'createTransaction',
      'transactional',
      [
        body,
        (example, state) => {
          const bound = clone(example) as any;
          if (bound.preEligibilityCheckId !== undefined) bound.preEligibilityCheckId = state.checkId;
          return { path: {}, query: [], body: bound };
        },
      ],
      ['transaction', 'id'],
    ),
    spec('gateway', 'listTransactions', 'transactional', [
      () => ({ path: {}, query: [], body: undefined }),
      () => ({ path: {}, query: [['status', 'SUCCESS'], ['limit', '5']], body: undefined }),
      () => ({ path: {}, query: [['createdFrom', '2020-01-01T00:00:00Z'], ['createdTo', '2100-01-01T00:00:00Z']], body: undefined }),
    ]),
    spec('gateway', 'getTransaction', 'transactional', [
      (_example, state) => ({ path: { id: state.authTransactions[0]!.id }, query: [['include', 'stage']], body: undefined }),
      (_example, state) => ({ path: { id: state.paymentTransaction.id }, query: [['include', 'stage']], body: undefined }),
      (_example, state) => ({ path: { id: state.successTransactions[0]! }, query: [], body: undefined }),
      (_example, state) => ({ path: { id: state.failedTransaction }, query: [['include', 'stage']], body: undefined }),
    ]),
    spec('gateway', 'submitUserInput', 'transactional', [
      ...[0, 1, 2].map((index) => (example: Json | undefined, state: State) => ({
        path: { transactionId: state.authTransactions[index]!.id, referenceId: state.authTransactions[index]!.referenceId },
        query: [] as [string, string][],
        body: clone(example),
      })),
      (example, state) => ({
        path: { transactionId: state.authTransactions[0]!.id, referenceId: state.authTransactions[0]!.referenceId },
        query: [],
        body: withPath(example, ['value'], TEST_OTP.correct) ?? null,
      }),
    ]),
    spec('gateway', 'registerExternalPayment', 'transactional', [
      (example, state) => ({
        path: { transactionId: state.paymentTransaction.id },
        query: [],
        body: withPath(example, ['metaData', 'amount'], state.paymentTransaction.amount) ?? null,
      }),
      (example, state) => ({ path: { transactionId: state.paymentTransaction.id }, query: [], body: clone(example) }),
    ]),
    spec(
      'gateway',
      'refundTransaction',
      'transactional',
      [0, 1, 2].map((index) => (example: Json | undefined, state: State) => {
        const bound = clone(example) as any;
        // The documents' example webhook URLs are not reachable; the fake fetch answers anyway.
        return { path: { transactionId: state.successTransactions[index]! }, query: [] as [string, string][], body: bound };
      }),
      ['refund', 'id'],
    ),
    spec('gateway', 'getSettlement', 'transactional', [
      () => ({ path: {}, query: [], body: undefined }),
      () => ({ path: {}, query: [['from', '2026-11-01'], ['to', '2026-11-30']], body: undefined }),
    ]),
  ];
}

// ---------------------------------------------------------------------------------------------
// Mutations

type Mutation =
  | { kind: 'set'; at: number; value: Json }
  | { kind: 'remove'; at: number }
  | { kind: 'add'; at: number; key: string; value: Json }
  | { kind: 'root'; value: Json }
  | { kind: 'freshId' }
  | { kind: 'huge'; at: number; unit: string; fraction: number }
  /** A leaf replaced by a value of its own type, well formed or nearly so: reaches the handlers. */
  | { kind: 'same'; at: number; text: string; number: number; flag: boolean };

type RawMutation =
  | { kind: 'truncate'; at: number }
  | { kind: 'append'; text: string }
  | { kind: 'insertBytes'; at: number; bytes: number[] }
  | { kind: 'bom' }
  | { kind: 'empty' }
  | { kind: 'pad'; size: number }
  | { kind: 'deep'; depth: number; open: '[' | '{"a":' }
  | { kind: 'text'; text: string }
  | { kind: 'bodyOnGet' };

type QueryMutation =
  | { kind: 'set'; at: number; value: string; raw: boolean }
  | { kind: 'remove'; at: number }
  | { kind: 'duplicate'; at: number }
  | { kind: 'unknown'; name: string; value: string };

type PathMutation = { kind: 'set'; at: number; value: string; raw: boolean };

type AuthMutation =
  | { kind: 'missingSignature' }
  | { kind: 'missingPartner' }
  | { kind: 'wrongPartner'; value: string }
  | { kind: 'malformedSignature'; value: string }
  | { kind: 'wrongKey' }
  | { kind: 'signOriginal' }
  | { kind: 'signOtherPath' }
  | { kind: 'duplicateSignature' }
  | { kind: 'missingBasic' }
  | { kind: 'wrongPassword' }
  | { kind: 'wrongUser' }
  | { kind: 'otherKind'; which: number }
  | { kind: 'malformedBasic'; value: string };

interface Case {
  op: number;
  example: number;
  binding: number;
  mutations: Mutation[];
  raw: RawMutation | undefined;
  contentType: string | null | undefined;
  query: QueryMutation[];
  path: PathMutation[];
  /** Undefined: signed and authenticated correctly over the final request. */
  auth: AuthMutation | undefined;
}

const idLike = fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/);
const phoneLike = fc.stringMatching(/^\+91[0-9]{10}$/);

const specialStrings = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  'null',
  'true',
  '0',
  '-1',
  '1e309',
  '"',
  '\\',
  '\u202e\u0627\u0644\u0639\u0631\u0628\u064a\u0629',
  '😀🇮🇳👩‍👩‍👧',
  '\ud800',
  'e\u0301',
  '\uffff\ufffe',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '%00',
  '../../etc/passwd',
  '__proto__',
  'constructor',
  '+919000000001 ',
  '+91900000000１',
  '2026-02-30',
  '2026-11-22T25:00:00Z',
  'ABCDE1234F\n',
  'https://example.in/\u0000',
  'javascript:alert(1)',
  '#GGGGGG',
);

const weirdNumber = fc.oneof(
  fc.constantFrom(0, -0, -1, 0.5, 99.999, 100.0000001, 1e21, 1e308, -1e308, 2 ** 53 + 1, -(2 ** 63), 10_000_001, 99, 100, 10_000_000, 4.9e-324),
  fc.integer(),
  fc.double({ noNaN: false }),
  fc.integer({ min: 100, max: 10_000_000 }),
);

const leaf: fc.Arbitrary<Json> = fc.oneof(
  { weight: 3, arbitrary: specialStrings },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 2, arbitrary: idLike },
  { weight: 1, arbitrary: phoneLike },
  { weight: 1, arbitrary: fc.uuid() },
  { weight: 3, arbitrary: weirdNumber },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 65, maxLength: 3_000 }) },
);

const deep: fc.Arbitrary<Json> = fc
  .record({ depth: fc.integer({ min: 50, max: 100_000 }), open: fc.constantFrom('[' as const, '{"a":' as const) })
  .map(({ depth, open }) => new Deep(depth, open));

const value: fc.Arbitrary<Json> = fc.oneof(
  { weight: 12, arbitrary: leaf },
  { weight: 1, arbitrary: deep },
  { weight: 1, arbitrary: fc.array(leaf, { maxLength: 5 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 10 }), leaf, { maxKeys: 4 }) },
  { weight: 1, arbitrary: fc.constantFrom<Json>([], {}, [[]], [{}], { value: null }) },
);

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('set' as const), at: fc.nat(), value }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('remove' as const), at: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('add' as const),
      at: fc.nat(),
      key: fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', 'prototype', '', 'x'.repeat(5_000))),
      value,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('root' as const), value }) },
  { weight: 3, arbitrary: fc.constant({ kind: 'freshId' as const }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('same' as const),
      at: fc.nat(),
      text: fc.oneof(idLike, phoneLike, fc.uuid(), fc.string({ maxLength: 20 }), fc.constantFrom('123456', '000000', 'PAN', 'UPI', 'ABCDE1234F', '123412341234')),
      number: fc.oneof(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 0, max: 100_000 }), fc.constantFrom(0, 100, 5_000, 10_000_000)),
      flag: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('huge' as const),
      at: fc.nat(),
      unit: fc.constantFrom('a', 'é', '€', '😀', '\u0000', '"', '9'),
      fraction: fc.double({ min: 0.01, max: 1, noNaN: true }),
    }),
  },
);

const rawMutation: fc.Arbitrary<RawMutation> = fc.oneof(
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('append' as const), text: fc.constantFrom('}', ',', ']', 'x', '\u0000', ' \n', '{}', 'null') }),
  fc.record({
    kind: fc.constant('insertBytes' as const),
    at: fc.nat(),
    bytes: fc.constantFrom<number[]>([0x00], [0xff], [0xc3], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0x22], [0x0a]),
  }),
  fc.constant({ kind: 'bom' as const }),
  fc.constant({ kind: 'empty' as const }),
  fc.record({ kind: fc.constant('pad' as const), size: fc.integer({ min: 1, max: 1_000_000 }) }),
  fc.record({ kind: fc.constant('deep' as const), depth: fc.integer({ min: 10, max: 100_000 }), open: fc.constantFrom('[' as const, '{"a":' as const) }),
  fc.record({
    kind: fc.constant('text' as const),
    text: fc.constantFrom("{'a':1}", '{"a":01}', '{"a":NaN}', '[1,]', '"just a string"', '12', 'null', 'true', '<xml/>', 'a=1&b=2', '{"a":"\u0000"}', '{"a":1}{"b":2}'),
  }),
  fc.constant({ kind: 'bodyOnGet' as const }),
);

const contentType: fc.Arbitrary<string | null> = fc.constantFrom(
  null,
  '',
  'text/plain',
  'application/xml',
  'application/json; charset=latin1',
  'application/json;charset="utf-8"',
  'APPLICATION/JSON',
  'application/json; charset=utf-16',
  'multipart/form-data; boundary=x',
  'application/x-www-form-urlencoded',
  'application/json, text/plain',
  'application/problem+json',
  'application/jsonx',
);

const queryValue = fc.oneof(
  specialStrings,
  idLike,
  phoneLike,
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.constantFrom('2026-11-22', '2026-11-22T10:00:00Z', '0', '101', '-5', '1.5', 'stage', 'STAGE', 'SUCCESS', 'x'.repeat(LONG_HEADER)),
);

const queryMutation: fc.Arbitrary<QueryMutation> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('set' as const), at: fc.nat(), value: queryValue, raw: fc.constant(false) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('set' as const), at: fc.nat(), value: fc.constantFrom('%', '%zz', '%00', '%E0%A4', '+', '%2B91%209000000001', '%FF'), raw: fc.constant(true) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('remove' as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('duplicate' as const), at: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('unknown' as const), name: fc.constantFrom('foo', '__proto__', 'id[]', 'include'), value: queryValue }),
  },
);

const pathMutation: fc.Arbitrary<PathMutation> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), at: fc.nat(), value: fc.oneof(idLike, fc.uuid()), raw: fc.constant(false) }),
  fc.record({
    kind: fc.constant('set' as const),
    at: fc.nat(),
    value: fc.oneof(specialStrings.filter((text) => text !== ''), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }), fc.constant('x'.repeat(1_500))),
    raw: fc.constant(false),
  }),
  fc.record({
    kind: fc.constant('set' as const),
    at: fc.nat(),
    value: fc.constantFrom('%', '%zz', '%00', '%2F', '%2e%2e', '..', '.', 'a;b', '%E0%A4', 'transaction', 'settlement', '%ff'),
    raw: fc.constant(true),
  }),
);

const authMutation: fc.Arbitrary<AuthMutation> = fc.oneof(
  fc.constant({ kind: 'missingSignature' as const }),
  fc.constant({ kind: 'missingPartner' as const }),
  fc.record({ kind: fc.constant('wrongPartner' as const), value: fc.constantFrom('partner_other', 'PARTNER_TEST', 'partner_test ', 'x'.repeat(LONG_HEADER), 'é') }),
  fc.record({
    kind: fc.constant('malformedSignature' as const),
    value: fc.oneof(
      fc.constantFrom(
        '',
        'not-a-signature',
        'a'.repeat(64),
        'qvSZ/F8ixk3Rb7Bq+pEWvRQ2HK0FmL+cMaf0+r8aXOk',
        'qvSZ/F8ixk3Rb7Bq+pEWvRQ2HK0FmL+cMaf0+r8aXOk==',
        'qvSZ_F8ixk3Rb7Bq-pEWvRQ2HK0FmL-cMaf0-r8aXOk=',
        ' qvSZ/F8ixk3Rb7Bq+pEWvRQ2HK0FmL+cMaf0+r8aXOk=',
        'x'.repeat(LONG_HEADER),
      ),
      fc.stringMatching(/^[A-Za-z0-9+/]{43}=$/),
    ),
  }),
  fc.constant({ kind: 'wrongKey' as const }),
  fc.constant({ kind: 'signOriginal' as const }),
  fc.constant({ kind: 'signOtherPath' as const }),
  fc.constant({ kind: 'duplicateSignature' as const }),
  fc.constant({ kind: 'missingBasic' as const }),
  fc.constant({ kind: 'wrongPassword' as const }),
  fc.constant({ kind: 'wrongUser' as const }),
  fc.record({ kind: fc.constant('otherKind' as const), which: fc.nat() }),
  fc.record({
    kind: fc.constant('malformedBasic' as const),
    value: fc.constantFrom(
      '',
      'Basic',
      'Basic ',
      'Basic !!!',
      'Bearer abc',
      `Basic ${Buffer.from('nocolon').toString('base64')}`,
      `Basic ${Buffer.from([0xff, 0x3a, 0xfe]).toString('base64')}`,
      `Basic ${Buffer.from(':').toString('base64')}`,
      `Basic ${'A'.repeat(LONG_HEADER)}`,
      `Digest username="pg_test"`,
      `Basic ${Buffer.from('pg_test:pg_test_secret').toString('base64')}=====`,
    ),
  }),
);

function caseArbitrary(specs: OperationSpec[]): fc.Arbitrary<Case> {
  // Every family gets a quarter of the cases; within a family, each operation its weight's share.
  const families: Family[] = ['sdk', 'web', 'extras', 'gateway'];
  const opIndex = fc.constantFrom(...families).chain((family) =>
    fc.oneof(
      ...specs.flatMap((spec, index) => (spec.family === family ? [{ weight: spec.weight, arbitrary: fc.constant(index) }] : [])),
    ),
  );
  return fc.record({
    op: opIndex,
    example: fc.nat(),
    binding: fc.nat(),
    mutations: fc.oneof({ weight: 1, arbitrary: fc.constant<Mutation[]>([]) }, { weight: 6, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }) }),
    // A raw mutation of the body text in one case of five, a content type in one of seven.
    raw: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: rawMutation }),
    contentType: fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: contentType }),
    query: fc.oneof({ weight: 3, arbitrary: fc.constant<QueryMutation[]>([]) }, { weight: 2, arbitrary: fc.array(queryMutation, { minLength: 1, maxLength: 3 }) }),
    path: fc.oneof({ weight: 2, arbitrary: fc.constant<PathMutation[]>([]) }, { weight: 1, arbitrary: fc.array(pathMutation, { minLength: 1, maxLength: 2 }) }),
    // Half of the cases are signed and authenticated correctly over the final request.
    auth: fc.oneof(fc.constant(undefined), authMutation),
  });
}

/** Every path into a JSON value (objects' keys, arrays' indices), the root first as []. */
function pathsOf(value: Json | undefined): (string | number)[][] {
  const out: (string | number)[][] = [[]];
  const walk = (node: Json | undefined, at: (string | number)[]) => {
    if (Array.isArray(node)) node.forEach((child, index) => (out.push([...at, index]), walk(child, [...at, index])));
    else if (node !== null && typeof node === 'object' && !(node instanceof Huge) && !(node instanceof Deep)) {
      for (const [key, child] of Object.entries(node)) {
        out.push([...at, key]);
        walk(child, [...at, key]);
      }
    }
  };
  walk(value, []);
  return out;
}

function getAt(root: Json | undefined, path: (string | number)[]): Json | undefined {
  let node: any = root;
  for (const key of path) node = node?.[key];
  return node;
}

function escapedBytes(unit: string): number {
  return Buffer.byteLength(JSON.stringify(unit)) - 2;
}

function applyMutation(root: Json | undefined, m: Mutation, spec: OperationSpec, index: number, seed: number): Json | undefined {
  const paths = pathsOf(root);
  switch (m.kind) {
    case 'root':
      return m.value;
    case 'freshId': {
      if (spec.idPath === undefined || getAt(root, spec.idPath.slice(0, -1)) === undefined) return root;
      const fresh = spec.idPath.at(-1) === 'email' ? `fuzz${index}@example.in` : `fz${seed.toString(36)}_${index}`;
      return setAt(root, spec.idPath, fresh);
    }
    case 'same': {
      const leaves = paths.filter((path) => {
        const node = getAt(root, path);
        return path.length > 0 && (typeof node === 'string' || typeof node === 'number' || typeof node === 'boolean');
      });
      if (leaves.length === 0) return root;
      const path = leaves[m.at % leaves.length]!;
      const old = getAt(root, path);
      return setAt(root, path, typeof old === 'string' ? m.text : typeof old === 'number' ? m.number : m.flag);
    }
    case 'set':
    case 'huge': {
      const path = paths[m.at % paths.length]!;
      const replacement: Json =
        m.kind === 'set' ? m.value : new Huge(m.unit, Math.max(1, Math.floor((HUGE_BYTES * m.fraction) / escapedBytes(m.unit))));
      return path.length === 0 ? replacement : setAt(root, path, replacement);
    }
    case 'remove': {
      const candidates = paths.filter((path) => path.length > 0);
      if (candidates.length === 0) return undefined;
      const path = candidates[m.at % candidates.length]!;
      const parent = getAt(root, path.slice(0, -1)) as any;
      const key = path.at(-1)!;
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete parent[key];
      return root;
    }
    case 'add': {
      const objects = paths.filter((path) => {
        const node = getAt(root, path);
        return node !== null && typeof node === 'object' && !Array.isArray(node) && !(node instanceof Huge) && !(node instanceof Deep);
      });
      if (objects.length === 0) return root;
      const target = getAt(root, objects[m.at % objects.length]!) as Record<string, Json>;
      Object.defineProperty(target, m.key, { value: m.value, enumerable: true, writable: true, configurable: true });
      return root;
    }
  }
}

function setAt(root: Json | undefined, path: (string | number)[], replacement: Json): Json | undefined {
  if (path.length === 0) return replacement;
  const parent = getAt(root, path.slice(0, -1)) as any;
  if (parent === null || typeof parent !== 'object') return root;
  Object.defineProperty(parent, path.at(-1)!, { value: replacement, enumerable: true, writable: true, configurable: true });
  return root;
}

/** Every body stays under the 1 MiB limit (D24): huge and deep values shrink to fit this budget. */
const BODY_BUDGET = 1_040_000;

function serialize(value: Json | undefined): Buffer {
  if (value === undefined) return Buffer.alloc(0);
  const markers: (Huge | Deep)[] = [];
  const text =
    JSON.stringify(value, (_key, node: unknown) =>
      node instanceof Huge || node instanceof Deep ? `\u0001marker${markers.push(node) - 1}\u0001` : node,
    ) ?? 'null';
  const pattern = /"\\u0001marker(\d+)\\u0001"/g;
  // The huge strings and deep values are spliced into the text: JSON.stringify of a value 100,000
  // levels deep would overflow the stack.
  let budget = BODY_BUDGET - Buffer.byteLength(text.replace(pattern, ''));
  const spliced = text.replace(pattern, (_match, index: string) => {
    const marker = markers[Number(index)]!;
    if (marker instanceof Huge) {
      const unitBytes = escapedBytes(marker.unit);
      const count = Math.max(0, Math.min(marker.count, Math.floor((budget - 2) / unitBytes)));
      budget -= count * unitBytes + 2;
      return JSON.stringify(marker.unit.repeat(count));
    }
    const perLevel = marker.open.length + 1;
    const depth = Math.max(0, Math.min(marker.depth, Math.floor((budget - 1) / perLevel)));
    budget -= depth * perLevel + 1;
    return new Deep(depth, marker.open).toString();
  });
  return Buffer.from(spliced, 'utf8');
}

function applyRaw(bytes: Buffer, raw: RawMutation): Buffer {
  switch (raw.kind) {
    case 'truncate':
      return bytes.subarray(0, bytes.length === 0 ? 0 : raw.at % bytes.length);
    case 'append':
      return Buffer.concat([bytes, Buffer.from(raw.text)]);
    case 'insertBytes': {
      const at = bytes.length === 0 ? 0 : raw.at % bytes.length;
      return Buffer.concat([bytes.subarray(0, at), Buffer.from(raw.bytes), bytes.subarray(at)]);
    }
    case 'bom':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]);
    case 'empty':
      return Buffer.alloc(0);
    case 'pad': {
      const room = BODY_BUDGET - bytes.length;
      return room <= 0 ? bytes : Buffer.concat([bytes, Buffer.alloc(Math.min(raw.size, room), 0x20)]);
    }
    case 'deep': {
      const close = raw.open === '[' ? ']' : '}';
      const depth = Math.min(raw.depth, Math.floor(BODY_BUDGET / (raw.open.length + 1)));
      return Buffer.from(`${raw.open.repeat(depth)}1${close.repeat(depth)}`);
    }
    case 'text':
      return Buffer.from(raw.text);
    case 'bodyOnGet':
      return bytes.length > 0 ? bytes : Buffer.from('{"unexpected":"body"}');
  }
}

// ---------------------------------------------------------------------------------------------
// Building and sending one request

interface Built {
  method: string;
  pathAndQuery: string;
  headers: [string, string][];
  body: Buffer | undefined;
  describe: string;
}

/** Percent-encodes the UTF-8 bytes of a text (a lone surrogate becomes U+FFFD, as a client would send it). */
function pct(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function encodeQuery(pairs: [string, string, boolean?][]): string {
  if (pairs.length === 0) return '';
  return `?${pairs.map(([name, text, raw]) => `${pct(name)}=${raw ? text : pct(text)}`).join('&')}`;
}

function build(spec: OperationSpec, c: Case, state: State, index: number, seed: number): Built {
  const example = spec.examples.length === 0 ? undefined : spec.examples[c.example % spec.examples.length];
  const base = spec.bindings[c.binding % spec.bindings.length]!(example, state);

  // Body
  const hasBody = spec.method === 'POST' && spec.examples.length > 0;
  let json: Json | undefined = clone(base.body);
  if (hasBody) for (const m of c.mutations) json = applyMutation(json, m, spec, index, seed);
  let bytes: Buffer | undefined = hasBody ? serialize(json) : undefined;
  const originalBytes = hasBody ? serialize(base.body) : Buffer.alloc(0);
  if (c.raw !== undefined && (hasBody || c.raw.kind === 'bodyOnGet' || c.raw.kind === 'text')) bytes = applyRaw(bytes ?? Buffer.alloc(0), c.raw);

  // Path
  const pathValues = Object.entries(base.path).map(([name, text]) => [name, pct(text)] as [string, string]);
  for (const m of c.path) {
    if (pathValues.length === 0) break;
    const target = pathValues[m.at % pathValues.length]!;
    target[1] = m.raw ? m.value : pct(m.value);
  }
  let path = spec.template;
  for (const [name, text] of pathValues) path = path.replace(`{${name}}`, text);

  // Query
  const query: [string, string, boolean?][] = base.query.map(([name, text]) => [name, text]);
  for (const m of c.query) {
    switch (m.kind) {
      case 'set': {
        const names = spec.queryNames.length > 0 ? spec.queryNames : ['id'];
        const name = names[m.at % names.length]!;
        const existing = query.find(([candidate]) => candidate === name);
        if (existing) {
          existing[1] = m.value;
          existing[2] = m.raw;
        } else query.push([name, m.value, m.raw]);
        break;
      }
      case 'remove':
        if (query.length > 0) query.splice(m.at % query.length, 1);
        break;
      case 'duplicate':
        if (query.length > 0) query.push([...query[m.at % query.length]!]);
        break;
      case 'unknown':
        query.push([m.name, m.value]);
        break;
    }
  }
  const pathAndQuery = `${path}${encodeQuery(query)}`;

  // Headers and credentials, last: the signature covers the final body and path.
  const headers: [string, string][] = [];
  const sent = bytes ?? Buffer.alloc(0);
  if (bytes !== undefined && bytes.length > 0 && c.contentType !== null) {
    headers.push(['Content-Type', c.contentType ?? 'application/json']);
  } else if (bytes !== undefined && c.contentType !== undefined && c.contentType !== null) {
    headers.push(['Content-Type', c.contentType]);
  }
  const a = c.auth;
  switch (spec.auth) {
    case 'sdk':
    case 'web': {
      const partnerHeader = spec.auth === 'sdk' ? 'X-Partnerid' : 'X-Partner-Id';
      const sign = (data: Buffer, target: string, key = PRIVATE_KEY) =>
        spec.auth === 'sdk' ? sdkSignature(data, key) : webSignature(data, target, key);
      let signature: string | undefined = sign(sent, pathAndQuery);
      let partner: string | undefined = PARTNER_ID;
      if (a?.kind === 'missingSignature' || a?.kind === 'missingBasic') signature = undefined;
      if (a?.kind === 'missingPartner') partner = undefined;
      if (a?.kind === 'wrongPartner') partner = a.value;
      if (a?.kind === 'wrongUser') partner = 'partner_other';
      if (a?.kind === 'malformedSignature') signature = a.value;
      if (a?.kind === 'wrongKey' || a?.kind === 'wrongPassword') signature = sign(sent, pathAndQuery, 'another_private_key');
      // The other family's recipe: SDK (body + key) for the web flow, web (body + path + key) for the SDK.
      if (a?.kind === 'otherKind') signature = spec.auth === 'sdk' ? webSignature(sent, pathAndQuery, PRIVATE_KEY) : sdkSignature(sent, PRIVATE_KEY);
      if (a?.kind === 'malformedBasic') {
        signature = undefined;
        headers.push(['Authorization', a.value || 'Basic']);
      }
      if (a?.kind === 'signOriginal') signature = sign(originalBytes, spec.template);
      if (a?.kind === 'signOtherPath') signature = sign(sent, `${pathAndQuery}x`);
      if (partner !== undefined) headers.push([partnerHeader, partner]);
      if (signature !== undefined) headers.push(['X-Signature', signature]);
      if (a?.kind === 'duplicateSignature') headers.push(['X-Signature', sign(sent, pathAndQuery, 'another_private_key')]);
      break;
    }
    case 'extras':
    case 'merchantApi':
    case 'transactional': {
      const right = spec.auth === 'extras' ? EXTRAS_AUTH : spec.auth === 'merchantApi' ? MERCHANT_AUTH : state.transactional;
      const others = [EXTRAS_AUTH, MERCHANT_AUTH, state.transactional, state.otherTransactional].filter((auth) => auth !== right);
      let authorization: string | undefined = right;
      const [user = '', password = ''] = Buffer.from(right.slice(6), 'base64').toString('utf8').split(':');
      if (a?.kind === 'missingBasic' || a?.kind === 'missingSignature') authorization = undefined;
      if (a?.kind === 'wrongPassword' || a?.kind === 'wrongKey') authorization = basic(user, `${password}x`);
      if (a?.kind === 'wrongUser' || a?.kind === 'wrongPartner') authorization = basic(`${user}x`, password);
      if (a?.kind === 'otherKind') authorization = others[a.which % others.length];
      if (a?.kind === 'malformedBasic' || a?.kind === 'malformedSignature') authorization = a.value;
      if (authorization !== undefined) headers.push(['Authorization', authorization]);
      break;
    }
    case 'none':
      break;
  }
  const describe = [
    `#${index} ${spec.method} ${pathAndQuery.length > 300 ? `${pathAndQuery.slice(0, 300)}...` : pathAndQuery}`,
    `mutations=${JSON.stringify({ ...c, op: spec.operationId }, (_key, node: unknown) => (node instanceof Huge ? `<${node.count} x ${JSON.stringify(node.unit)}>` : typeof node === 'string' && node.length > 100 ? `${node.slice(0, 100)}...(${node.length})` : node))}`,
    `body(${sent.length} bytes)=${JSON.stringify(sent.subarray(0, 300).toString('utf8'))}`,
  ].join('\n  ');
  return { method: spec.method, pathAndQuery, headers, body: bytes, describe };
}

interface Received {
  status: number;
  headers: Headers;
  text: string;
}

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });

function send(base: URL, built: Built): Promise<Received> {
  return new Promise((resolve, reject) => {
    // A repeated name is sent as several header lines.
    const headers: Record<string, string | string[]> = {};
    for (const [name, headerValue] of built.headers) {
      const existing = headers[name];
      headers[name] = existing === undefined ? headerValue : [...(Array.isArray(existing) ? existing : [existing]), headerValue];
    }
    if (built.body !== undefined) headers['Content-Length'] = String(built.body.length);
    const request = httpRequest(
      {
        host: base.hostname,
        port: base.port,
        method: built.method,
        path: built.pathAndQuery,
        headers,
        agent,
        timeout: REQUEST_TIMEOUT_MS,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const responseHeaders = new Headers();
          for (const [name, headerValue] of Object.entries(response.headers)) {
            if (headerValue !== undefined) responseHeaders.set(name, Array.isArray(headerValue) ? headerValue.join(', ') : headerValue);
          }
          resolve({ status: response.statusCode ?? 0, headers: responseHeaders, text: Buffer.concat(chunks).toString('utf8') });
        });
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    request.on('error', reject);
    request.end(built.body);
  });
}


// ---------------------------------------------------------------------------------------------

/** The state the cases run against, made on a fresh sandbox, and the spec of every operation. */
async function prepareFuzz(t: GatewayTest): Promise<{ state: State; specs: OperationSpec[] }> {
  const contracts = {
    sdk: contractOf('sdk'),
    web: contractOf('web'),
    extras: contractOf('extras'),
    gateway: contractOf('gateway'),
  } satisfies Record<Family, Contract>;
  const specs = operationSpecs(contracts);

  const merchant = await t.onboard();
  const other = await t.onboard();
  const auth = merchant.credentials.auth;
  const pendingMerchants = [];
  for (let index = 0; index < 3; index++) {
    const { id, answer } = await t.createMerchant();
    expect(answer.status).toBe(201);
    pendingMerchants.push(id);
  }
  const disableTargets = [];
  for (let index = 0; index < 4; index++) {
    const { id } = await t.createMerchant();
    disableTargets.push(id);
  }
  const check = await t.check(auth, ELIGIBLE, 150_000);
  const authTransactions = [];
  for (let index = 0; index < 3; index++) {
    const id = t.id('fz_auth');
    expect((await t.createTransaction(auth, { id, amount: 20_000, phoneNumber: '+919812345678' })).status).toBe(200);
    const stage = await t.stage(auth, id);
    authTransactions.push({ id, referenceId: stage.transactionStage.nextStep.options.userInputOptions[0].referenceId as string });
  }
  const paymentId = t.id('fz_pay');
  await t.createTransaction(auth, { id: paymentId, amount: 20_000, phoneNumber: '+919812345678' });
  const otp = await t.call(
    'POST',
    `/api/merchant/transaction/${paymentId}/user-inputs/${(await t.stage(auth, paymentId)).transactionStage.nextStep.options.userInputOptions[0].referenceId}`,
    auth,
    { value: TEST_OTP.correct },
  );
  expect(otp.status).toBe(200);
  const successTransactions = [];
  for (let index = 0; index < 3; index++) successTransactions.push(await t.successful(auth, 1_000_000, '+919812345679'));
  const failedTransaction = t.id('fz_failed');
  await t.createTransaction(auth, { id: failedTransaction, amount: 20_000, phoneNumber: '+919000000002' });

  const sdkPending = `fz_sdk_pending_${Date.now()}`;
  await initiateSdk(t, sdkPending);
  const sdkSuccess = [];
  for (let index = 0; index < 3; index++) {
    const id = `fz_sdk_ok_${index}_${Date.now()}`;
    await initiateSdk(t, id, 5_000_000);
    expect((await t.request('POST', `/sandbox/sdk/transactions/${id}/confirm`)).status).toBe(200);
    sdkSuccess.push(id);
  }
  const webPending = `fz_web_pending_${Date.now()}`;
  const webSuccess = `fz_web_ok_${Date.now()}`;
  for (const id of [webPending, webSuccess]) {
    const answer = await t.web('POST', '/api/transaction', { id, amount: 150_000, user: { name: APPROVED_TEST_USER.name, phoneNumber: ELIGIBLE } });
    expect(answer.status).toBe(200);
  }
  expect((await t.request('POST', `/sandbox/web/transactions/${webSuccess}/confirm`)).status).toBe(200);

  const state: State = {
    merchantId: merchant.id,
    pendingMerchants,
    disableTargets,
    transactional: auth,
    otherTransactional: other.credentials.auth,
    checkId: check.id as string,
    authTransactions,
    paymentTransaction: { id: paymentId, amount: otp.body.transactionStage.nextStep.options.paymentOptions.amount as number },
    successTransactions,
    failedTransaction,
    sdkPending,
    sdkSuccess,
    webPending,
    webSuccess,
  };
  return { state, specs };
}

/** What one run sent and what came back. */
interface FuzzReport {
  sent: number;
  /** The largest body sent, in bytes. */
  largest: number;
  /** Every problem found: an answer of 5xx, undocumented or invalid for its status, or none. */
  problems: string[];
  /** The figures, one paragraph for the log. */
  summary: string;
}

/** Sends every case of the run's seed (or only FUZZ_ONLY's), CONCURRENCY at a time, and checks each answer. */
async function runFuzz(t: GatewayTest, state: State, specs: OperationSpec[], run: FuzzRun): Promise<FuzzReport> {
  const { seed, count } = run;
  const cases = fc.sample(caseArbitrary(specs), { seed, numRuns: count });
  const indices = ONLY === undefined ? cases.map((_c, index) => index) : [ONLY];
  const base = new URL(t.url);
  const histogram = new Map<number, number>();
  const perFamily = new Map<string, Map<number, number>>();
  const perOperation = new Map<string, number>();
  /** The error codes answered (`errorCode`, or `message` of the web and SDK error format). */
  const codes = new Map<string, number>();
  const problems: string[] = [];
  let sent = 0;
  let bytesSent = 0;
  let largest = 0;
  const started = Date.now();

  let next = 0;
  const worker = async () => {
    while (next < indices.length) {
      const index = indices[next++]!;
      const c = cases[index]!;
      const spec = specs[c.op]!;
      const built = build(spec, c, state, index, seed);
      bytesSent += built.body?.length ?? 0;
      largest = Math.max(largest, built.body?.length ?? 0);
      let answer: Received;
      try {
        answer = await send(base, built);
      } catch (error) {
        problems.push(`no answer (${error instanceof Error ? error.message : String(error)})\n  ${built.describe}`);
        continue;
      }
      sent++;
      histogram.set(answer.status, (histogram.get(answer.status) ?? 0) + 1);
      const family = perFamily.get(spec.family) ?? new Map<number, number>();
      family.set(answer.status, (family.get(answer.status) ?? 0) + 1);
      perFamily.set(spec.family, family);
      perOperation.set(spec.operationId, (perOperation.get(spec.operationId) ?? 0) + 1);
      let parsed: unknown;
      try {
        parsed = answer.text === '' ? undefined : JSON.parse(answer.text);
      } catch {
        parsed = undefined;
      }
      if (answer.status >= 400 && parsed !== null && typeof parsed === 'object') {
        const code = String((parsed as { errorCode?: unknown; message?: unknown }).errorCode ?? (parsed as { message?: unknown }).message);
        codes.set(code, (codes.get(code) ?? 0) + 1);
      }
      const where = `${answer.status} ${answer.text.slice(0, 300)}\n  ${built.describe}`;
      if (answer.status >= 500) problems.push(`status ${where}`);
      try {
        const matched = await checkAgainstContract(built.method, built.pathAndQuery, { ...answer, body: parsed });
        if (matched === undefined) problems.push(`the path matched no operation of the documents: ${where}`);
      } catch (error) {
        problems.push(`${error instanceof Error ? error.message.split('\n')[0] : String(error)}: ${where}`);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (Date.now() - started) / 1000;

  const sorted = (map: Map<number, number>) => Object.fromEntries([...map.entries()].sort(([a], [b]) => a - b));
  const summary = (
    `fuzz: seed ${seed}, ${sent} requests (${(bytesSent / 1_048_576).toFixed(1)} MiB of bodies, the largest ${largest} bytes) ` +
      `in ${seconds.toFixed(1)} s, ` +
      `${CONCURRENCY} in flight\n  status histogram: ${JSON.stringify(sorted(histogram))}\n` +
      [...perFamily.entries()].map(([family, map]) => `  ${family}: ${JSON.stringify(sorted(map))}`).join('\n') +
      `\n  error codes: ${JSON.stringify(Object.fromEntries([...codes.entries()].sort(([, a], [, b]) => b - a)))}` +
      `\n  per operation: ${JSON.stringify(Object.fromEntries(perOperation))}`
  );
  return { sent, largest, problems, summary };
}

/** Closes the keep-alive connections of the cases. */
function closeFuzzAgent(): void {
  agent.destroy();
}

/**
 * The run's assertions: every operation the fuzzer knows is served, no answer is a problem (5xx,
 * undocumented, invalid against the contract), the sandbox logged no unexpected error, every case
 * was sent, and every body stayed under the 1 MiB limit.
 */
export async function expectFuzzClean(t: GatewayTest, state: State, specs: OperationSpec[], run: FuzzRun): Promise<void> {
  const served = new Set(t.sandbox.routes.map((route) => route.operationId).filter((id) => id !== undefined));
  const missing = specs.filter((spec) => !served.has(spec.operationId)).map((spec) => spec.operationId);
  expect(missing, 'operations the fuzzer knows but the sandbox does not serve').toEqual([]);

  const { sent, largest, problems, summary } = await runFuzz(t, state, specs, run);
  console.log(summary);
  const unique = [...new Set(problems)];
  expect(
    unique.slice(0, 15),
    `${unique.length} problems with seed ${run.seed} (FUZZ_SEED=${run.seed} to reproduce, FUZZ_ONLY=<#index> to replay one case)`,
  ).toEqual([]);
  expect(t.loggedErrors, `the sandbox logged unexpected errors (seed ${run.seed})`).toEqual([]);
  if (ONLY === undefined) expect(sent).toBe(run.count);
  expect(largest, 'every body stays under the 1 MiB limit').toBeLessThan(1_048_576);
}

/** What a fuzz test file runs against, filled in by {@link fuzzSandbox}'s set-up. */
export interface FuzzSandbox {
  t: GatewayTest;
  state: State;
  specs: OperationSpec[];
}

/**
 * Registers, in the calling test file, a sandbox of every family for the fuzzer (webhooks go
 * nowhere: a fake fetch answers every delivery at once) with the state the cases run against, and
 * its tear-down. The object returned is filled before the file's tests run.
 */
export function fuzzSandbox(): FuzzSandbox {
  const sandbox = {} as FuzzSandbox;
  beforeAll(async () => {
    sandbox.t = await startGateway({ fetch: (async () => new Response('ok', { status: 200 })) as typeof fetch });
    Object.assign(sandbox, await prepareFuzz(sandbox.t));
  }, 120_000);
  afterAll(async () => {
    closeFuzzAgent();
    await sandbox.t?.close();
  });
  return sandbox;
}
