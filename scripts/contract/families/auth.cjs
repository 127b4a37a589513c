'use strict';
/** Credentials of the four families, put on a Dredd request as the last step of its preparation. */
const { sdkSignature, webSignature, wrongKey } = require('../signing.cjs');
const edit = require('../request-edit.cjs');

/** True when the operation requires no credentials (`security: []`, or only `{}`). */
function isPublic(kit, op) {
  const security = kit.security(op.path, op.method);
  return security.length === 0 || security.some((requirement) => Object.keys(requirement).length === 0);
}

function basicValue(username, password) {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}

/** A password that is certainly wrong, so the Basic header keeps its form (`user:password`). */
function wrongPassword(password) {
  return `${password}-wrong`;
}

/** HTTP Basic with the given credentials, or with a wrong password when mode is 'wrong'. */
function setBasic(transaction, credentials, mode) {
  const password = mode === 'wrong' ? wrongPassword(credentials.password) : credentials.password;
  edit.setHeader(transaction, 'Authorization', basicValue(credentials.username, password));
}

/** SDK flow: X-Partnerid and X-Signature over the exact body. */
function setSdkSignature(transaction, settings, mode) {
  const key = mode === 'wrong' ? wrongKey(settings.privateKey) : settings.privateKey;
  edit.setHeader(transaction, 'X-Partnerid', settings.partnerId);
  edit.setHeader(transaction, 'X-Signature', sdkSignature(transaction.request.body || '', key));
}

/** Web flow: X-Partner-Id and X-Signature over the exact body and the path and query as sent. */
function setWebSignature(transaction, settings, mode) {
  const key = mode === 'wrong' ? wrongKey(settings.privateKey) : settings.privateKey;
  edit.setHeader(transaction, 'X-Partner-Id', settings.partnerId);
  edit.setHeader(transaction, 'X-Signature', webSignature(transaction.request.body || '', transaction.fullPath, key));
}

module.exports = { isPublic, basicValue, wrongPassword, setBasic, setSdkSignature, setWebSignature };
