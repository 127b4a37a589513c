/**
 * HTTP Basic for the gateway and extras families: parsing the header, and an `authenticate`
 * function for routes. Credentials are compared in constant time (config.ts).
 */
import { credentialsEqual, type BasicCredentials } from './config.js';
import type { ErrorHelpers } from './errors.js';
import type { AuthResult, IncomingRequest } from './router.js';

/** The credentials of an `Authorization: Basic ...` header, or undefined when absent or malformed. */
export function parseBasicAuthorization(header: string | undefined): BasicCredentials | undefined {
  if (header === undefined) return undefined;
  const match = /^Basic[ ]+([A-Za-z0-9+/]+={0,2})[ ]*$/i.exec(header);
  if (match === null) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * An `authenticate` for routes secured by HTTP Basic. `identify` maps valid credentials to a
 * principal (or undefined when they are not accepted); use {@link credentialsEqual} inside it.
 */
export function basicAuth<P>(
  errors: ErrorHelpers,
  realm: string,
  identify: (credentials: BasicCredentials) => P | undefined,
): (request: IncomingRequest) => AuthResult<P> {
  return (request) => {
    const credentials = parseBasicAuthorization(request.header('authorization'));
    const principal = credentials === undefined ? undefined : identify(credentials);
    if (credentials === undefined || principal === undefined) {
      const reply = errors.unauthorized(
        credentials === undefined ? 'Missing or malformed HTTP Basic credentials.' : 'Invalid HTTP Basic credentials.',
      );
      reply.headers = { ...reply.headers, 'WWW-Authenticate': `Basic realm="${realm}", charset="UTF-8"` };
      return { ok: false, reply };
    }
    return { ok: true, principal };
  };
}

/** An `identify` for one fixed pair of credentials. */
export function fixedCredentials(expected: BasicCredentials): (credentials: BasicCredentials) => true | undefined {
  return (credentials) => (credentialsEqual(credentials, expected) ? true : undefined);
}
