/**
 * HTTP Basic for the gateway and extras families: parsing the header, the kinds of credentials the
 * sandbox issues, and an `authenticate` function for routes. Credentials are compared in constant
 * time (config.ts); a header value seen lately is not parsed or hashed again (a bounded cache of
 * the values with their credentials and digests, below).
 *
 * A 401 says which kind of credentials the endpoint takes and, when the request carried valid
 * credentials of another kind (Merchant API credentials on a Transactional API endpoint, extras
 * credentials on the gateway, ...), which kind they are. It never says whether a username or a
 * password was right, and never repeats what was sent.
 */
import {
  credentialsEqual,
  partEquals,
  PresentedCredentials,
  secretDigest,
  type BasicCredentials,
  type SandboxConfig,
} from './config.js';
import type { ErrorHelpers } from './errors.js';
import { RecentValues } from './recent-values.js';
import { knownPartners } from './families/partner.js';
import type { AuthResult, IncomingRequest } from './router.js';

/**
 * Header values parsed lately, each with its credentials (and their digests, once compared): the
 * same client sends the same header on every request. At most {@link PRESENTED_KEPT}, the least
 * recently used dropped first, so a client sending ever new values costs a parse and a digest per
 * request, as without the cache, and never more memory. Only well-formed values are kept. The map
 * is keyed by the header as sent; it is never logged or shown.
 */
const PRESENTED_KEPT = 1024;
const presented = new RecentValues<PresentedCredentials>(PRESENTED_KEPT);

/** The credentials of an `Authorization: Basic ...` header, or undefined when absent or malformed. */
export function parseBasicAuthorization(header: string | undefined): BasicCredentials | undefined {
  if (header === undefined) return undefined;
  const known = presented.get(header);
  if (known !== undefined) return known;
  const match = /^Basic[ ]+([A-Za-z0-9+/]+={0,2})[ ]*$/i.exec(header);
  if (match === null) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  const credentials = new PresentedCredentials(decoded.slice(0, colon), decoded.slice(colon + 1));
  presented.add(header, credentials);
  return credentials;
}

/** A kind of HTTP Basic credentials the sandbox issues. */
export interface CredentialKind {
  /** The realm of `WWW-Authenticate`. */
  readonly realm: string;
  /** What the credentials are, to end a sentence: `Merchant API credentials`. */
  readonly name: string;
  /** What an endpoint taking them needs, to end "This endpoint takes ...". */
  readonly wanted: string;
}

export const MERCHANT_API_CREDENTIALS: CredentialKind = {
  realm: 'paylater Merchant API',
  name: 'Merchant API credentials',
  wanted: "the payment gateway's Merchant API credentials (HTTP Basic)",
};

export const TRANSACTIONAL_API_CREDENTIALS: CredentialKind = {
  realm: 'paylater Transactional API',
  name: "a merchant's Transactional API credentials",
  wanted:
    "the merchant's Transactional API credentials (HTTP Basic), read from merchant.basicAuthDetails once the merchant is enabled",
};

const EXTRAS_CREDENTIALS: CredentialKind = {
  realm: 'paylater extras',
  name: 'extras credentials',
  wanted:
    "the extras credentials issued by the operator, or the direct integration's partner id and private key as username:password (HTTP Basic)",
};

type Recognise = (credentials: BasicCredentials) => boolean;

/** Every kind of credentials of one sandbox, to tell a caller which kind it sent by mistake. */
export class CredentialKinds {
  private readonly kinds = new Map<CredentialKind, Recognise>();

  /** Adds a kind (once; a second call for the same kind is ignored). */
  add(kind: CredentialKind, recognise: Recognise): void {
    if (!this.kinds.has(kind)) this.kinds.set(kind, recognise);
  }

  /** The kind, other than `except`, that these credentials are valid for. */
  identify(credentials: BasicCredentials, except: CredentialKind): CredentialKind | undefined {
    for (const [kind, recognise] of this.kinds) {
      if (kind !== except && recognise(credentials)) return kind;
    }
    return undefined;
  }
}

const registries = new WeakMap<SandboxConfig, CredentialKinds>();

