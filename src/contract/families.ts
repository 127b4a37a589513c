/**
 * The API families of the contract, one row each: the one list every other part derives from (the
 * model, the sandbox, the mock, the docs site, the samples, the CLI). A family is one bundled
 * document, `generated/openapi/<family>.json`; its webhooks come from that document
 * (./webhooks.ts). Adding a family is a row here, its document under openapi/ and its handlers;
 * the maps keyed by {@link Family} elsewhere then fail `tsc` until they have it.
 */

/** How a family answers an error: `{ errorCode, message, ... }` (gateway, extras) or `{ message, detail }` (web, SDK). */
export type FamilyErrorFormat = 'apiError' | 'messageError';

export interface FamilyInfo {
  /** Its name for people: the docs site's card, the sandbox's page. */
  readonly label: string;
  /** Whom it serves and what it does, in one sentence (the docs site). */
  readonly audience: string;
  /** Its paths in short (the sandbox's page). */
  readonly paths: string;
  /** The APIs it holds, as the mock's start-up lines name them. */
  readonly apis: string;
  /** Its error body (the sandbox and the mock answer in it). */
  readonly errorFormat: FamilyErrorFormat;
  /** Requests are signed with the partner's private key (`X-Signature`, `X-Partner-Id`/`X-Partnerid`). */
  readonly signed: boolean;
  /** The local port of its mock (`npm run mock`). */
  readonly mockPort: number;
  /** Its bundled document: one literal URL per family, so that bundlers see the files the model reads. */
  readonly document: () => URL;
}

const TABLE = {
  gateway: {
    label: 'Gateway integration',
    audience: 'Payment gateways: merchant onboarding (Merchant API) and transactions, OTPs, down payments, refunds, settlement (Transactional API).',
    paths: '/api/merchant/...',
    apis: 'Merchant and Transactional API',
    errorFormat: 'apiError',
    signed: false,
    mockPort: 4010,
    document: () => new URL('../../generated/openapi/gateway.json', import.meta.url),
  },
  extras: {
    label: 'Extras',
    audience: "Merchants of the direct integration: a user's credit info, identification and data pushes.",
    paths: '/service/...',
    apis: 'Extras API: credit information',
    errorFormat: 'apiError',
    signed: false,
    mockPort: 4011,
    document: () => new URL('../../generated/openapi/extras.json', import.meta.url),
  },
  web: {
    label: 'Web flow',
    audience: "Merchants' websites: a signed initiate, the browser script sdk.js, status checks and webhooks.",
    paths: '/api/transaction, /sdk.js, hosted page /checkout/{id}',
    apis: 'Web-initiated flow API',
    errorFormat: 'messageError',
    signed: true,
    mockPort: 4012,
    document: () => new URL('../../generated/openapi/web.json', import.meta.url),
  },
  sdk: {
    label: 'SDK flow',
    audience: "Merchants' mobile apps: a signed initiate, confirmation in the mobile SDK, status checks, refunds and webhooks.",
    paths: '/merchant/credit/...',
    apis: 'SDK flow API',
    errorFormat: 'messageError',
    signed: true,
    mockPort: 4013,
    document: () => new URL('../../generated/openapi/sdk.json', import.meta.url),
  },
} as const satisfies Record<string, FamilyInfo>;

export type Family = keyof typeof TABLE;

/** Every family, in the table's order. */
export const FAMILIES = Object.freeze(Object.keys(TABLE)) as readonly Family[];

export function isFamily(value: unknown): value is Family {
  return typeof value === 'string' && Object.hasOwn(TABLE, value);
}

/** The row of a family. */
export function familyInfo(family: Family): FamilyInfo {
  return TABLE[family];
}
