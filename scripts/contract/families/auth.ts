/**
 * Credentials of the four families, put on a Dredd request as the last step of its preparation.
 * The signatures are src/signature.ts's own functions, so the kit signs as the clients do.
 */
import { sdkSignature, webSignature } from '../../../src/signature.js';
import type { Kit } from '../kit.js';
import * as edit from '../request-edit.js';
import type { Settings } from '../settings.js';
import type { AuthMode, DreddTransaction, Operation } from '../types.js';

/** True when the operation requires no credentials (`security: []`, or only `{}`). */
export function isPublic(kit: Kit, op: Operation): boolean {
  return kit.operation(op.path, op.method)?.secured !== true;
}

export function basicValue(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}

/**
 * HTTP Basic with the given credentials, or when mode is 'wrong' with a password that is certainly
 * wrong, so that the header keeps its form (`user:password`).
 */
export function setBasic(transaction: DreddTransaction, credentials: { username: string; password: string }, mode: AuthMode): void {
  const password = mode === 'wrong' ? `${credentials.password}-wrong` : credentials.password;
  edit.setHeader(transaction, 'Authorization', basicValue(credentials.username, password));
}

/**
 * The partner's key, or when mode is 'wrong' a key that is certainly not the partner's: signing with
 * it gives a signature of the right form (so the request is not rejected as malformed) that the
 * service must refuse (401).
 */
function keyOf(settings: Settings, mode: AuthMode): string {
  return mode === 'wrong' ? `${settings.privateKey}-not-the-partner-key` : settings.privateKey;
}

/** SDK flow: X-Partnerid and X-Signature over the exact body. */
export function setSdkSignature(transaction: DreddTransaction, settings: Settings, mode: AuthMode): void {
  edit.setHeader(transaction, 'X-Partnerid', settings.partnerId);
  edit.setHeader(transaction, 'X-Signature', sdkSignature(transaction.request.body ?? '', keyOf(settings, mode)));
}

/** Web flow: X-Partner-Id and X-Signature over the exact body and the path and query as sent. */
export function setWebSignature(transaction: DreddTransaction, settings: Settings, mode: AuthMode): void {
  edit.setHeader(transaction, 'X-Partner-Id', settings.partnerId);
  edit.setHeader(transaction, 'X-Signature', webSignature(transaction.request.body ?? '', transaction.fullPath, keyOf(settings, mode)));
}