/**
 * The kinds of credentials of the sandbox with this configuration: the fixed Merchant API and
 * extras credentials, and whatever a family adds (the gateway adds the Transactional API kind).
 */
export function credentialKinds(config: SandboxConfig): CredentialKinds {
  let kinds = registries.get(config);
  if (kinds === undefined) {
    kinds = new CredentialKinds();
    kinds.add(MERCHANT_API_CREDENTIALS, (credentials) => credentialsEqual(credentials, config.merchantApi));
    kinds.add(EXTRAS_CREDENTIALS, (credentials) => credentialsEqual(credentials, config.extras));
    registries.set(config, kinds);
  }
  return kinds;
}

/**
 * An `authenticate` for routes secured by HTTP Basic credentials of one kind. `identify` maps valid
 * credentials to a principal (or undefined when they are not accepted); use
 * {@link credentialsEqual} inside it. `kinds`, when given, names another kind the credentials are
 * valid for in the 401.
 */
export function basicAuth<P>(
  errors: ErrorHelpers,
  kind: CredentialKind,
  identify: (credentials: BasicCredentials) => P | undefined,
  kinds?: CredentialKinds,
): (request: IncomingRequest) => AuthResult<P> {
  const fail = (text: string): AuthResult<P> => {
    const reply = errors.unauthorized(text);
    reply.headers = { ...reply.headers, 'WWW-Authenticate': `Basic realm="${kind.realm}", charset="UTF-8"` };
    return { ok: false, reply };
  };
  return (request) => {
    const header = request.header('authorization');
    const credentials = parseBasicAuthorization(header);
    if (credentials === undefined) {
      if (header === undefined || header.trim() === '') {
        return fail(`Missing HTTP Basic credentials: this endpoint takes ${kind.wanted}.`);
      }
      if (!/^Basic(\s|$)/i.test(header.trim())) {
        return fail(`The Authorization header is not HTTP Basic: this endpoint takes ${kind.wanted}.`);
      }
      return fail(
        `Malformed HTTP Basic credentials: send "Basic " and the base64 of username:password. This endpoint takes ${kind.wanted}.`,
      );
    }
    const principal = identify(credentials);
    if (principal !== undefined) return { ok: true, principal };
    const other = kinds?.identify(credentials, kind);
    if (other !== undefined) return fail(`This endpoint takes ${kind.wanted}; these are ${other.name}.`);
    return fail(`Invalid HTTP Basic credentials: this endpoint takes ${kind.wanted}.`);
  };
}

/** Expected credentials as the digests {@link partEquals} compares, made once. */
interface CredentialDigests {
  username: Buffer;
  password: Buffer;
}

function digestsOf(credentials: BasicCredentials): CredentialDigests {
  return { username: secretDigest(credentials.username), password: secretDigest(credentials.password) };
}

/** Whether `received` are the credentials of `expected` (both parts always compared, in constant time). */
function matchesDigests(received: BasicCredentials, expected: CredentialDigests): boolean {
  const username = partEquals(received, 'username', expected.username);
  const password = partEquals(received, 'password', expected.password);
  return username && password;
}

/** An `identify` for one fixed pair of credentials. */
export function fixedCredentials(expected: BasicCredentials): (credentials: BasicCredentials) => true | undefined {
  const digests = digestsOf(expected);
  return (credentials) => (matchesDigests(credentials, digests) ? true : undefined);
}

/**
 * The `authenticate` of the extras: the operator's extras pair, or a known partner's
 * `partnerId:privateKey` (the service's own UPI sample calls the extras' host that way). Every
 * pair is compared, in constant time, whichever matches.
 */
export function extrasAuth(config: SandboxConfig, errors: ErrorHelpers): (request: IncomingRequest) => AuthResult<true> {
  const accepted: CredentialDigests[] = [
    config.extras,
    ...knownPartners(config).map((partner) => ({ username: partner.id, password: partner.privateKey })),
  ].map(digestsOf);
  const identify = (credentials: BasicCredentials): true | undefined => {
    let found = false;
    for (const expected of accepted) found = matchesDigests(credentials, expected) || found;
    return found ? true : undefined;
  };
  return basicAuth(errors, EXTRAS_CREDENTIALS, identify, credentialKinds(config));
}
