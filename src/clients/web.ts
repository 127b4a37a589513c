/**
 * Typed client of the web-initiated flow. Every request is signed as the last step before it is sent,
 * over the exact body bytes and the exact path and query sent (a path prefix of `baseUrl`
 * included): `X-Signature` = base64(SHA-256(body + pathAndQuery + privateKey)), with `X-Partner-Id`.
 * Callers never pass `X-Signature` themselves.
 */
import type { Client } from 'openapi-fetch';
import type { components, operations, paths } from '../../generated/types/web.js';
import { webSignature } from '../signature.js';
import { checkPartnerCredentials, type PartnerCredentials } from './signed.js';
import { buildClient, readOnly, type ClientOptions, type SignedPaths } from './transport.js';

export type { components as WebComponents, operations as WebOperations, paths as WebPaths };
export type WebSchemas = components['schemas'];
export type WebClientPaths = SignedPaths<paths>;

export interface WebClientOptions extends ClientOptions, PartnerCredentials {}

/** Only the status read is retried (when `retry` is set); an initiate is never sent twice. */
export function createWebClient(options: WebClientOptions): Client<WebClientPaths> {
  checkPartnerCredentials(options, 'createWebClient');
  const { partnerId, privateKey } = options;
  return buildClient(
    options,
    readOnly,
    {
      sign: (body, pathAndQuery) => ({
        'X-Partner-Id': partnerId,
        'X-Signature': webSignature(body, pathAndQuery, privateKey),
      }),
    },
  );
}
