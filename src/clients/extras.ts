/**
 * Typed client of the extras (credit info, identification push, merchant-data push), with the
 * extras' own HTTP Basic credentials (D26).
 */
import type { Client } from 'openapi-fetch';
import type { components, operations, paths } from '../../generated/types/extras.js';
import { basicAuth, buildClient, type BasicCredentials, type ClientOptions, type SafeToRepeat } from './transport.js';

export type { components as ExtrasComponents, operations as ExtrasOperations, paths as ExtrasPaths };
export type ExtrasSchemas = components['schemas'];

export interface ExtrasClientOptions extends ClientOptions {
  credentials: BasicCredentials;
}

/** Reading credit info changes nothing; an identification push replaces what it carries (D26). */
const extrasSafeToRepeat: SafeToRepeat = (request) => {
  const path = new URL(request.url).pathname;
  return path.endsWith('/user/credit/info') || path.endsWith('/user/feed/identification');
};

export function createExtrasClient(options: ExtrasClientOptions): Client<paths> {
  return buildClient(options, extrasSafeToRepeat, basicAuth(options.credentials, 'createExtrasClient'));
}
