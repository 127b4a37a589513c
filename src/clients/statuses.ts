/**
 * What a transaction's status means, in every family, as one function: the gateway's
 * `FAILED` and its alias `FAILURE` (answered to a merchant set to it, as the service's Magento module
 * reads it), and the web and SDK flows' `FAILURE`, are the same outcome, a final failure. Branch on
 * {@link statusOutcome} rather than on the strings, and a receiver never drops the alias.
 * Browser-safe: no Node import.
 */

/** A status of any family: `PENDING`, `SUCCESS`, `FAILED`, `FAILURE`, `CANCELLED`. */
export type AnyTransactionStatus = 'PENDING' | 'SUCCESS' | 'FAILED' | 'FAILURE' | 'CANCELLED';

/** The outcome a status names; `unknown` for a value no version of the contract has. */
export type StatusOutcome = 'pending' | 'succeeded' | 'failed' | 'cancelled' | 'unknown';

const OUTCOMES: Readonly<Record<AnyTransactionStatus, StatusOutcome>> = Object.freeze({
  PENDING: 'pending',
  SUCCESS: 'succeeded',
  FAILED: 'failed',
  FAILURE: 'failed',
  CANCELLED: 'cancelled',
});

/** The outcome of a status of any family: `FAILED` and `FAILURE` are both `failed`. */
export function statusOutcome(status: string): StatusOutcome {
  return Object.hasOwn(OUTCOMES, status) ? OUTCOMES[status as AnyTransactionStatus] : 'unknown';
}

/** True for `FAILED` and `FAILURE`, the one final failure under its two names. */
export function isFailedStatus(status: string): boolean {
  return statusOutcome(status) === 'failed';
}

/** True for the final statuses: `SUCCESS`, `FAILED`, `FAILURE`, `CANCELLED`. */
export function isFinalStatus(status: string): boolean {
  const outcome = statusOutcome(status);
  return outcome === 'succeeded' || outcome === 'failed' || outcome === 'cancelled';
}
