/**
 * Signatures of the pay-later service: compute them, and verify them in constant time.
 *
 * Every signature is the standard base64 (with padding) of a raw SHA-256 digest over a
 * concatenation that ends with the private key, so it always matches
 * {@link SIGNATURE_PATTERN}:
 *
 * - web-initiated flow requests: `body + pathAndQuery + privateKey` ({@link webSignature});
 * - SDK-flow requests and webhooks, and gateway webhooks keyed with the merchant's Transactional
 *   API password: `body + privateKey` ({@link sdkSignature});
 * - browser callbacks, the web status-check answer and the web webhook (changed in 2.0.0):
 *   `transactionId + status + privateKey`, with no separator ({@link statusSignature}).
 *
 * Strings are hashed as UTF-8 without any normalisation; a lone UTF-16 surrogate in a string is
 * encoded as U+FFFD, so pass the body as bytes to sign exactly what travels on the wire.
 */
import { createHash, hash, timingSafeEqual } from 'node:crypto';
import { types } from 'node:util';

/** The exact form of every signature: 32 digest bytes in standard base64 with padding. */
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

const SIGNATURE_LENGTH = 44;

/** Web-initiated flow: base64(SHA-256(body + pathAndQuery + privateKey)). */
export function webSignature(
  body: SignatureBody,
  pathAndQuery: string,
  privateKey: string,
): string {
  return sha256Base64(body, [requireString('pathAndQuery', pathAndQuery), key(privateKey)]);
}

/** SDK flow and gateway webhooks: base64(SHA-256(body + privateKey)). */
export function sdkSignature(body: SignatureBody, privateKey: string): string {
  return sha256Base64(body, [key(privateKey)]);
}

/**
 * Callbacks, status answer and web webhook: base64(SHA-256(transactionId + status + privateKey)),
 * the three joined without a separator, as the service's integrations verify it.
 */
export function statusSignature(transactionId: string, status: string, privateKey: string): string {
  return statusDigest(transactionId, status, privateKey);
}

/**
 * True when `signature` is the web signature of this request. `signature` is untrusted input:
 * any value that is not a string of that exact form gives false, without throwing. A wrong
 * type of the other arguments is a programming error and throws {@link SignatureArgumentError}.
 */
export function verifyWebSignature(
  signature: unknown,
  body: SignatureBody,
  pathAndQuery: string,
  privateKey: string,
): boolean {
  return matches(signature, sha256Base64(body, [requireString('pathAndQuery', pathAndQuery), key(privateKey)]));
}

/** True when `signature` is the SDK signature of `body`; see {@link verifyWebSignature}. */
export function verifySdkSignature(
  signature: unknown,
  body: SignatureBody,
  privateKey: string,
): boolean {
  return matches(signature, sha256Base64(body, [key(privateKey)]));
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

function statusDigest(transactionId: string, status: string, privateKey: string): string {
  return sha256Base64(requireString('transactionId', transactionId), [requireString('status', status), key(privateKey)]);
}

/**
 * Bodies of bytes up to this size are copied once and hashed in one call, which is cheaper than a
 * Hash object; larger ones are hashed incrementally, without a copy.
 */
const ONE_SHOT_BYTES = 16 * 1024;

/** A string whose last code unit is a high surrogate: joined to a next string, it would pair. */
function endsInHighSurrogate(text: string): boolean {
  const last = text.charCodeAt(text.length - 1);
  return last >= 0xd800 && last <= 0xdbff;
}

/**
 * base64(SHA-256(body + rest...)), strings as UTF-8. Joining the strings first and encoding once
 * gives the same bytes as encoding each, unless a part ends in a lone high surrogate (joined, it
 * would pair with the next part): then, and for large byte bodies, the parts are hashed one by one.
 */
function sha256Base64(body: SignatureBody, rest: readonly string[]): string {
  const joinable = rest.every((part, index) => index === rest.length - 1 || !endsInHighSurrogate(part));
  if (typeof body === 'string') {
    if (joinable && !endsInHighSurrogate(body)) return hash('sha256', body + rest.join(''), 'base64');
  } else {
    const bytes = bodyBytes(body);
    if (joinable && bytes.byteLength <= ONE_SHOT_BYTES) {
      return hash('sha256', Buffer.concat([bytes, Buffer.from(rest.join(''), 'utf8')]), 'base64');
    }
  }
  const incremental = createHash('sha256');
  if (typeof body === 'string') incremental.update(body, 'utf8');
  else incremental.update(bodyBytes(body));
  for (const part of rest) incremental.update(part, 'utf8');
  return incremental.digest('base64');
}

function bodyBytes(body: unknown): Uint8Array {
  if (types.isUint8Array(body)) return body;
  if (types.isArrayBuffer(body)) return new Uint8Array(body);
  throw new SignatureArgumentError('body', `body must be a string, a Uint8Array or an ArrayBuffer (got ${describe(body)})`);
}

/** The private key, checked: a string, not empty. */
function key(privateKey: unknown): string {
  if (typeof privateKey !== 'string') {
    throw new SignatureArgumentError('privateKey', `privateKey must be a string (got ${describe(privateKey)})`);
  }
  if (privateKey.length === 0) {
    throw new SignatureArgumentError('privateKey', 'privateKey must not be empty');
  }
  return privateKey;
}

// The comparison is of the base64 strings themselves, code unit by code unit: the service's
// signature is canonical base64 of a 32-byte digest, so any other candidate (hex, base64url, a
// non-canonical last character, a different length) differs from it and is refused without being
// decoded. Both strings are written as UTF-16 into two scratch buffers (verification is synchronous,
// so one pair serves every call) and compared with timingSafeEqual: constant time, no allocation.
const candidateUnits = Buffer.alloc(SIGNATURE_LENGTH * 2);
const expectedUnits = Buffer.alloc(SIGNATURE_LENGTH * 2);

/** Compares a candidate signature with the expected one (base64) in constant time. */
function matches(candidate: unknown, expected: string): boolean {
  if (typeof candidate !== 'string' || candidate.length !== SIGNATURE_LENGTH) return false;
  candidateUnits.write(candidate, 'utf16le');
  expectedUnits.write(expected, 'utf16le');
  return timingSafeEqual(candidateUnits, expectedUnits);
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
