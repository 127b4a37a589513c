/**
 * The signing clients' checks of their credentials at creation: an empty string (an environment
 * variable set but empty) is told apart from a missing value, and the message never repeats a key.
 */
import { describe, expect, it } from 'vitest';
import { createSdkClient } from '../../src/clients/sdk.js';
import { createWebClient } from '../../src/clients/web.js';

const baseUrl = 'http://127.0.0.1:9';

describe('partner credentials of the signing clients', () => {
  it('says that an empty private key is probably an environment variable set but empty', () => {
    for (const create of [createSdkClient, createWebClient]) {
      expect(() => create({ baseUrl, partnerId: 'partner_test', privateKey: '' })).toThrow(
        /privateKey is an empty string; an environment variable set but empty \(such as PAYLATER_PRIVATE_KEY=\)[\s\S]*\|\|/,
      );
    }
  });

  it('says the same of an empty partner id, and names a missing value plainly', () => {
    expect(() => createSdkClient({ baseUrl, partnerId: '', privateKey: 'k' })).toThrow(/partnerId is an empty string[\s\S]*PAYLATER_PARTNER_ID/);
    expect(() => createWebClient({ baseUrl, partnerId: 'p', privateKey: undefined as unknown as string })).toThrow(
      /^createWebClient: privateKey must be a non-empty string$/,
    );
  });

});
