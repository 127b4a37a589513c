/**
 * The two error formats of the contract, as reply builders:
 * - `apiError` (gateway and extras, D02): `{ errorCode, message, details? }`;
 * - `messageError` (web and SDK, D03): `{ message: <CODE>, detail? }`.
 * The `/sandbox/` endpoints use the `apiError` shape as well.
 */
import { describeIssues, type ParameterLocation, type ValidationIssue } from './validation.js';

export type ErrorFormat = 'apiError' | 'messageError';

export interface ApiErrorBody {
  errorCode: string;
  message: string;
  details?: ValidationIssue[];
}

export interface MessageErrorBody {
  message: string;
  detail?: string;
}

/** The statuses of error replies (a 2xx is never an error, so handlers' success replies stay checked). */
export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 409 | 410 | 413 | 415 | 422 | 429 | 500 | 502 | 503 | 504;

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
  error(status: ErrorStatus, code: string, text: string, details?: ValidationIssue[]): ErrorReply;
  /** 400 BAD_REQUEST with a sentence. */
  badRequest(text: string, details?: ValidationIssue[]): ErrorReply;
  /** 400 BAD_REQUEST from validation issues of a location. */
  invalid(location: 'body' | ParameterLocation, issues: ValidationIssue[]): ErrorReply;
  /** 401: `UNAUTHORIZED` (apiError) or `AUTHORIZATION_FAILED` (messageError). */
  unauthorized(text: string): ErrorReply;
  /** 404 with `code` (default `NOT_FOUND`). */
  notFound(text: string, code?: string): ErrorReply;
  /** 405 METHOD_NOT_ALLOWED with an `Allow` header. */
  methodNotAllowed(allowed: readonly string[]): ErrorReply;
  /** 413 PAYLOAD_TOO_LARGE (D24). */
  payloadTooLarge(limit: number): ErrorReply;
  /** 500: `INTERNAL_ERROR` (apiError) or `INTERNAL_SERVER_ERROR` (messageError). */
  internal(): ErrorReply;
}

export function errorHelpers(format: ErrorFormat): ErrorHelpers {
  const error = (status: ErrorStatus, code: string, text: string, details?: ValidationIssue[]): ErrorReply => {
    if (format === 'apiError') {
      const body: ApiErrorBody = { errorCode: code, message: text };
      if (details !== undefined && details.length > 0) body.details = details;
      return { status, body };
    }
    return { status, body: { message: code, detail: text } };
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
      return error(401, format === 'apiError' ? 'UNAUTHORIZED' : 'AUTHORIZATION_FAILED', text);
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
    internal() {
      return format === 'apiError'
        ? error(500, 'INTERNAL_ERROR', 'The service could not complete the request. Retry later.')
        : error(500, 'INTERNAL_SERVER_ERROR', 'The sandbox failed while handling the request. Retry later.');
    },
  };
}
