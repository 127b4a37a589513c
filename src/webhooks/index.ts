/**
 * `paylater-api/webhooks`: receiving the service's webhooks. Verification (./verify.ts), the
 * contract's webhook schemas (./contract.ts, from the contract model), the Node handler
 * (./handler.ts) and the deduplicator (./dedupe.ts). docs/webhooks.md has the full guide.
 */
export {
  DEFAULT_MAX_BODY_BYTES,
  verifyGatewayWebhook,
  verifySdkWebhook,
  verifyWebWebhook,
  WebhookVerificationError,
  type GatewayRefundWebhookPayload,
  type GatewayTransactionWebhookPayload,
  type RawWebhookBody,
  type SdkWebhookPayload,
  type VerifiedGatewayWebhook,
  type VerifiedSdkWebhook,
  type VerifiedWebhook,
  type VerifiedWebhooks,
  type VerifiedWebWebhook,
  type VerifyWebhookOptions,
  type WebhookFailureReason,
  type WebhookFamily,
  type WebhookHeaders,
  type WebhookPayloadIssue,
  type WebWebhookPayload,
} from './verify.js';
export {
  createWebhookHandler,
  WebhookRawBodyError,
  type WebhookHandlerOptions,
  type WebhookRequestHandler,
} from './handler.js';
/** What a webhook's status means: `FAILED` and its alias `FAILURE` are one failure (why: D120). */
export { isFailedStatus, isFinalStatus, statusOutcome, type AnyTransactionStatus, type StatusOutcome } from '../clients/statuses.js';
export { createDeduplicator, type Deduplicator, type DeduplicatorOptions } from './dedupe.js';
