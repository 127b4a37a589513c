/**
 * Typed client of the extras (credit info, identification push, merchant-data push), with the
 * extras' own HTTP Basic credentials.
 */
import type { Client } from 'openapi-fetch';
import type { components, operations, paths } from '../../generated/types/extras.js';
import { operations as OPERATIONS } from '../../generated/operations/extras.js';
import { retrySafety } from './retry-safety.js';
import { basicAuth, buildClient, type BasicCredentials, type ClientOptions } from './transport.js';

export type { components as ExtrasComponents, operations as ExtrasOperations, paths as ExtrasPaths };
export type ExtrasSchemas = components['schemas'];

export interface ExtrasClientOptions extends ClientOptions {
  credentials: BasicCredentials;
}

/** With `retry`, only the credit info and the identification push are repeated (their `x-retry-safe`). */
export function createExtrasClient(options: ExtrasClientOptions): Client<paths> {
  return buildClient(options, retrySafety(OPERATIONS, options.baseUrl), basicAuth(options.credentials, 'createExtrasClient'));
}
