/**
 * The gateway's two kinds of HTTP Basic credentials:
 * - Merchant API: the payment gateway's constant pair from the configuration (`pg_test` /
 *   `pg_test_secret` by default);
 * - Transactional API: one random pair per merchant, issued when it becomes `enabled` and deleted
 *   when it is disabled. They identify the merchant.
 *
 * Passwords are compared in constant time ({@link partEquals}: the digest of a presented password
 * is made once per distinct header value) and never logged.
 */
import { randomBytes } from 'node:crypto';
import {
  basicAuth,
  credentialKinds,
  fixedCredentials,
  MERCHANT_API_CREDENTIALS,
  TRANSACTIONAL_API_CREDENTIALS,
} from '../auth.js';
import { partEquals, secretDigest, type BasicCredentials } from '../config.js';
import type { FamilyContext } from '../context.js';
import type { AuthResult, IncomingRequest } from '../router.js';
import { PUBLISHED_TEST_PARTNER } from '../fixtures.js';
import { ensurePublishedTestMerchant } from './published-merchant.js';
import type { GatewayState, MerchantPrincipal } from './records.js';

/** Compared against when the username is unknown, so that both cases cost the same. */
const NO_PASSWORD = secretDigest(randomBytes(24).toString('base64url'));

export function merchantApiAuth(ctx: FamilyContext): (request: IncomingRequest) => AuthResult<true> {
  return basicAuth(ctx.errors, MERCHANT_API_CREDENTIALS, fixedCredentials(ctx.config.merchantApi), credentialKinds(ctx.config));
}

export function transactionalApiAuth(
  ctx: FamilyContext,
  state: GatewayState,
): (request: IncomingRequest) => AuthResult<MerchantPrincipal> {
  // The digest of each record's password, made on its first use: a record is a frozen snapshot, and
  // a changed one is a new object (store.ts).
  const digests = new WeakMap<object, Buffer>();
  const digestOf = (record: { password: string }): Buffer => {
    let digest = digests.get(record);
    if (digest === undefined) {
      digest = secretDigest(record.password);
      digests.set(record, digest);
    }
    return digest;
  };
  const identify = (credentials: BasicCredentials): MerchantPrincipal | undefined => {
    // The published test pair names the ready-made merchant, written when first asked for.
    if (credentials.username === PUBLISHED_TEST_PARTNER.id) ensurePublishedTestMerchant(ctx, state);
    const record = state.credentials.get(credentials.username);
    const matches = partEquals(credentials, 'password', record === undefined ? NO_PASSWORD : digestOf(record));
    if (record === undefined || !matches) return undefined;
    // Revoked the moment the merchant leaves `enabled`.
    if (state.merchants.get(record.merchantId)?.stage !== 'enabled') return undefined;
    return { merchantId: record.merchantId };
  };
  // The same credentials name the merchant on the /sandbox/ endpoints of a hosted sandbox.
  ctx.access.identifyMerchants((credentials) => identify(credentials)?.merchantId);
  // So that a Merchant API or extras endpoint can say that it was sent these by mistake.
  const kinds = credentialKinds(ctx.config);
  kinds.add(TRANSACTIONAL_API_CREDENTIALS, (credentials) => identify(credentials) !== undefined);
  return basicAuth(ctx.errors, TRANSACTIONAL_API_CREDENTIALS, identify, kinds);
}

/** New Transactional API credentials for a merchant. */
export function issueCredentials(merchantId: string): { username: string; password: string } {
  return {
    username: `txn_${merchantId}_${randomBytes(4).toString('hex')}`,
    password: randomBytes(24).toString('base64url'),
  };
}
