/**
 * paylater-api: typed clients, request signing and webhook verification for the pay-later service.
 *
 * The package root re-exports everything; the subpath exports (`paylater-api/signature`,
 * `paylater-api/webhooks`, `paylater-api/clients/<family>`) load only what they name.
 */
export * from './signature.js';
export * from './webhooks/index.js';
export * from './clients/gateway.js';
export * from './clients/extras.js';
export * from './clients/web.js';
export * from './clients/sdk.js';
export {
  RequestTimeoutError,
  type BasicCredentials,
  type ClientOptions,
  type RetryOptions,
  type SignedPaths,
} from './clients/transport.js';
export type { PartnerCredentials } from './clients/signed.js';
