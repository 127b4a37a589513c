'use strict';
/**
 * The web-initiated flow (`X-Partner-Id` + `X-Signature` over body + path and query + key).
 * Against a real server the setup initiates one transaction of this run, used by the duplicate
 * and by the status check, whose answer's status signature (D22) is verified too.
 */
const { webSignature, statusSignature } = require('../signing.cjs');
const { unexpected } = require('../kit.cjs');
const edit = require('../request-edit.cjs');
const { genericPlan } = require('../plans.cjs');
const { isPublic, setWebSignature } = require('./auth.cjs');

const INITIATE = '/api/transaction';
const STATUS = '/api/transaction/status';

const codeField = 'message';

function authenticate(kit, transaction, op, mode) {
  if (isPublic(kit, op)) return;
  setWebSignature(transaction, kit.settings, mode);
}

async function setup(kit) {
  const id = kit.id('existing');
  const body = JSON.stringify({ id, amount: 150000, user: { name: 'Contract Kit', phoneNumber: '+919000000001' } });
  const headers = {
    'X-Partner-Id': kit.settings.partnerId,
    'X-Signature': webSignature(body, `${new URL(kit.settings.server).pathname.replace(/\/$/, '')}${INITIATE}`, kit.settings.privateKey),
  };
  const response = await kit.call('POST', INITIATE, { body, headers });
  if (response.status === 200) kit.state.existingId = id;
  else kit.miss('existingId', unexpected(`initiating ${id}`, response));
}

function withId(id, more) {
  return (transaction) => {
    const body = edit.jsonBody(transaction) || {};
    body.id = id;
    edit.setJsonBody(transaction, body);
    if (more) more(transaction);
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
      return { auth: 'valid', edit: queryId(unknown), expectCode: 'NO_SUCH_TRANSACTION' };
    default:
      return genericPlan(kit, op);
  }
}

module.exports = { codeField, authenticate, setup, plan };
