/**
 * Credentials of the four families, put on a Dredd request as the last step of its preparation.
 * The signatures are src/signature.ts's own functions, so the kit signs as the clients do.
 */
import { sdkSignature, webSignature } from '../../../src/signature.js';
import type { Kit } from '../kit.js';
import * as edit from '../request-edit.js';
import type { Settings } from '../settings.js';
import type { DreddTransaction, Operation } from '../types.js';

export type AuthMode = 'valid' | 'wrong';

/** True when the operation requires no credentials (`security: []`, or only `{}`). */
export function isPublic(kit: Kit, op: Operation): boolean {
  const security = kit.security(op.path, op.method);
  return security.length === 0 || security.some((requirement) => Object.keys(requirement).length === 0);
}

export function basicValue(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}

/** A password that is certainly wrong, so the Basic header keeps its form (`user:password`). */
export function wrongPassword(password: string): string {
  return `${password}-wrong`;
}

/**
 * A key that is certainly not the partner's: signing with it gives a signature of the right form
 * (so the request is not rejected as malformed) that the service must refuse (401).
 */
export function wrongKey(key: string): string {
  return `${key}-not-the-partner-key`;
}

/** HTTP Basic with the given credentials, or with a wrong password when mode is 'wrong'. */
export function setBasic(transaction: DreddTransaction, credentials: { username: string; password: string }, mode: AuthMode): void {
  const password = mode === 'wrong' ? wrongPassword(credentials.password) : credentials.password;
  edit.setHeader(transaction, 'Authorization', basicValue(credentials.username, password));
}

/** SDK flow: X-Partnerid and X-Signature over the exact body. */
export function setSdkSignature(transaction: DreddTransaction, settings: Settings, mode: AuthMode): void {
  const key = mode === 'wrong' ? wrongKey(settings.privateKey) : settings.privateKey;
  edit.setHeader(transaction, 'X-Partnerid', settings.partnerId);
  edit.setHeader(transaction, 'X-Signature', sdkSignature(transaction.request.body ?? '', key));
}

/** Web flow: X-Partner-Id and X-Signature over the exact body and the path and query as sent. */
export function setWebSignature(transaction: DreddTransaction, settings: Settings, mode: AuthMode): void {
  const key = mode === 'wrong' ? wrongKey(settings.privateKey) : settings.privateKey;
  edit.setHeader(transaction, 'X-Partner-Id', settings.partnerId);
  edit.setHeader(transaction, 'X-Signature', webSignature(transaction.request.body ?? '', transaction.fullPath, key));
}
