'use strict';
/**
 * The web-initiated flow (`X-Partner-Id` + `X-Signature` over body + path and query + key).
 * Against a real server the setup initiates one transaction of this run, used by the duplicate
 * and by the status check, whose answer's status signature (D22) is verified too; and a second
 * one confirmed through the sandbox's test control (`POST /sandbox/web/transactions/{id}/confirm`),
 * for the refund (D32). Without that control the refund 200 is skipped with the reason.
 */
const { webSignature, statusSignature } = require('../signing.cjs');
const { unexpected } = require('../kit.cjs');
const edit = require('../request-edit.cjs');
const { genericPlan } = require('../plans.cjs');
const { isPublic, setWebSignature } = require('./auth.cjs');

const INITIATE = '/api/transaction';
const STATUS = '/api/transaction/status';
const REFUND = '/api/refund';
/** Small, so that the amount left after the first refund is known. */
const REFUNDABLE_AMOUNT = 150000;
const REFUND_AMOUNT = 1000;

const codeField = 'message';

function authenticate(kit, transaction, op, mode) {
  if (isPublic(kit, op)) return;
  setWebSignature(transaction, kit.settings, mode);
}

function initiate(kit, id) {
  const body = JSON.stringify({ id, amount: REFUNDABLE_AMOUNT, user: { name: 'Contract Kit', phoneNumber: '+919000000001' } });
  const headers = {
    'X-Partner-Id': kit.settings.partnerId,
    'X-Signature': webSignature(body, `${new URL(kit.settings.server).pathname.replace(/\/$/, '')}${INITIATE}`, kit.settings.privateKey),
  };
  return kit.call('POST', INITIATE, { body, headers });
}

async function setup(kit) {
  const id = kit.id('existing');
  const response = await initiate(kit, id);
  if (response.status === 200) kit.state.existingId = id;
  else kit.miss('existingId', unexpected(`initiating ${id}`, response));

  const refundable = kit.id('refundable');
  const initiated = await initiate(kit, refundable);
  if (initiated.status !== 200) {
    kit.miss('refundableId', unexpected(`initiating ${refundable}`, initiated));
    return;
  }
  const path = `/sandbox/web/transactions/${encodeURIComponent(refundable)}/confirm`;
  const confirmed = await kit.call('POST', path);
  if (confirmed.status >= 200 && confirmed.status < 300) kit.state.refundableId = refundable;
  else if (confirmed.status === 404 || confirmed.status === 405) kit.state.noConfirmControl = true;
  else kit.miss('refundableId', unexpected(`POST ${path}`, confirmed));
}

function withId(id, more) {
  return (transaction) => {
    const body = edit.jsonBody(transaction) || {};
    body.id = id;
    edit.setJsonBody(transaction, body);
    if (more) more(transaction);
  };
}

function refundBody(transactionId, amount) {
  return (transaction) => {
    edit.setJsonBody(transaction, amount === undefined ? { transactionId } : { transactionId, amount });
  };
}

function queryId(id) {
  return (transaction) => edit.setQuery(transaction, id === undefined ? '' : `id=${encodeURIComponent(id)}`);
}

/** The status answer names the transaction asked for and carries its status signature (D22). */
function statusAnswerCheck(kit, id) {
  return (real) => {
    const body = JSON.parse(real.body);
    const problems = [];
    if (body.transactionId !== id) problems.push(`transactionId is ${JSON.stringify(body.transactionId)}, expected ${JSON.stringify(id)}`);
    const expected = statusSignature(body.transactionId, body.status, kit.settings.privateKey);
    if (body.signature !== expected) problems.push('signature is not base64(SHA-256(transactionId + status + key)) (D22)');
    return problems;
  };
}

function plan(kit, op) {
  const status = Number(op.status);
  const unknown = kit.id('unknown');
  const wrong = { auth: 'wrong', expectCode: 'AUTHORIZATION_FAILED' };
  switch (`${op.path} ${status}`) {
    case `${INITIATE} 200`:
      return { auth: 'valid', edit: withId(kit.id('new')) };
    case `${INITIATE} 400`:
      return { auth: 'valid', edit: withId(kit.need('existingId')), expectCode: 'DUPLICATE_TRANSACTION_ID' };
    case `${INITIATE} 401`:
      return { ...wrong, edit: withId(kit.id('unauthorized')) };
    case `${INITIATE} 413`:
      return { auth: 'valid', edit: withId(kit.id('large'), edit.padBodyOverLimit), expectCode: 'PAYLOAD_TOO_LARGE' };
    case `${STATUS} 200`: {
      const id = kit.need('existingId');
      return { auth: 'valid', edit: queryId(id), check: statusAnswerCheck(kit, id) };
    }
    case `${STATUS} 400`:
      return { auth: 'valid', edit: queryId(undefined), expectCode: 'BAD_REQUEST', invalid: true };
    case `${STATUS} 401`:
      return { ...wrong, edit: queryId(kit.state.existingId || unknown) };
    case `${STATUS} 404`:
      return { auth: 'valid', edit: queryId(unknown), expectCode: 'TRANSACTION_NOT_FOUND' };
    case `${REFUND} 200`:
      if (kit.state.noConfirmControl) {
        return {
          skip:
            '200: needs a transaction confirmed by a user (the server has no test control ' +
            'POST /sandbox/web/transactions/{id}/confirm)',
        };
      }
      return { auth: 'valid', edit: refundBody(kit.need('refundableId'), REFUND_AMOUNT) };
    case `${REFUND} 400`:
      return { auth: 'valid', edit: refundBody(unknown, REFUND_AMOUNT), expectCode: 'NO_SUCH_TRANSACTION' };
    case `${REFUND} 401`:
      return { ...wrong, edit: refundBody(kit.state.refundableId || unknown, REFUND_AMOUNT) };
    case `${REFUND} 413`:
      return {
        auth: 'valid',
        edit: (transaction) => {
          refundBody(kit.state.refundableId || unknown, REFUND_AMOUNT)(transaction);
          edit.padBodyOverLimit(transaction);
        },
        expectCode: 'PAYLOAD_TOO_LARGE',
      };
    default:
      return genericPlan(kit, op);
  }
}

module.exports = { codeField, authenticate, setup, plan };
