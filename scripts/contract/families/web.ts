/**
 * The web-initiated flow (`X-Partner-Id` + `X-Signature` over body + path and query + key).
 * Against a real server the setup initiates one transaction of this run, used by the duplicate
 * and by the status check, whose answer's status signature (D22) is verified too; and a second
 * one confirmed through the sandbox's test control (`POST /sandbox/web/transactions/{id}/confirm`),
 * for the refund (D32). Without that control the refund 200 is skipped with the reason.
 */
import { statusSignature, webSignature } from '../../../src/signature.js';
import { APPROVED_TEST_USER } from '../../../src/sandbox/fixtures.js';
import type { Kit } from '../kit.js';
import { genericPlan } from '../plans.js';
import * as edit from '../request-edit.js';
import type { DreddTransaction, Edit, Operation, Plan, RealResponse } from '../types.js';
import { isPublic, setWebSignature, type AuthMode } from './auth.js';
import { noConfirmControlSkip, setUpDirect } from './direct.js';

const INITIATE = '/api/transaction';
const STATUS = '/api/transaction/status';
const REFUND = '/api/refund';
/** Small, so that the amount left after the first refund is known. */
const REFUNDABLE_AMOUNT = 150000;
const REFUND_AMOUNT = 1000;

export const codeField = 'message';

export function authenticate(kit: Kit, transaction: DreddTransaction, op: Operation, mode: AuthMode): void {
  if (isPublic(kit, op)) return;
  setWebSignature(transaction, kit.settings, mode);
}

function initiate(kit: Kit, id: string) {
  const body = JSON.stringify({ id, amount: REFUNDABLE_AMOUNT, user: { name: 'Contract Kit', phoneNumber: APPROVED_TEST_USER.phoneNumber } });
  const headers = {
    'X-Partner-Id': kit.settings.partnerId,
    'X-Signature': webSignature(body, `${new URL(kit.settings.server).pathname.replace(/\/$/, '')}${INITIATE}`, kit.settings.privateKey),
  };
  return kit.call('POST', INITIATE, { body, headers });
}

export function setup(kit: Kit): Promise<void> {
  return setUpDirect(kit, {
    initiate: (id) => initiate(kit, id),
    created: 200,
    confirmed: 'refundableId',
    suffix: 'refundable',
    confirm: async (id) => {
      const path = `/sandbox/web/transactions/${encodeURIComponent(id)}/confirm`;
      return { path, response: await kit.call('POST', path) };
    },
  });
}

function withId(id: string, more?: Edit): Edit {
  return (transaction) => {
    const body = edit.jsonBody(transaction) || {};
    body.id = id;
    edit.setJsonBody(transaction, body);
    if (more) more(transaction);
  };
}

function refundBody(transactionId: string, amount?: number): Edit {
  return (transaction) => {
    edit.setJsonBody(transaction, amount === undefined ? { transactionId } : { transactionId, amount });
  };
}

function queryId(id: string | undefined): Edit {
  return (transaction) => edit.setQuery(transaction, id === undefined ? '' : `id=${encodeURIComponent(id)}`);
}

/** The status answer names the transaction asked for and carries its status signature (D22). */
function statusAnswerCheck(kit: Kit, id: string): (real: RealResponse) => string[] {
  return (real) => {
    const body = JSON.parse(real.body ?? '') as { transactionId: string; status: string; signature: string };
    const problems: string[] = [];
    if (body.transactionId !== id) problems.push(`transactionId is ${JSON.stringify(body.transactionId)}, expected ${JSON.stringify(id)}`);
    const expected = statusSignature(body.transactionId, body.status, kit.settings.privateKey);
    if (body.signature !== expected) problems.push('signature is not base64(SHA-256(transactionId + status + key)) (D22)');
    return problems;
  };
}

export function plan(kit: Kit, op: Operation): Plan {
  const status = Number(op.status);
  const unknown = kit.id('unknown');
  const wrong: Plan = { auth: 'wrong', expectCode: 'AUTHORIZATION_FAILED' };
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
      return noConfirmControlSkip(kit, 'web') ?? { auth: 'valid', edit: refundBody(kit.need('refundableId'), REFUND_AMOUNT) };
    case `${REFUND} 400`:
      return { auth: 'valid', edit: refundBody(unknown, REFUND_AMOUNT), expectCode: 'NO_SUCH_TRANSACTION' };
    case `${REFUND} 401`:
      return { ...wrong, edit: refundBody(kit.state.refundableId || unknown, REFUND_AMOUNT) };
    case `${REFUND} 413`:
      return {
        auth: 'valid',
        edit: (transaction: DreddTransaction) => {
          refundBody(kit.state.refundableId || unknown, REFUND_AMOUNT)(transaction);
          edit.padBodyOverLimit(transaction);
        },
        expectCode: 'PAYLOAD_TOO_LARGE',
      };
    default:
      return genericPlan(kit, op);
  }
}
