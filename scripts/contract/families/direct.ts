/**
 * The two flows in which the partner signs every request: the SDK flow (`X-Partnerid` +
 * `X-Signature` over the body) and the web-initiated flow (`X-Partner-Id` + `X-Signature` over
 * body + path and query + key). Their steps are the same, with other paths, bodies and signatures.
 *
 * Against a real server the setup initiates two transactions of this run: `<run>_existing`, left as
 * it is (the duplicate and the status check, whose web answer's status signature, D22, is verified
 * too), and a second one confirmed through the sandbox's test control
 * (`POST /sandbox/<flow>/transactions/{id}/confirm`), for the refund (D32). A server without that
 * control (404, 405) makes the refund 200 skip with the reason.
 */
import { statusSignature } from '../../../src/signature.js';
import { APPROVED_TEST_USER } from '../../../src/sandbox/fixtures.js';
import { unexpected, type FamilyModule, type Kit, type SetupResponse } from '../kit.js';
import { genericPlan } from '../plans.js';
import * as edit from '../request-edit.js';
import type { Settings } from '../settings.js';
import type { AuthMode, DreddTransaction, Edit, Operation, Plan, RealResponse } from '../types.js';
import { isPublic, setSdkSignature, setWebSignature } from './auth.js';

/** What one flow's steps are made of. */
interface Flow {
  name: 'sdk' | 'web';
  paths: { initiate: string; status: string; refund: string };
  /** The status of a successful initiate (SDK 201, web 200). */
  created: number;
  /** The setup state key and id suffix of the confirmed transaction. */
  confirmed: string;
  suffix: string;
  sign(transaction: DreddTransaction, settings: Settings, mode: AuthMode): void;
  /** The body of the setup's initiate of a transaction of this id. */
  initiate(id: string): unknown;
  /** Whether the setup signs its call of the sandbox's confirm control. */
  signedConfirm: boolean;
  /** Edits that aim the request of each operation at a transaction id. */
  at: { initiate(id: string): Edit; status(id: string | undefined): Edit; refund(id: string): Edit };
}

/** The sandbox's approved test user. */
const { phoneNumber } = APPROVED_TEST_USER;

/** Sets one field of the JSON body Dredd will send (the document's example keeps the others). */
const withField = (field: string, id: string | undefined): Edit => edit.editJson((body) => (body[field] = id));

/** A POST of the setup (`value` undefined: no body), signed as the flow signs a transaction. */
function signedCall(flow: Flow, kit: Kit, path: string, value?: unknown): Promise<SetupResponse> {
  const body = value === undefined ? undefined : JSON.stringify(value);
  // The web signature covers the path as sent, with the server URL's path prefix.
  const fullPath = `${new URL(kit.settings.server).pathname.replace(/\/$/, '')}${path}`;
  const transaction = { fullPath, request: { method: 'POST', uri: path, headers: {}, body } } as DreddTransaction;
  flow.sign(transaction, kit.settings, 'valid');
  return kit.call('POST', path, { body, headers: transaction.request.headers });
}

const sdkId = (id: string | undefined): Edit => withField('merchantTransactionId', id);
/** Transactions made by the setup are of this amount; the document's refund example is less. */
const SDK_AMOUNT = 250000;

const SDK: Flow = {
  name: 'sdk',
  paths: {
    initiate: '/merchant/credit/initiateTransaction',
    status: '/merchant/credit/checkTransactionStatus',
    refund: '/merchant/credit/refundTransaction',
  },
  created: 201,
  confirmed: 'confirmedId',
  suffix: 'confirmed',
  sign: setSdkSignature,
  initiate: (id) => ({ merchantTransactionId: id, userPhoneNumber: phoneNumber, userId: 'contract_kit', amount: SDK_AMOUNT }),
  signedConfirm: true,
  at: { initiate: sdkId, status: sdkId, refund: sdkId },
};

/** Small, so that the amount left after the first refund is known. */
const WEB_AMOUNT = 150000;
const WEB_REFUND_AMOUNT = 1000;

const WEB: Flow = {
  name: 'web',
  paths: { initiate: '/api/transaction', status: '/api/transaction/status', refund: '/api/refund' },
  created: 200,
  confirmed: 'refundableId',
  suffix: 'refundable',
  sign: setWebSignature,
  initiate: (id) => ({ id, amount: WEB_AMOUNT, user: { name: 'Contract Kit', phoneNumber } }),
  signedConfirm: false,
  at: {
    initiate: (id) => withField('id', id),
    status: (id) => (transaction) => edit.setQuery(transaction, id === undefined ? '' : `id=${encodeURIComponent(id)}`),
    refund: (transactionId) => (transaction) => edit.setJsonBody(transaction, { transactionId, amount: WEB_REFUND_AMOUNT }),
  },
};

