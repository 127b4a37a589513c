/**
 * How the kit drives each documented response code. A plan says how to change the request before
 * it is sent; the family module makes one per transaction and falls back to these generic ones.
 *
 *   { skip: reason }                 do not send; the reason is printed in the summary
 *   { auth: 'valid' | 'wrong',       credentials to put on the request (as the last step)
 *     edit(transaction),             changes of body, path or query (before signing)
 *     expectCode,                    the error code the request was built to cause
 *     invalid: true,                 the request breaks the contract on purpose (a schema
 *                                    violation or a body over 1 MiB); a validating proxy in
 *                                    front of the server answers it itself
 *     check(real) -> string[] }      extra checks of the real response
 */
import type { Kit } from './kit.js';
import * as edit from './request-edit.js';
import type { Operation, Plan } from './types.js';

const NO_REQUEST_CAUSES: Record<number, string> = {
  500: '500 INTERNAL_SERVER_ERROR: no request can cause a service failure',
  502: '502: no request can cause a gateway failure',
  503: '503: no request can make the service unavailable',
  429: '429: the contract promises no rate limit (D24), so no request is sure to cause it',
};

/** Against a Prism mock: the same valid request, and `Prefer: code=NNN` chooses the response. */
export function mockPlan(op: Operation): Plan {
  return { auth: 'valid', prefer: `code=${op.status}` };
}

/**
 * The generic plan of a response code against a real server. `codes` maps a status to the error
 * code a family answers for the generic cause (e.g. { 401: 'AUTHORIZATION_FAILED' }).
 */
export function genericPlan(kit: Kit, op: Operation, codes: Record<number, string> = {}): Plan {
  const status = Number(op.status);
  const expectCode = codes[status];
  if (status >= 200 && status < 300) return { auth: 'valid', expectCode };
  const noCause = NO_REQUEST_CAUSES[status];
  if (noCause) return { skip: noCause };
  switch (status) {
    case 400: {
      const operation = kit.operation(op.path, op.method);
      // A body without the first required property of the request schema (a schema violation).
      const schema = operation?.requestSchema as { required?: unknown } | undefined;
      const field = Array.isArray(schema?.required) ? (schema.required[0] as string | undefined) : undefined;
      if (field !== undefined) {
        return {
          auth: 'valid',
          invalid: true,
          expectCode,
          edit(transaction) {
            const body = edit.jsonBody(transaction);
            if (!body || typeof body !== 'object') throw new Error(`${op.name}: no JSON body to remove '${field}' from`);
            delete body[field];
            edit.setJsonBody(transaction, body);
          },
        };
      }
      // An operation that takes neither a request body nor a parameter (GET /sdk.js, the configuration read).
      const noInput = operation === undefined || (operation.requestBody === undefined && operation.parameters.length === 0);
      return {
        skip: noInput
          ? '400: the operation takes no body and no parameter, so no request violates its schema; its 400 answers a malformed HTTP request (a repeated Authorization header, no Host), which the kit cannot send'
          : '400: the kit knows no request of this operation that violates the schema',
      };
    }
    case 401:
      return { auth: 'wrong', expectCode };
    case 413:
      return { auth: 'valid', invalid: true, edit: edit.padBodyOverLimit, expectCode };
    default:
      return { skip: `${status}: the kit knows no request that causes it on purpose` };
  }
}

/**
 * Against `prism proxy --errors`: Prism validates every request itself and answers an invalid one
 * with its own 422 (the server never sees it), and it forwards JSON bodies re-serialized, so a
 * body padded with whitespace loses its signature. A request invalid on purpose cannot be sent.
 */
export const PROXY_SKIP =
  'the request breaks the contract on purpose, and the validating proxy in front of the server (--proxy) ' +
  'answers such a request itself instead of forwarding it';
