/**
 * Typed client of the SDK flow (initiate, status, refund). Every request is signed as it is sent
 * over the exact body bytes sent: `X-Signature` = base64(SHA-256(body + privateKey)), with
 * `X-Partnerid`. Callers never pass `X-Signature` themselves.
 */
import type { Client } from 'openapi-fetch';
import type { components, operations, paths } from '../../generated/types/sdk.js';
import { sdkSignature } from '../signature.js';
import { checkPartnerCredentials, type PartnerCredentials } from './signed.js';
import { buildClient, type ClientOptions, type SafeToRepeat, type SignedPaths } from './transport.js';

export type { components as SdkComponents, operations as SdkOperations, paths as SdkPaths };
export type SdkSchemas = components['schemas'];
export type SdkClientPaths = SignedPaths<paths>;

export interface SdkClientOptions extends ClientOptions, PartnerCredentials {}

/** The status check only reads; initiate and refund are never sent twice. */
const sdkSafeToRepeat: SafeToRepeat = (request) => new URL(request.url).pathname.endsWith('/checkTransactionStatus');

export function createSdkClient(options: SdkClientOptions): Client<SdkClientPaths> {
  checkPartnerCredentials(options, 'createSdkClient');
  const { partnerId, privateKey } = options;
  return buildClient(
    options,
    sdkSafeToRepeat,
    {
      sign: (body) => ({
        'X-Partnerid': partnerId,
        'X-Signature': sdkSignature(body, privateKey),
      }),
    },
  );
}