/** The web status answer names the transaction asked for and carries its status signature (D22). */
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

/** Initiates `<run>_existing` and a second transaction that the sandbox's test control confirms. */
async function setup(flow: Flow, kit: Kit): Promise<void> {
  const existing = kit.id('existing');
  const first = await signedCall(flow, kit, flow.paths.initiate, flow.initiate(existing));
  if (first.status === flow.created) kit.state.existingId = existing;
  else kit.miss('existingId', unexpected(`initiating ${existing}`, first));

  const id = kit.id(flow.suffix);
  const second = await signedCall(flow, kit, flow.paths.initiate, flow.initiate(id));
  if (second.status !== flow.created) {
    kit.miss(flow.confirmed, unexpected(`initiating ${id}`, second));
    return;
  }
  const path = `/sandbox/${flow.name}/transactions/${encodeURIComponent(id)}/confirm`;
  const response = await (flow.signedConfirm ? signedCall(flow, kit, path) : kit.call('POST', path));
  if (response.status >= 200 && response.status < 300) kit.state[flow.confirmed] = id;
  else if (response.status === 404 || response.status === 405) kit.state.noConfirmControl = true;
  else kit.miss(flow.confirmed, unexpected(`POST ${path}`, response));
}

function plan(flow: Flow, kit: Kit, op: Operation): Plan {
  const { paths, at } = flow;
  const unknown = kit.id('unknown');
  const valid = (change: Edit, expectCode?: string): Plan => ({ auth: 'valid', edit: change, expectCode });
  const wrong = (change: Edit): Plan => ({ auth: 'wrong', expectCode: 'AUTHORIZATION_FAILED', edit: change });
  const large = (change: Edit): Plan => valid(edit.all(change, edit.padBodyOverLimit), 'PAYLOAD_TOO_LARGE');
  switch (`${op.path} ${Number(op.status)}`) {
    case `${paths.initiate} ${flow.created}`:
      return valid(at.initiate(kit.id('new')));
    case `${paths.initiate} 400`:
      return valid(at.initiate(kit.need('existingId')), 'DUPLICATE_TRANSACTION_ID');
    case `${paths.initiate} 401`:
      return wrong(at.initiate(kit.id('unauthorized')));
    case `${paths.initiate} 413`:
      return large(at.initiate(kit.id('large')));
    case `${paths.status} 200`: {
      const id = kit.need('existingId');
      return flow === WEB ? { ...valid(at.status(id)), check: statusAnswerCheck(kit, id) } : valid(at.status(id));
    }
    case `${paths.status} 400`:
      // SDK: an unknown id; web: no id at all (a schema violation).
      return flow === WEB
        ? { ...valid(at.status(undefined), 'BAD_REQUEST'), invalid: true }
        : valid(at.status(unknown), 'NO_SUCH_TRANSACTION');
    case `${paths.status} 401`:
      return wrong(at.status(kit.state.existingId || unknown));
    case `${paths.status} 404`: // web only
      return valid(at.status(unknown), 'NO_SUCH_TRANSACTION');
    case `${paths.status} 413`: // SDK only
      return large(at.status(unknown));
    case `${paths.refund} 200`:
      if (kit.state.noConfirmControl) {
        const control = `POST /sandbox/${flow.name}/transactions/{id}/confirm`;
        return { skip: `200: needs a transaction confirmed by a user (the server has no test control ${control})` };
      }
      return valid(at.refund(kit.need(flow.confirmed)));
    case `${paths.refund} 400`:
      return valid(at.refund(unknown), 'NO_SUCH_TRANSACTION');
    case `${paths.refund} 401`:
      return wrong(at.refund(kit.state[flow.confirmed] || unknown));
    case `${paths.refund} 413`:
      return large(at.refund(flow === WEB ? kit.state[flow.confirmed] || unknown : unknown));
    default:
      return genericPlan(kit, op);
  }
}

function familyOf(flow: Flow): FamilyModule {
  return {
    codeField: 'message',
    authenticate(kit, transaction, op, mode) {
      if (!isPublic(kit, op)) flow.sign(transaction, kit.settings, mode);
    },
    setup: (kit) => setup(flow, kit),
    plan: (kit, op) => plan(flow, kit, op),
  };
}

export const sdk = familyOf(SDK);
export const web = familyOf(WEB);
