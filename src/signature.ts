/**
 * Signatures of the pay-later service: compute them, and verify them in constant time.
 *
 * Every signature is the standard base64 (with padding) of a raw SHA-256 digest over a
 * concatenation that ends with the private key (D28), so it always matches
 * {@link SIGNATURE_PATTERN}:
 *
 * - web-initiated flow requests: `body + pathAndQuery + privateKey` ({@link webSignature});
 * - SDK-flow requests and webhooks, and gateway webhooks keyed with the merchant's Transactional
 *   API password (D23): `body + privateKey` ({@link sdkSignature});
 * - browser callbacks, the web status-check answer and the web webhook (D22):
 *   `transactionId + "|" + status + privateKey` ({@link statusSignature}).
 *
 * Strings are hashed as UTF-8 without any normalisation; a lone UTF-16 surrogate in a string is
 * encoded as U+FFFD, so pass the body as bytes to sign exactly what travels on the wire.
 */
import { createHash, timingSafeEqual, type Hash } from 'node:crypto';
import { types } from 'node:util';

/** The exact form of every signature (D28): 32 digest bytes in standard base64 with padding. */
export const SIGNATURE_PATTERN = /^[A-Za-z0-9+/]{43}=$/;

/** A body to sign: a string (hashed as UTF-8) or the bytes exactly as sent. */
export type SignatureBody = string | Uint8Array | ArrayBuffer;

/**
 * A signature function was called with an argument of the wrong type (or an empty key).
 * The message names the argument and the type received, never its value.
 */
export class SignatureArgumentError extends TypeError {
  override readonly name = 'SignatureArgumentError';

  constructor(
    /** The name of the offending parameter, e.g. `privateKey`. */
    readonly argument: string,
    message: string,
  ) {
    super(message);
  }
}

const DIGEST_BYTES = 32;
const SIGNATURE_LENGTH = 44;
// A private copy, so that changes to the exported object cannot weaken verification.
const FORM = new RegExp(SIGNATURE_PATTERN.source);

/** Web-initiated flow: base64(SHA-256(body + pathAndQuery + privateKey)). */
export function webSignature(
  body: SignatureBody,
  pathAndQuery: string,
  privateKey: string,
): string {
  return webDigest(body, pathAndQuery, privateKey).toString('base64');
}

/** SDK flow and gateway webhooks (D23): base64(SHA-256(body + privateKey)). */
export function sdkSignature(body: SignatureBody, privateKey: string): string {
  return sdkDigest(body, privateKey).toString('base64');
}

/** Callbacks, status answer and web webhook (D22): base64(SHA-256(transactionId + "|" + status + privateKey)). */
export function statusSignature(transactionId: string, status: string, privateKey: string): string {
  return statusDigest(transactionId, status, privateKey).toString('base64');
}

/**
 * True when `signature` is the web signature of this request. `signature` is untrusted input:
 * any value that is not a string of the exact D28 form gives false, without throwing. A wrong
 * type of the other arguments is a programming error and throws {@link SignatureArgumentError}.
 */
export function verifyWebSignature(
  signature: unknown,
  body: SignatureBody,
  pathAndQuery: string,
  privateKey: string,
): boolean {
  return matches(signature, webDigest(body, pathAndQuery, privateKey));
}

/** True when `signature` is the SDK signature of `body`; see {@link verifyWebSignature}. */
export function verifySdkSignature(
  signature: unknown,
  body: SignatureBody,
  privateKey: string,
): boolean {
  return matches(signature, sdkDigest(body, privateKey));
}

/** True when `signature` is the status signature of the pair; see {@link verifyWebSignature}. */
export function verifyStatusSignature(
  signature: unknown,
  transactionId: string,
  status: string,
  privateKey: string,
): boolean {
  return matches(signature, statusDigest(transactionId, status, privateKey));
}

function webDigest(body: SignatureBody, pathAndQuery: string, privateKey: string): Buffer {
  const hash = createHash('sha256');
  updateBody(hash, body);
  hash.update(requireString('pathAndQuery', pathAndQuery), 'utf8');
  return finish(hash, privateKey);
}

function sdkDigest(body: SignatureBody, privateKey: string): Buffer {
  const hash = createHash('sha256');
  updateBody(hash, body);
  return finish(hash, privateKey);
}

function statusDigest(transactionId: string, status: string, privateKey: string): Buffer {
  const hash = createHash('sha256');
  hash.update(requireString('transactionId', transactionId), 'utf8');
  hash.update('|', 'utf8');
  hash.update(requireString('status', status), 'utf8');
  return finish(hash, privateKey);
}

function updateBody(hash: Hash, body: unknown): void {
  if (typeof body === 'string') {
    hash.update(body, 'utf8');
  } else if (types.isUint8Array(body)) {
    hash.update(body);
  } else if (types.isArrayBuffer(body)) {
    hash.update(new Uint8Array(body));
  } else {
    throw new SignatureArgumentError(
      'body',
      `body must be a string, a Uint8Array or an ArrayBuffer (got ${describe(body)})`,
    );
  }
}

function finish(hash: Hash, privateKey: unknown): Buffer {
  if (typeof privateKey !== 'string') {
    throw new SignatureArgumentError(
      'privateKey',
      `privateKey must be a string (got ${describe(privateKey)})`,
    );
  }
  if (privateKey.length === 0) {
    throw new SignatureArgumentError('privateKey', 'privateKey must not be empty');
  }
  hash.update(privateKey, 'utf8');
  return hash.digest();
}

function matches(candidate: unknown, expected: Buffer): boolean {
  const decoded = decodeSignature(candidate);
  return decoded !== undefined && timingSafeEqual(decoded, expected);
}

/** The 32 digest bytes of a signature of the exact D28 form, else undefined. */
function decodeSignature(candidate: unknown): Buffer | undefined {
  if (
    typeof candidate !== 'string' ||
    candidate.length !== SIGNATURE_LENGTH ||
    !FORM.test(candidate)
  ) {
    return undefined;
  }
  const bytes = Buffer.from(candidate, 'base64');
  // 43 base64 characters carry 258 bits, of which the last 2 must be zero: requiring the
  // canonical encoding keeps exactly one accepted string per digest.
  if (bytes.length !== DIGEST_BYTES || bytes.toString('base64') !== candidate) {
    return undefined;
  }
  return bytes;
}

function requireString(argument: string, value: unknown): string {
  if (typeof value !== 'string') {
    throw new SignatureArgumentError(
      argument,
      `${argument} must be a string (got ${describe(value)})`,
    );
  }
  return value;
}

/** The type of a value for an error message; never the value itself. */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return `an object (${value.constructor?.name ?? 'no prototype'})`;
  return typeof value;
}
