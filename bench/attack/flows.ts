/**
 * The requests the attacks make, with the sandbox's published test credentials: signed SDK and web
 * initiates (src/signature.ts), a gateway merchant onboarded as bench/soak.ts does it, gateway
 * transactions, and whether an error answer is in its family's format.
 */
import { Agent } from 'node:http';
import { sdkSignature, webSignature } from '../../src/signature.js';
import { onboard, target } from '../soak.js';
import { request, type Reply, type RequestOptions } from './http.js';
import { rawRequest } from './pipeline.js';

const PARTNER = { id: 'partner_test', key: 'test_private_key' };
export const MERCHANT_API = `Basic ${Buffer.from('pg_test:pg_test_secret').toString('base64')}`;
export const EXTRAS = `Basic ${Buffer.from('extras_test:extras_test_secret').toString('base64')}`;
/** Approved: a gateway transaction stays pending (no webhook at once). */
const APPROVED = '+919000000001';
/** Risk-declined: a gateway transaction is created FAILED, and its webhook is sent at once. */
export const DECLINED = '+919000000002';
const DEVICE = { userAgent: 'attack', ipAddress: '127.0.0.1' };
/** The sandbox's body limit (D24): bodies the attacks build stay just under it. */
export const BODY_LIMIT = 1024 * 1024;

/** A keep-alive pool of `sockets` connections to `base`. */
export function pool(sockets: number): Agent {
  return new Agent({ keepAlive: true, maxSockets: sockets });
}

/** The raw bytes of an SDK initiate (for pipeline.ts). */
export function rawSdkInitiate(id: string): string {
  const body = JSON.stringify({ merchantTransactionId: id, userPhoneNumber: APPROVED, userId: 'u_attack', amount: 250_000 });
  return rawRequest('POST', '/merchant/credit/initiateTransaction', { 'X-Partnerid': PARTNER.id, 'X-Signature': sdkSignature(body, PARTNER.key) }, body);
}

/** The raw bytes of a gateway transaction of a risk-declined user: created FAILED, its webhook at once. */
export function rawDeclinedTransaction(authorization: string, id: string): string {
  const body = `{"transaction":{"id":${JSON.stringify(id)},"amount":10000},"user":{"name":"Attack","phoneNumber":"${DECLINED}"},"deviceInformation":${JSON.stringify(DEVICE)}}`;
  return rawRequest('POST', '/api/merchant/transaction', { Authorization: authorization }, body);
}

export function sdkInitiate(base: string, id: string, options: RequestOptions = {}, partnerId = PARTNER.id): Promise<Reply> {
  const body = JSON.stringify({ merchantTransactionId: id, userPhoneNumber: APPROVED, userId: 'u_attack', amount: 250_000 });
  return request(base, 'POST', '/merchant/credit/initiateTransaction', {
    ...options,
    headers: { 'X-Partnerid': partnerId, 'X-Signature': sdkSignature(body, PARTNER.key) },
    body,
  });
}

export function sdkConfirm(base: string, id: string, options: RequestOptions = {}): Promise<Reply> {
  return request(base, 'POST', `/sandbox/sdk/transactions/${encodeURIComponent(id)}/confirm`, options);
}

/** A web initiate whose body is `{"id", "amount", "user", "notes": <notes>}`, `notes` as given (JSON text). */
export function webInitiate(base: string, id: string, notes: string, options: RequestOptions = {}): Promise<Reply> {
  const body = `{"id":${JSON.stringify(id)},"amount":150000,"user":{"name":"Attack","phoneNumber":"${APPROVED}"},"notes":${notes}}`;
  return request(base, 'POST', '/api/transaction', {
    ...options,
    headers: { 'X-Partner-Id': PARTNER.id, 'X-Signature': webSignature(body, '/api/transaction', PARTNER.key) },
    body,
  });
}

/** A gateway transaction; `transaction` and `createConfiguration` are merged into the body. */
export function gatewayCreate(
  base: string,
  authorization: string,
  fields: { id: string; phone: string; notes?: string; webhookUrl?: string },
  options: RequestOptions = {},
): Promise<Reply> {
  const configuration = fields.webhookUrl === undefined ? '' : `,"createConfiguration":{"webhookUrl":${JSON.stringify(fields.webhookUrl)}}`;
  const notes = fields.notes === undefined ? '' : `,"notes":${fields.notes}`;
  const body =
    `{"transaction":{"id":${JSON.stringify(fields.id)},"amount":10000${notes}},` +
    `"user":{"name":"Attack","phoneNumber":"${fields.phone}"},"deviceInformation":${JSON.stringify(DEVICE)}${configuration}}`;
  return request(base, 'POST', '/api/merchant/transaction', { ...options, headers: { Authorization: authorization }, body });
}

/** An enabled gateway merchant (bench/soak.ts's onboarding); its Transactional API Basic header. */
export async function merchant(base: string, webhookUrl: string | undefined, run: string): Promise<string> {
  const to = target(base, 1);
  try {
    return await onboard(to, webhookUrl, run);
  } finally {
    to.agent.destroy();
  }
}

/** A new short id for this run. */
export const runId = (prefix: string) => `${prefix}${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;

/**
 * Whether an answer is accepted (2xx) or refused with a 4xx in its family's error format:
 * `{ message: <CODE>, detail? }` for web and SDK (D03), `{ errorCode, message }` for the others (D02).
 * Otherwise what is wrong, for a reason.
 */
export function answerProblem(reply: Reply, family: 'messageError' | 'apiError'): string | undefined {
  if (reply.status === 0) return `no answer (${reply.error ?? 'closed'})`;
  if (reply.status >= 200 && reply.status < 300) return undefined;
  if (reply.status >= 500) return `answered ${reply.status}`;
  if (reply.status < 400) return `answered ${reply.status}`;
  let body: unknown;
  try {
    body = JSON.parse(reply.body);
  } catch {
    return `answered ${reply.status} without a JSON body`;
  }
  const fields = body as Record<string, unknown> | null;
  const ok =
    fields !== null &&
    typeof fields === 'object' &&
    (family === 'messageError' ? typeof fields.message === 'string' : typeof fields.errorCode === 'string' && typeof fields.message === 'string');
  return ok ? undefined : `answered ${reply.status} not in the ${family} format`;
}

/** `{"a":[{},{},...]}` (object) or `[{},{},...]` (array), `bytes` long or a little shorter. */
export function emptyObjects(bytes: number, shape: 'object' | 'array'): string {
  // 3 bytes an object, and the brackets: `[` + `{},` x (n-1) + `{}]` is 3n + 1 bytes; `{"a":...}` 6 more.
  const overhead = shape === 'object' ? 7 : 1;
  const count = Math.max(1, Math.floor((bytes - overhead) / 3));
  const list = `[${'{},'.repeat(count - 1)}{}]`;
  return shape === 'object' ? `{"a":${list}}` : list;
}

/** Whether the sandbox has no pending webhook delivery. */
export async function deliveriesSettled(base: string): Promise<boolean> {
  const reply = await request(base, 'GET', '/sandbox/webhooks/deliveries?status=pending&limit=1', { timeoutMs: 10_000 });
  if (reply.status !== 200) return false;
  try {
    return (JSON.parse(reply.body) as { deliveries: unknown[] }).deliveries.length === 0;
  } catch {
    return false;
  }
}

export function advance(base: string, ms: number): Promise<Reply> {
  return request(base, 'POST', '/sandbox/clock/advance', { body: JSON.stringify({ ms }), timeoutMs: 30_000 });
}
