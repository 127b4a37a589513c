/**
 * Typed client of the SDK flow (initiate, status, refund). Every request is signed as it is sent
 * over the exact body bytes sent: `X-Signature` = base64(SHA-256(body + privateKey)), with
 * `X-Partnerid`. Callers never pass `X-Signature` themselves.
 *
 * The SDK signature covers only the body and the key, so two requests with the same body carry the
 * same signature whatever their path. A status check `{"merchantTransactionId":"X"}` is byte for
 * byte a refund of everything that remains, so a captured status check could be replayed as a
 * refund. This client therefore always sends `amount` in a refund (0, "the whole order", when the
 * caller gives none): its refund and status bodies never coincide. See docs/authentication.md.
 */
import type { Client } from 'openapi-fetch';
import type { components, operations, paths } from '../../generated/types/sdk.js';
import { sdkSignature } from '../signature.js';
import { checkPartnerCredentials, type PartnerCredentials } from './signed.js';
import { operations as OPERATIONS } from '../../generated/operations/sdk.js';
import { retrySafety } from './retry-safety.js';
import { buildClient, type ClientOptions, type SignedPaths } from './transport.js';

export type { components as SdkComponents, operations as SdkOperations, paths as SdkPaths };
export type SdkSchemas = components['schemas'];
/** What a status means: `FAILED` and its alias `FAILURE` are one failure. */
export { isFailedStatus, isFinalStatus, statusOutcome, type AnyTransactionStatus, type StatusOutcome } from './statuses.js';
export type SdkClientPaths = SignedPaths<paths>;

export interface SdkClientOptions extends ClientOptions, PartnerCredentials {}

/** The refund operation, whose body always gets an explicit `amount`. */
export const SDK_REFUND_PATH = '/merchant/credit/refundTransaction';

/** A refund body with `amount` set: the caller's, or 0 (the whole order, as described). */
export function explicitRefundAmount<B>(body: B): B {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const amount = (body as { amount?: unknown }).amount;
  return amount === undefined ? ({ ...body, amount: 0 } as B) : body;
}

export function createSdkClient(options: SdkClientOptions): Client<SdkClientPaths> {
  checkPartnerCredentials(options, 'createSdkClient');
  const { partnerId, privateKey } = options;
  const client = buildClient<SdkClientPaths>(
    options,
    // The status check only reads; initiate and refund are never sent twice (their `x-retry-safe`).
    retrySafety(OPERATIONS, options.baseUrl),
    {
      sign: (body) => ({
        'X-Partnerid': partnerId,
        'X-Signature': sdkSignature(body, privateKey),
      }),
    },
  );
  const post = client.POST.bind(client);
  const withAmount = (path: unknown, init: unknown) =>
    path === SDK_REFUND_PATH && typeof init === 'object' && init !== null && 'body' in init
      ? { ...init, body: explicitRefundAmount((init as { body: unknown }).body) }
      : init;
  client.POST = ((path: unknown, init: unknown) => (post as (p: unknown, i: unknown) => unknown)(path, withAmount(path, init))) as typeof client.POST;
  const request = client.request.bind(client);
  client.request = ((method: unknown, path: unknown, init: unknown) =>
    (request as (m: unknown, p: unknown, i: unknown) => unknown)(
      method,
      path,
      typeof method === 'string' && method.toUpperCase() === 'POST' ? withAmount(path, init) : init,
    )) as typeof client.request;
  return client;
}
