/**
 * The records of the web flow, which the API (web.ts) and the hosted checkout (web-checkout.ts)
 * both work on.
 */
import type { components } from '../../../generated/types/web.js';
import type { DirectStatus } from './direct.js';

/** The record of a web-flow transaction (collection `web.transactions`, keyed by its id). */
export interface WebTransaction {
  id: string;
  partnerId: string;
  amount: number;
  user: components['schemas']['User'];
  /**
   * The partner's free JSON object, never interpreted, kept as its JSON text (a parsed
   * object can cost 35 times its bytes) and parsed when read.
   */
  notesJson?: string;
  /** The bytes of `notesJson`, counted against `limits.notesBytes`. */
  notesBytes: number;
  /** `notes.webhook_url` of the initiate, called on the final status (web-notes-webhook.ts). */
  webhookUrl?: string;
  /** Without empty overrides: `""` means "no override". */
  redirect?: components['schemas']['WebRedirect'];
  status: DirectStatus;
  /** `OTP_ATTEMPTS_EXCEEDED`: three wrong OTPs on the hosted page (web-checkout.ts). */
  failureReason?: 'USER_FAILED' | 'EXPIRED' | 'OTP_ATTEMPTS_EXCEEDED';
  /** What was refunded so far, never more than `amount`. */
  refundedAmount: number;
  /** How many refunds there are; each is its own record of `web.refunds` (see `ChildRecords` of store.ts). */
  refundCount: number;
  createdAt: number;
  updatedAt: number;
  expiresAt: number;
}

export const WEB_TRANSACTIONS = 'web.transactions';
export const WEB_REFUNDS = 'web.refunds';
