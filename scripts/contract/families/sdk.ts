/**
 * The SDK flow (`X-Partnerid` + `X-Signature` over the body). Against a real server the setup
 * initiates two transactions of this run: one left as it is (for the duplicate and the status
 * check) and one confirmed through the sandbox's test control (for the refund).
 */
import { sdkSignature } from '../../../src/signature.js';
import { APPROVED_TEST_USER } from '../../../src/sandbox/fixtures.js';
import type { Kit } from '../kit.js';
import * as edit from '../request-edit.js';
import type { DreddTransaction, Edit, Operation, Plan } from '../types.js';
import { isPublic, setSdkSignature, type AuthMode } from './auth.js';
import { noConfirmControlSkip, setUpDirect } from './direct.js';

const INITIATE = '/merchant/credit/initiateTransaction';
const STATUS = '/merchant/credit/checkTransactionStatus';
const REFUND = '/merchant/credit/refundTransaction';
const confirmPath = (id: string): string => `/sandbox/sdk/transactions/${encodeURIComponent(id)}/confirm`;

/** Transactions made by the setup are of this amount; the document's refund example is less. */
const SETUP_AMOUNT = 250000;

export const codeField = 'message';

export function authenticate(kit: Kit, transaction: DreddTransaction, op: Operation, mode: AuthMode): void {
  if (isPublic(kit, op)) return;
  setSdkSignature(transaction, kit.settings, mode);
}

function signedCall(kit: Kit, path: string, value?: unknown) {
  const body = value === undefined ? '' : JSON.stringify(value);
  const headers = { 'X-Partnerid': kit.settings.partnerId, 'X-Signature': sdkSignature(body, kit.settings.privateKey) };
  return kit.call('POST', path, { body: value === undefined ? undefined : body, headers });
}

async function initiate(kit: Kit, id: string) {
  return signedCall(kit, INITIATE, {
    merchantTransactionId: id,
    userPhoneNumber: APPROVED_TEST_USER.phoneNumber,
    userId: 'contract_kit',
    amount: SETUP_AMOUNT,
  });
}

export function setup(kit: Kit): Promise<void> {
  return setUpDirect(kit, {
    initiate: (id) => initiate(kit, id),
    created: 201,
    confirmed: 'confirmedId',
    suffix: 'confirmed',
    confirm: async (id) => ({ path: confirmPath(id), response: await signedCall(kit, confirmPath(id)) }),
  });
}

/** Sets merchantTransactionId in the body Dredd will send. */
function withId(id: string, more?: Edit): Edit {
  return (transaction) => {
    const body = edit.jsonBody(transaction) || {};
    body.merchantTransactionId = id;
    edit.setJsonBody(transaction, body);
    if (more) more(transaction);
  };
}

export function plan(kit: Kit, op: Operation): Plan | undefined {
  const status = Number(op.status);
  const unknown = kit.id('unknown');
  const wrong: Plan = { auth: 'wrong', expectCode: 'AUTHORIZATION_FAILED' };
  const large: Plan = { auth: 'valid', expectCode: 'PAYLOAD_TOO_LARGE' };
  switch (`${op.path} ${status}`) {
    case `${INITIATE} 201`:
      return { auth: 'valid', edit: withId(kit.id('new')) };
    case `${INITIATE} 400`:
      return { auth: 'valid', edit: withId(kit.need('existingId')), expectCode: 'DUPLICATE_TRANSACTION_ID' };
    case `${INITIATE} 401`:
      return { ...wrong, edit: withId(kit.id('unauthorized')) };
    case `${INITIATE} 413`:
      return { ...large, edit: withId(kit.id('large'), edit.padBodyOverLimit) };
    case `${STATUS} 200`:
      return { auth: 'valid', edit: withId(kit.need('existingId')) };
    case `${STATUS} 400`:
      return { auth: 'valid', edit: withId(unknown), expectCode: 'NO_SUCH_TRANSACTION' };
    case `${STATUS} 401`:
      return { ...wrong, edit: withId(kit.state.existingId || unknown) };
    case `${STATUS} 413`:
      return { ...large, edit: withId(unknown, edit.padBodyOverLimit) };
    case `${REFUND} 200`:
      return noConfirmControlSkip(kit, 'sdk') ?? { auth: 'valid', edit: withId(kit.need('confirmedId')) };
    case `${REFUND} 400`:
      return { auth: 'valid', edit: withId(unknown), expectCode: 'NO_SUCH_TRANSACTION' };
    case `${REFUND} 401`:
      return { ...wrong, edit: withId(kit.state.confirmedId || unknown) };
    case `${REFUND} 413`:
      return { ...large, edit: withId(unknown, edit.padBodyOverLimit) };
    default:
      return undefined;
  }
}
