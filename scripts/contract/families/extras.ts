/**
 * The extras (HTTP Basic with the extras credentials, D26). Stateless: every push is accepted
 * again and an unknown phone number is an answer, so no setup is needed.
 */
import type { Kit } from '../kit.js';
import { genericPlan } from '../plans.js';
import * as edit from '../request-edit.js';
import type { AuthMode, DreddTransaction, Operation, Plan } from '../types.js';
import { isPublic, setBasic } from './auth.js';

const CREDIT_INFO = '/service/payments/merchant/user/credit/info';

export const codeField = 'errorCode';
const CODES = { 400: 'BAD_REQUEST', 401: 'AUTHORIZATION_FAILED', 413: 'PAYLOAD_TOO_LARGE' };

export function authenticate(kit: Kit, transaction: DreddTransaction, op: Operation, mode: AuthMode): void {
  if (isPublic(kit, op)) return;
  setBasic(transaction, kit.settings, mode);
}

export function plan(kit: Kit, op: Operation): Plan {
  if (op.path === CREDIT_INFO && Number(op.status) === 400) {
    // No body: a phone number (the operation's only parameter) that is not of the form +91 and ten digits (D25).
    return {
      auth: 'valid',
      edit: (transaction: DreddTransaction) => edit.setQuery(transaction, 'userPhoneNumber=not-a-phone-number'),
      expectCode: 'BAD_REQUEST',
      invalid: true,
    };
  }
  return genericPlan(kit, op, CODES);
}
