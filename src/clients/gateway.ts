/**
 * Typed clients of the gateway family (`/api/merchant`), one per credential kind:
 *
 * - {@link createMerchantApiClient}: the payment gateway's constant **Merchant API** credentials;
 *   only the merchant operations (create, get, documents, disable, dashboard access).
 * - {@link createTransactionalApiClient}: one merchant's **Transactional API** credentials, read
 *   from `merchant.basicAuthDetails` once the merchant is enabled; only the transactional
 *   operations (the merchant's configuration, pre-eligibility, transactions, user inputs, down
 *   payment, cancel, refunds, settlement).
 *
 * Each client only offers the operations its credentials can call, so a mix-up is a type error.
 * With `retry`, a request is repeated only when its operation's `x-retry-safe` allows it:
 * reads, disabling a merchant, and a refund that names its own `refund.id`.
 */
import type { Client } from 'openapi-fetch';
import type { components, operations, paths } from '../../generated/types/gateway.js';
import { operations as OPERATIONS } from '../../generated/operations/gateway.js';
import { retrySafety } from './retry-safety.js';
import { basicAuth, buildClient, type BasicCredentials, type ClientOptions } from './transport.js';

export type { components as GatewayComponents, operations as GatewayOperations, paths as GatewayPaths };
export type GatewaySchemas = components['schemas'];
/** What a status means: `FAILED` and its alias `FAILURE` are one failure. */
export { isFailedStatus, isFinalStatus, statusOutcome, type AnyTransactionStatus, type StatusOutcome } from './statuses.js';

type TransactionalPath = Extract<
  keyof paths,
  `/api/merchant/transaction${string}` | '/api/merchant/settlement' | '/api/merchant/configuration'
>;
/** The operations that take the Merchant API credentials. */
export type MerchantApiPaths = Omit<paths, TransactionalPath>;
/** The operations that take a merchant's Transactional API credentials. */
export type TransactionalApiPaths = Pick<paths, TransactionalPath>;

export interface GatewayClientOptions extends ClientOptions {
  credentials: BasicCredentials;
}

/** A client of the merchant operations, with the payment gateway's Merchant API credentials. */
export function createMerchantApiClient(options: GatewayClientOptions): Client<MerchantApiPaths> {
  return buildClient(options, retrySafety(OPERATIONS, options.baseUrl), basicAuth(options.credentials, 'createMerchantApiClient'));
}

/** A client of one merchant's transactional operations, with its Transactional API credentials. */
export function createTransactionalApiClient(options: GatewayClientOptions): Client<TransactionalApiPaths> {
  return buildClient(options, retrySafety(OPERATIONS, options.baseUrl), basicAuth(options.credentials, 'createTransactionalApiClient'));
}

type Merchant = components['schemas']['GatewayMerchant'];

/**
 * The Transactional API credentials of a merchant record, or `undefined` while the merchant is not
 * `enabled` (they are issued on enable and revoked on disable).
 */
export function transactionalCredentials(merchant: Merchant): BasicCredentials | undefined {
  const details = merchant.stage === 'enabled' ? merchant.basicAuthDetails : undefined;
  return details === undefined ? undefined : { username: details.username, password: details.password };
}

type TransactionRead = operations['getTransaction']['responses'][200]['content']['application/json'];
/** The stage response of `GET /api/merchant/transaction/{id}?include=stage`. */
export type TransactionStageResponse = Extract<TransactionRead, { transactionStage: unknown }>;

/** Tells the stage response from the plain record (both come from the same operation). */
export function isStageResponse(value: TransactionRead): value is TransactionStageResponse {
  return typeof value === 'object' && value !== null && 'transactionStage' in value;
}
