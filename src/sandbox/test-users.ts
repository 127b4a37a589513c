/**
 * What the sandbox's documented test users (./fixtures.ts) mean for every family: the extras'
 * credit info, and the gateway's pre-eligibility. Any other phone number is an unregistered user.
 */
import type { components } from '../../generated/types/extras.js';
import type { components as GatewayComponents } from '../../generated/types/gateway.js';
import { findTestUser, TEST_USERS } from './fixtures.js';

export { findTestUser, TEST_USERS };

export type CreditInfo = components['schemas']['ExtrasCreditInfo'];

/** The reasons a pre-eligibility check gives for not being eligible. */
export type IneligibilityReason = GatewayComponents['schemas']['GatewayIneligibilityReason'];

/** The defaults of an unregistered or not approved user. */
function defaultCreditInfo(registrationStatus: CreditInfo['registrationStatus']): CreditInfo {
  return {
    registrationStatus,
    creditLimit: 0,
    creditTaken: 0,
    paymentLink: '',
    upcomingDueDate: '',
    outstandingAmount: 0,
    dueAmount: 0,
  };
}

/** The credit info of a phone number at the (virtual) time `now`. */
export function creditInfo(phoneNumber: string, now: Date): CreditInfo {
  const found = findTestUser(phoneNumber);
  if (found === undefined) return defaultCreditInfo('unregistered');
  if (found.blocked || found.creditLimit === 0) return defaultCreditInfo('registered');
  return {
    registrationStatus: 'registered',
    creditLimit: found.creditLimit,
    creditTaken: found.creditTaken,
    paymentLink: found.paymentLink,
    upcomingDueDate: found.dueDayOfMonth === undefined ? '' : nextDueDate(found.dueDayOfMonth, now),
    outstandingAmount: found.outstandingAmount,
    dueAmount: found.dueAmount,
  };
}

/** The credit a user can still take, in paise (0 for an unknown, blocked or not approved user). */
function availableCredit(phoneNumber: string): number {
  const found = findTestUser(phoneNumber);
  if (found === undefined || found.blocked) return 0;
  return Math.max(0, found.creditLimit - found.creditTaken);
}

/**
 * Pre-eligibility of a user for an amount: blocked users `USER_BLOCKED`, risk-declined
 * users `RISK_DECLINED`, amounts above the available credit `CREDIT_LIMIT_EXCEEDED` (an
 * unregistered or not approved user has none).
 */
export function preEligibility(
  phoneNumber: string,
  amount: number,
): { eligible: true } | { eligible: false; reason: IneligibilityReason } {
  const found = findTestUser(phoneNumber);
  if (found?.blocked === true) return { eligible: false, reason: 'USER_BLOCKED' };
  if (found?.riskDeclined === true) return { eligible: false, reason: 'RISK_DECLINED' };
  if (amount > availableCredit(phoneNumber)) return { eligible: false, reason: 'CREDIT_LIMIT_EXCEEDED' };
  return { eligible: true };
}

/** `dd/mm/yyyy` of the next `day` of a month strictly after `now` (UTC). */
export function nextDueDate(day: number, now: Date): string {
  let year = now.getUTCFullYear();
  let month = now.getUTCMonth();
  if (now.getUTCDate() >= day) month += 1;
  if (month > 11) {
    month = 0;
    year += 1;
  }
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${pad(day)}/${pad(month + 1)}/${year}`;
}
