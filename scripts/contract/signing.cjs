'use strict';
/**
 * The signature recipes of the pay-later service (D28), written again with node:crypto because
 * Dredd loads hook files with `require` and cannot import the TypeScript module src/signature.ts.
 * test/contract-kit.test.ts checks that these equal src/signature.ts on the shared test vectors.
 */
const { createHash } = require('node:crypto');

/** Web-initiated flow: base64(SHA-256(body + pathAndQuery + key)), strings as UTF-8. */
function webSignature(body, pathAndQuery, key) {
  return createHash('sha256').update(body, 'utf8').update(pathAndQuery, 'utf8').update(key, 'utf8').digest('base64');
}

/** SDK flow: base64(SHA-256(body + key)), strings as UTF-8. */
function sdkSignature(body, key) {
  return createHash('sha256').update(body, 'utf8').update(key, 'utf8').digest('base64');
}

/** Web status answer and callbacks (D22): base64(SHA-256(transactionId + status + key)), no separator. */
function statusSignature(transactionId, status, key) {
  return createHash('sha256').update(`${transactionId}${status}`, 'utf8').update(key, 'utf8').digest('base64');
}

/**
 * A key that is certainly not the partner's: signing with it gives a signature of the right form
 * (so the request is not rejected as malformed) that the service must refuse (401).
 */
function wrongKey(key) {
  return `${key}-not-the-partner-key`;
}

module.exports = { webSignature, sdkSignature, statusSignature, wrongKey };
