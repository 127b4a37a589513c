/**
 * The partner of the direct integration (web and SDK flows): who it is, and the `authenticate`
 * functions that check its partner id header and request signature: a missing or unknown
 * partner id, a missing required signature or a well-formed signature that does not match is 401
 * AUTHORIZATION_FAILED; a signature that is not base64 of the 32 digest bytes at all (hex, base64url,
 * a trailing newline) is 400 BAD_REQUEST with a detail naming the expected form.
 */
import { SIGNATURE_PATTERN, verifySdkSignature, verifyWebSignature } from '../../signature.js';
import { timingSafeEqual } from 'node:crypto';
import { presentedDigest, secretDigest, type SandboxConfig } from '../config.js';
import type { ErrorHelpers } from '../errors.js';
import { PUBLISHED_TEST_PARTNER } from '../fixtures.js';
import type { AuthResult, IncomingRequest } from '../router.js';

export interface Partner {
  id: string;
  privateKey: string;
}

/**
 * The partners the sandbox knows: its own (the configured one) and, unless turned off, the
 * service's published test partner, which shares the webhook URL. The own partner comes
 * first, so a configured id equal to the published one keeps its own key.
 */
export function knownPartners(config: SandboxConfig): Partner[] {
  const { partner } = config;
  const own: Partner = { id: partner.id, privateKey: partner.privateKey };
  if (!config.publishedTestPartner || partner.id === PUBLISHED_TEST_PARTNER.id) return [own];
  return [own, { id: PUBLISHED_TEST_PARTNER.id, privateKey: PUBLISHED_TEST_PARTNER.privateKey }];
}

/** A known partner with the digest of its id, made once. */
interface KnownPartner {
  partner: Partner;
  idDigest: Buffer;
}

/**
 * The partner with this id, compared in constant time with every known id (their digests made once,
 * and the presented id's once per distinct value).
 */
function findPartner(known: readonly KnownPartner[], id: string): Partner | undefined {
  const digest = presentedDigest(id);
  let found: Partner | undefined;
  for (const candidate of known) {
    // Every candidate is compared, so the time does not tell which one matched.
    if (timingSafeEqual(digest, candidate.idDigest) && found === undefined) found = candidate.partner;
  }
  return found;
}

/**
 * The private key of the partner that made a transaction (its `partnerId`, a known id): it signs
 * the transaction's status signature and webhooks.
 */
export function partnerKey(config: SandboxConfig, partnerId: string): string {
  if (partnerId === config.partner.id || !config.publishedTestPartner) return config.partner.privateKey;
  return partnerId === PUBLISHED_TEST_PARTNER.id ? PUBLISHED_TEST_PARTNER.privateKey : config.partner.privateKey;
}

/** How each flow names its partner id header and computes its request signature. */
const FLOWS = {
  'X-Partnerid': {
    flow: 'the SDK flow',
    otherHeader: 'X-Partner-Id',
    otherFlow: 'the web flow',
    recipe: 'base64(SHA-256(the exact body bytes + your private key))',
  },
  'X-Partner-Id': {
    flow: 'the web flow',
    otherHeader: 'X-Partnerid',
    otherFlow: 'the SDK flow',
    recipe: 'base64(SHA-256(the exact body bytes + the path and query exactly as sent + your private key))',
  },
} as const;

/** Whether a request must carry `X-Signature`, or may leave it out (it is verified when present). */
export type SignatureRule = 'required' | 'optional';

/** The detail of a 400 for an `X-Signature` that is not base64 of the 32 digest bytes. */
export function malformedSignatureDetail(signature: string): string {
  return (
    `X-Signature is malformed (${signature.length} characters): expected the standard base64 of the 32-byte SHA-256 digest, ` +
    '44 characters of A-Z, a-z, 0-9, "+" and "/" ending in "=". A hex digest, base64url or a trailing newline ' +
    "(Python's base64.encodebytes adds one; use base64.b64encode) is not accepted."
  );
}

/**
 * Checks `<partnerHeader>` and `X-Signature`. `verify` says whether a well-formed signature matches
 * the request for the partner's key. A failure is 401 AUTHORIZATION_FAILED with a detail that says
 * which header is wrong and how the signature is computed, never a value sent, the key or the
 * expected value; a
 * signature not of that form is 400 BAD_REQUEST. With `signature: 'optional'` a request without
 * `X-Signature` is accepted on the partner id alone.
 */
function partnerAuth(
  config: SandboxConfig,
  errors: ErrorHelpers,
  partnerHeader: 'X-Partnerid' | 'X-Partner-Id',
  verify: (signature: string, request: IncomingRequest, partner: Partner) => boolean,
  mismatch: string,
  signatureRule: SignatureRule = 'required',
): (request: IncomingRequest) => AuthResult<Partner> {
  const fail = (detail: string): AuthResult<Partner> => ({ ok: false, reply: errors.unauthorized(detail) });
  const known = knownPartners(config).map((partner) => ({ partner, idDigest: secretDigest(partner.id) }));
  const { flow, otherHeader, otherFlow, recipe } = FLOWS[partnerHeader];
  return (request) => {
    const partnerId = request.header(partnerHeader);
    if (partnerId === undefined || partnerId === '') {
      if (nonEmpty(request.header(otherHeader))) {
        return fail(`${partnerHeader} is missing: ${flow} spells the partner id header ${partnerHeader} (${otherHeader} is ${otherFlow}'s).`);
      }
      if (nonEmpty(request.header('authorization'))) {
        return fail(
          `${partnerHeader} is missing: ${flow} takes no HTTP Basic credentials; send your partner id in ${partnerHeader} and the request signature in X-Signature.`,
        );
      }
      return fail(`${partnerHeader} is missing: send your partner id in ${partnerHeader}, and the request signature in X-Signature.`);
    }
    const partner = findPartner(known, partnerId);
    // The value is not repeated: a key pasted into the header by mistake must not come back.
    if (partner === undefined) {
      return fail(`${partnerHeader} is not a known partner id: send the partner id the sandbox prints on start (PAYLATER_PARTNER_ID).`);
    }
    const signature = request.header('X-Signature');
    if (signature === undefined || signature === '') {
      return signatureRule === 'optional'
        ? { ok: true, principal: partner }
        : fail(`X-Signature is missing: send ${recipe}, 44 characters of standard base64.`);
    }
    if (!SIGNATURE_PATTERN.test(signature)) {
      return { ok: false, reply: errors.badRequest(malformedSignatureDetail(signature)) };
    }
    if (!verify(signature, request, partner)) return fail(`${mismatch}: it must be ${recipe}.`);
    return { ok: true, principal: partner };
  };
}

function nonEmpty(value: string | undefined): boolean {
  return value !== undefined && value.trim() !== '';
}

/** SDK flow: X-Partnerid, and X-Signature over the raw body + key. */
export function sdkAuth(config: SandboxConfig, errors: ErrorHelpers) {
  return partnerAuth(
    config,
    errors,
    'X-Partnerid',
    (signature, request, partner) => verifySdkSignature(signature, request.rawBody, partner.privateKey),
    'X-Signature does not match the request body',
  );
}

/**
 * Web flow: X-Partner-Id, and X-Signature over the raw body + path and query as received + key;
 * the status check takes `signature: 'optional'`.
 */
export function webAuth(config: SandboxConfig, errors: ErrorHelpers, signatureRule: SignatureRule = 'required') {
  return partnerAuth(
    config,
    errors,
    'X-Partner-Id',
    (signature, request, partner) => verifyWebSignature(signature, request.rawBody, request.url, partner.privateKey),
    'X-Signature does not match the request body, path and query',
    signatureRule,
  );
}
