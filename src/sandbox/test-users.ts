/**
 * The sandbox's documented test users (docs/sandbox.md), one place for every family: the extras'
 * credit info, and the gateway's pre-eligibility and down-payment behaviour. Any other phone number
 * is an unregistered user.
 */
import type { components } from '../../generated/types/extras.js';

export type CreditInfo = components['schemas']['ExtrasCreditInfo'];

/** D12's reasons for not being eligible. */
export type IneligibilityReason = 'CREDIT_LIMIT_EXCEEDED' | 'RISK_DECLINED' | 'USER_BLOCKED';

export interface TestUser {
  phoneNumber: string;
  name: string;
  /** One line for the documentation. */
  summary: string;
  /** Paise; 0 means not approved (the credit info then holds defaults). */
  creditLimit: number;
  creditTaken: number;
  outstandingAmount: number;
  dueAmount: number;
  paymentLink: string;
  /** The day of the month payments fall due; `undefined` when nothing is due. */
  dueDayOfMonth: number | undefined;
  /** Pre-eligibility declines the user for risk (`RISK_DECLINED`). */
  riskDeclined: boolean;
  /** The user is blocked (`USER_BLOCKED`); the credit info shows no credit. */
  blocked: boolean;
  /** Whether an external down payment of this user gets confirmed (gateway flow). */
  downPaymentConfirmed: boolean;
}

const user = (fields: Partial<TestUser> & Pick<TestUser, 'phoneNumber' | 'name' | 'summary'>): TestUser =>
  Object.freeze({
    creditLimit: 0,
    creditTaken: 0,
    outstandingAmount: 0,
    dueAmount: 0,
    paymentLink: '',
    dueDayOfMonth: undefined,
    riskDeclined: false,
    blocked: false,
    downPaymentConfirmed: true,
    ...fields,
  });

export const TEST_USERS: readonly TestUser[] = Object.freeze([
  user({
    phoneNumber: '+919000000001',
    name: 'Asha Rao',
    summary: 'Registered and approved: limit ₹50,000, ₹12,500 taken, ₹4,000 due on the coming 5th of a month.',
    creditLimit: 5_000_000,
    creditTaken: 1_250_000,
    outstandingAmount: 1_250_000,
    dueAmount: 400_000,
    paymentLink: 'https://pay.paylater.example/u/9000000001',
    dueDayOfMonth: 5,
  }),
  user({
    phoneNumber: '+919000000002',
    name: 'Vikram Shah',
    summary: 'Registered with a limit of ₹20,000, but never eligible: pre-eligibility answers RISK_DECLINED.',
    creditLimit: 2_000_000,
    paymentLink: 'https://pay.paylater.example/u/9000000002',
    riskDeclined: true,
  }),
  user({
    phoneNumber: '+919000000003',
    name: 'Meera Iyer',
    summary: 'Registered and approved: limit ₹10,000, nothing taken (amounts above ₹10,000: CREDIT_LIMIT_EXCEEDED).',
    creditLimit: 1_000_000,
    paymentLink: 'https://pay.paylater.example/u/9000000003',
  }),
  user({
    phoneNumber: '+919000000004',
    name: 'Rohan Das',
    summary: 'Registered and approved (limit ₹50,000), but a down payment is never confirmed (gateway: PAYMENT_NOT_CONFIRMED).',
    creditLimit: 5_000_000,
    paymentLink: 'https://pay.paylater.example/u/9000000004',
    downPaymentConfirmed: false,
  }),
  user({
    phoneNumber: '+919000000005',
    name: 'Kiran Patel',
    summary: 'Registered but not approved: creditLimit 0, every other field a default.',
  }),
  user({
    phoneNumber: '+919000000009',
    name: 'Blocked User',
    summary: 'Registered but blocked: credit info shows creditLimit 0 and defaults; pre-eligibility answers USER_BLOCKED.',
    blocked: true,
  }),
]);

export function findTestUser(phoneNumber: string): TestUser | undefined {
  return TEST_USERS.find((candidate) => candidate.phoneNumber === phoneNumber);
}

/** The defaults of an unregistered or not approved user (D26). */
export function defaultCreditInfo(registrationStatus: CreditInfo['registrationStatus']): CreditInfo {
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
export function availableCredit(phoneNumber: string): number {
  const found = findTestUser(phoneNumber);
  if (found === undefined || found.blocked) return 0;
  return Math.max(0, found.creditLimit - found.creditTaken);
}

/**
 * Pre-eligibility of a user for an amount (D12): blocked users `USER_BLOCKED`, risk-declined
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
