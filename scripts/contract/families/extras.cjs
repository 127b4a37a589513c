'use strict';
/**
 * The extras (HTTP Basic with the extras credentials, D26). Stateless: every push is accepted
 * again and an unknown phone number is an answer, so no setup is needed.
 */
const edit = require('../request-edit.cjs');
const { genericPlan } = require('../plans.cjs');
const { isPublic, setBasic } = require('./auth.cjs');

const CREDIT_INFO = '/service/payments/merchant/user/credit/info';

const codeField = 'errorCode';
const CODES = { 400: 'BAD_REQUEST', 401: 'UNAUTHORIZED', 413: 'PAYLOAD_TOO_LARGE' };

function authenticate(kit, transaction, op, mode) {
  if (isPublic(kit, op)) return;
  setBasic(transaction, kit.settings, mode);
}

function plan(kit, op) {
  if (op.path === CREDIT_INFO && Number(op.status) === 400) {
    // No body: a phone number that is not of the form +91 and ten digits (D25).
    return {
      auth: 'valid',
      edit: (transaction) => edit.setQueryParameter(transaction, 'userPhoneNumber', 'not-a-phone-number'),
      expectCode: 'BAD_REQUEST',
      invalid: true,
    };
  }
  return genericPlan(kit, op, CODES);
}

module.exports = { codeField, authenticate, plan };
