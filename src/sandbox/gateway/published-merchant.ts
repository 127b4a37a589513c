/**
 * The ready-made gateway test merchant (why: D123): an `enabled` merchant whose Transactional API
 * credentials are the service's published test pair (`testPartnerId` / `testPrivateKey`), the
 * values the service's Magento module ships as its defaults. It answers a failed transaction's
 * status as `FAILURE`, the word that module reads. It exists whenever the published test
 * partner is on: it is written the first time anything asks for it (its credentials, its
 * id), so a store emptied or shared by several processes gets it again without a start-up step.
 */
import type { FamilyContext } from '../context.js';
import { PUBLISHED_TEST_PARTNER } from '../fixtures.js';
import type { EveryField } from '../records.js';
import type { GatewayState, MerchantRecord } from './records.js';

/** The ready-made merchant's id (under the Merchant API, `GET /api/merchant/published_test_merchant`). */
export const PUBLISHED_TEST_MERCHANT_ID = 'published_test_merchant';

/** Writes the ready-made merchant when it is on and not in the store yet (never changes it afterwards). */
export function ensurePublishedTestMerchant(ctx: FamilyContext, state: GatewayState): void {
  if (!ctx.config.publishedTestPartner || state.merchants.has(PUBLISHED_TEST_MERCHANT_ID)) return;
  // Another merchant's issued credentials never take this username (they start with txn_).
  if (state.credentials.has(PUBLISHED_TEST_PARTNER.id)) return;
  const now = ctx.clock.now();
  const credentials = { username: PUBLISHED_TEST_PARTNER.id, password: PUBLISHED_TEST_PARTNER.privateKey };
  const merchant: EveryField<MerchantRecord> = {
    id: PUBLISHED_TEST_MERCHANT_ID,
    brandName: 'Published Test Merchant',
    entityName: 'Published Test Merchant',
    brandHomePageUrl: ctx.config.partner.homePageUrl,
    mccCode: 5399,
    defaultWebhookUrl: undefined,
    defaultColor: undefined,
    settlementDetails: undefined,
    hasLogo: false,
    hasFavicon: false,
    stage: 'enabled',
    documents: [],
    verificationDueAt: undefined,
    verifications: 1,
    credentials,
    disabledReason: undefined,
    failedStatus: 'FAILURE',
    dashboardUsers: [],
    createdAt: now,
    updatedAt: now,
  };
  state.merchants.set(merchant.id, merchant);
  state.credentials.set(credentials.username, { ...credentials, merchantId: merchant.id });
}
