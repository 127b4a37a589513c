/**
 * Typed client of the web-initiated flow: initiate, status check and refund (`POST /api/refund`).
 * Every request is signed as the last step before it is sent, over the exact body bytes and the
 * exact path and query sent (a path prefix of `baseUrl` included): `X-Signature` =
 * base64(SHA-256(body + pathAndQuery + privateKey)), with `X-Partner-Id`. Callers never pass
 * `X-Signature` themselves.
 *
 * The service answers a status check on `X-Partner-Id` alone (W3); the client still signs it by
 * default, because a signed check costs nothing and passes a service that requires the signature
 * (the sandbox's `--require-status-signature`). `signStatusCheck: false` leaves it unsigned.
 */
import type { Client } from 'openapi-fetch';
import type { components, operations, paths } from '../../generated/types/web.js';
import { webSignature } from '../signature.js';
import { checkPartnerCredentials, type PartnerCredentials } from './signed.js';
import { operations as OPERATIONS } from '../../generated/operations/web.js';
import { retrySafety } from './retry-safety.js';
import { buildClient, type ClientOptions, type SignedPaths } from './transport.js';

export type { components as WebComponents, operations as WebOperations, paths as WebPaths };
export type WebSchemas = components['schemas'];
/** What a status means: `FAILED` and its alias `FAILURE` are one failure. */
export { isFailedStatus, isFinalStatus, statusOutcome, type AnyTransactionStatus, type StatusOutcome } from './statuses.js';
export type WebClientPaths = SignedPaths<paths>;

export interface WebClientOptions extends ClientOptions, PartnerCredentials {
  /** Sign the status check too (default true); false sends it with `X-Partner-Id` only. */
  signStatusCheck?: boolean;
}

const STATUS_CHECK_PATH = '/api/transaction/status';

/**
 * Only the status read is retried (when `retry` is set); an initiate or a refund is never sent
 * twice (a refund names no id of its own, so a repeat could refund twice).
 */
export function createWebClient(options: WebClientOptions): Client<WebClientPaths> {
  checkPartnerCredentials(options, 'createWebClient');
  const { partnerId, privateKey } = options;
  if (options.signStatusCheck !== undefined && typeof options.signStatusCheck !== 'boolean') {
    throw new TypeError('createWebClient: signStatusCheck must be a boolean');
  }
  const signStatusCheck = options.signStatusCheck ?? true;
  return buildClient(
    options,
    // The reads only (the operation's `x-retry-safe`): a refund repeated refunds again.
    retrySafety(OPERATIONS, options.baseUrl),
    {
      sign: (body, pathAndQuery): Record<string, string> => {
        const path = pathAndQuery.split('?', 1)[0] ?? '';
        if (!signStatusCheck && path.endsWith(STATUS_CHECK_PATH)) return { 'X-Partner-Id': partnerId };
        return {
          'X-Partner-Id': partnerId,
          'X-Signature': webSignature(body, pathAndQuery, privateKey),
        };
      },
    },
  );
}
