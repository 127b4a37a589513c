/**
 * The two error formats of the contract, as reply builders:
 * - `apiError` (gateway and extras): `{ errorCode, message, details? }`;
 * - `messageError` (web and SDK): `{ message: <CODE>, detail? }`.
 * The `/sandbox/` endpoints use the `apiError` shape as well. Every code is one of the contract's
 * list (src/contract/error-codes.ts), so a code that the list lacks fails `tsc`.
 */
import type { components as GatewayComponents } from '../../generated/types/gateway.js';
import type { components as SdkComponents } from '../../generated/types/sdk.js';
import type { ErrorCode } from '../contract/error-codes.js';
import type { FamilyErrorFormat } from '../contract/families.js';
import { describeIssues, type ParameterLocation, type ValidationIssue } from './validation.js';

type GatewaySchemas = GatewayComponents['schemas'];
type SdkSchemas = SdkComponents['schemas'];

/** A family's error format, as its row of the contract's families says (src/contract/families.ts). */
export type ErrorFormat = FamilyErrorFormat;

/**
 * The gateway and extras error body, as generated. `errorCode` is widened to any code of the
 * list: the sandbox's own endpoints (`/sandbox/...`) answer codes of the sandbox's own conditions.
 */
type ApiErrorBody = Omit<GatewaySchemas['ApiError'], 'errorCode'> & { errorCode: string };

/** The web and SDK error body, as generated. */
type MessageErrorBody = SdkSchemas['MessageError'];

/** The statuses of error replies (a 2xx is never an error, so handlers' success replies stay checked). */
type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 408 | 409 | 410 | 413 | 415 | 422 | 429 | 431 | 500 | 502 | 503 | 504;

/** A reply carrying an error body of either format. */
export interface ErrorReply {
  status: ErrorStatus;
  body: ApiErrorBody | MessageErrorBody;
  headers?: Record<string, string>;
}

export interface ErrorHelpers {
  readonly format: ErrorFormat;
  /**
   * Any error. `code` is the machine code (`errorCode`, or `message` of the message format);
   * `text` is for a person (`message`, or `detail`); `details` only appear in the `apiError` format
   * (the message format folds them into `detail`).
   */
  error(status: ErrorStatus, code: ErrorCode, text: string, details?: ValidationIssue[]): ErrorReply;
  /** 400 BAD_REQUEST with a sentence. */
  badRequest(text: string, details?: ValidationIssue[]): ErrorReply;
  /** 400 BAD_REQUEST from validation issues of a location. */
  invalid(location: 'body' | ParameterLocation, issues: ValidationIssue[]): ErrorReply;
  /** 401: `AUTHORIZATION_FAILED`, the description's code, in both formats. */
  unauthorized(text: string): ErrorReply;
  /** 404 with `code` (default `NOT_FOUND`). */
  notFound(text: string, code?: ErrorCode): ErrorReply;
  /** 405 METHOD_NOT_ALLOWED with an `Allow` header. */
  methodNotAllowed(allowed: readonly string[]): ErrorReply;
  /** 413 PAYLOAD_TOO_LARGE. */
  payloadTooLarge(limit: number): ErrorReply;
  /** 500: `INTERNAL_SERVER_ERROR`, the description's code, in both formats. */
  internal(): ErrorReply;
  /** 503 SERVICE_UNAVAILABLE with `Retry-After: seconds`; `text` says when to send the request again. */
  unavailable(text: string, retryAfterSeconds: number): ErrorReply;
}

/** The bounds of the error bodies: texts for a person, a field's name, an issue, how many issues. */
export const ERROR_TEXT_MAX = 2000;
export const ERROR_FIELD_MAX = 512;
const ERROR_ISSUE_MAX = 500;
const ERROR_DETAILS_MAX = 20;

/**
 * A text that may repeat what a client sent (an unknown field's name, a header, a parse error), made
 * to fit the contract: control characters other than tab and line breaks become `?`, and a text
 * over `max` characters is cut, ending in `...`.
 */
export function boundedText(text: string, max: number): string {
  const clean = text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '?');
  return clean.length > max ? `${clean.slice(0, max - 3)}...` : clean;
}

export function errorHelpers(format: ErrorFormat): ErrorHelpers {
  const error = (status: ErrorStatus, code: ErrorCode, text: string, details?: ValidationIssue[]): ErrorReply => {
    const bounded = boundedText(text, ERROR_TEXT_MAX);
    if (format === 'apiError') {
      const body: ApiErrorBody = { errorCode: code, message: bounded };
      if (details !== undefined && details.length > 0) {
        body.details = details.slice(0, ERROR_DETAILS_MAX).map((issue) => ({
          ...issue,
          field: boundedText(issue.field, ERROR_FIELD_MAX),
          issue: boundedText(issue.issue, ERROR_ISSUE_MAX),
        }));
      }
      return { status, body };
    }
    return { status, body: { message: code, detail: bounded } };
  };
  const badRequest = (text: string, details?: ValidationIssue[]) => error(400, 'BAD_REQUEST', text, details);

  return {
    format,
    error,
    badRequest,
    invalid(location, issues) {
      const described = describeIssues(issues, location);
      if (format === 'messageError') return badRequest(described);
      const what = location === 'body' ? 'Request body is invalid' : 'Request is invalid';
      return badRequest(`${what}: ${described}.`, issues);
    },
    unauthorized(text) {
      return error(401, 'AUTHORIZATION_FAILED', text);
    },
    notFound(text, code = 'NOT_FOUND') {
      return error(404, code, text);
    },
    methodNotAllowed(allowed) {
      const reply = error(405, 'METHOD_NOT_ALLOWED', `This path accepts ${allowed.join(', ')} only.`);
      reply.headers = { Allow: allowed.join(', ') };
      return reply;
    },
    payloadTooLarge(limit) {
      return error(413, 'PAYLOAD_TOO_LARGE', `The request body exceeds the limit of ${limit} bytes.`);
    },
    unavailable(text, retryAfterSeconds) {
      return { ...error(503, 'SERVICE_UNAVAILABLE', text), headers: { 'Retry-After': String(retryAfterSeconds) } };
    },
    internal() {
      return format === 'apiError'
        ? error(500, 'INTERNAL_SERVER_ERROR', 'The service could not complete the request. Retry later.')
        : error(500, 'INTERNAL_SERVER_ERROR', 'The sandbox failed while handling the request. Retry later.');
    },
  };
}
