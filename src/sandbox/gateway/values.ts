/**
 * The gateway family's documented sandbox values (docs/sandbox.md, section Gateway): limits, delays
 * (virtual time) and the test values, in one frozen table the handlers and the tests read.
 */
import type { components } from '../../../generated/types/gateway.js';
import { DOWN_PAYMENT, TEST_OTP } from '../fixtures.js';
import { isoTime } from '../iso-time.js';

type DocumentType = components['schemas']['GatewayDocumentType'];

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export const GATEWAY = Object.freeze({
  /** Verification needs these two documents. */
  requiredDocumentTypes: Object.freeze(['PAN', 'CANCELLED_CHEQUE'] as const satisfies readonly DocumentType[]),
  /** A document file is at most 700 KiB before encoding. */
  maxDocumentBytes: 700 * 1024,
  /** Automated verification completes this long (virtual time) after the last required upload. */
  verificationDelayMs: 5 * SECOND,
  /** An entityName containing this (any case) fails the merchant's first verification (PAN rejected). */
  rejectTrigger: 'reject',
  /** An invitation to the dashboard is valid for 7 days. */
  invitationValidityMs: 7 * DAY,
  /** The sandbox holds at most this many merchants; another create answers 409 INVALID_STATE. */
  maxMerchants: 10_000,
  /** Dashboard users of one merchant, at most; another answers 409 INVALID_STATE. */
  maxDashboardUsers: 50,
  /** Invitations kept (the newest); an older one's login URL answers 404 like an unknown one. */
  keptInvitations: 10_000,
  /** A pre-eligibility check is reusable for 15 minutes. */
  checkValidityMs: 15 * MINUTE,
  /** The available credit of a phone number that is not one of the documented test users (₹50,000). */
  defaultCreditLimit: 5_000_000,
  /** The API generation of every gateway merchant (`GET /api/merchant/configuration`). */
  apiVersion: 2,
  /** The largest order amount a merchant may create, paise: the contract's amount maximum. */
  maxOrderAmount: 10_000_000,
  /** An expiryTimestamp at or above this is read as epoch milliseconds, below as seconds. */
  millisecondTimestampFrom: 1_000_000_000_000,
  /** Without expiryTimestamp a transaction expires 15 minutes after creation. */
  defaultExpiryMs: 15 * MINUTE,
  /** `expiryTimestamp` lies between 1 minute and 24 hours after creation. */
  minExpiryMs: MINUTE,
  maxExpiryMs: 24 * HOUR,
  /** The OTP every user "receives" (the sandbox fixtures). */
  correctOtp: TEST_OTP.correct,
  /** An OTP that always answers OTP_EXPIRED (and issues a new referenceId). */
  expiredOtp: TEST_OTP.expired,
  otpLength: TEST_OTP.length,
  /** An OTP (its referenceId) expires this long after it was issued. */
  otpValidityMs: 5 * MINUTE,
  /** The third wrong OTP fails the transaction. */
  maxOtpAttempts: TEST_OTP.maxWrong,
  /** The down payment is this share of the amount (percent), rounded half up to whole paise. */
  downPaymentPercent: DOWN_PAYMENT.percent,
  /** A down payment is at least ₹1 (the contract's minimum amount) and at most the whole amount. */
  minDownPayment: DOWN_PAYMENT.min,
  /** `waitOptions.pollIntervalSeconds`. */
  pollIntervalSeconds: 2,
  /** A registered down payment is confirmed (or not) this long after register-external. */
  confirmationDelayMs: 2 * SECOND,
  /** A refund becomes SUCCESS this long after it was requested. */
  refundDelayMs: 1 * SECOND,
  /** The fee (per cent of the day's gross) when `mdrChargedOnMerchant` is true. */
  mdrPercent: 2,
  /** The default and the longest settlement range. */
  defaultSettlementDays: 7,
  maxSettlementRangeDays: 31,
  /** List page size. */
  defaultListLimit: 20,
});

/**
 * Durations in milliseconds, and the RFC 3339 form of a time the records keep as epoch milliseconds
 * (remembered per value: a record read again writes the same times).
 */
export const time = { SECOND, MINUTE, HOUR, DAY, iso: isoTime };
