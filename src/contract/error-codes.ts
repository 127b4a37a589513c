/**
 * Every error code of the contract and of the sandbox, in one list (D250, D251): its HTTP status,
 * the families that answer it, the condition it names and how a caller fixes it. One condition has
 * one code; a code has more than one row only where the description makes its status follow where
 * the thing is named (`NO_SUCH_TRANSACTION`: 404 in the address, 400 in the body).
 *
 * What reads it: the sandbox's error constructors take a {@link ErrorCode} only, so a code missing
 * here fails `tsc`; the error tables of the four descriptions and of the decision record are
 * rendered from it ({@link renderErrorTable}, written by `npm run errors:tables`); and a test
 * compares the list with the codes each response of the bundled documents lists and with the
 * statuses the sandbox answers them with.
 */
import type { Family } from './families.js';

/** Who answers a code: a family of the contract, or the sandbox itself (its `/sandbox/` endpoints, its own conditions). */
export type ErrorScope = Family | 'sandbox';

export interface ErrorCodeRow {
  readonly code: string;
  readonly status: number;
  readonly scopes: readonly ErrorScope[];
  /** When it is answered (Markdown, one line). */
  readonly condition: string;
  /** What some scopes add to the condition (Markdown, appended after "; "): what only they answer it for. */
  readonly adds?: Partial<Record<ErrorScope, string>>;
  /** What the caller does about it (Markdown, one line). */
  readonly fix: string;
}

const ALL: readonly ErrorScope[] = ['gateway', 'extras', 'web', 'sdk', 'sandbox'];
const REFUNDS: readonly ErrorScope[] = ['gateway', 'web', 'sdk'];

export const ERROR_CODES = [
  {
    code: 'BAD_REQUEST',
    status: 400,
    scopes: ALL,
    condition: 'the body, a query or path parameter, or a header fails the schema; the body is not JSON; a wrong `Content-Type`',
    adds: {
      web: 'an `X-Signature` not of the form of 44 base64 characters ending in `=`',
      sdk: 'an `X-Signature` not of the form of 44 base64 characters ending in `=`',
    },
    fix: 'correct what `details` (gateway, extras) or `detail` (web, SDK) names and send again',
  },
  {
    code: 'INVALID_OTP',
    status: 400,
    scopes: ['gateway'],
    condition: 'a user input that does not match the expected OTP (the attempt counts), or any user input after the third wrong one failed the transaction',
    fix: 'ask the user for the OTP again; after the third wrong one, create a new transaction',
  },
  {
    code: 'OTP_EXPIRED',
    status: 400,
    scopes: ['gateway'],
    condition: 'the OTP of this reference id expired; a new option with a new `referenceId` is issued',
    fix: 'read the stage for the new `referenceId` and send the new OTP to it',
  },
  {
    code: 'UNKNOWN_PRE_ELIGIBILITY_CHECK',
    status: 400,
    scopes: ['gateway'],
    condition: '`preEligibilityCheckId` names no check of this merchant',
    fix: 'send the id a pre-eligibility check of this merchant answered, or leave it out',
  },
  {
    code: 'DOWN_PAYMENT_AMOUNT_MISMATCH',
    status: 400,
    scopes: ['gateway'],
    condition: '`metaData.amount` differs from `paymentOptions.amount`',
    fix: 'register the amount the `payment` step asks for',
  },
  {
    code: 'REFUND_AMOUNT_TOO_LARGE',
    status: 400,
    scopes: REFUNDS,
    condition: 'the refund exceeds the remaining unrefunded amount',
    fix: 'refund at most what remains (the amount less the refunds made)',
  },
  {
    code: 'ALREADY_REFUNDED',
    status: 400,
    scopes: REFUNDS,
    condition: 'nothing remains to refund',
    fix: 'none: the whole amount is refunded',
  },
  {
    code: 'TRANSACTION_NOT_REFUNDABLE',
    status: 400,
    scopes: REFUNDS,
    condition: 'a refund that cannot be made: the transaction is not `SUCCESS`',
    adds: { gateway: 'or it has 10,000 refunds, the most one takes' },
    fix: 'refund only a `SUCCESS` transaction; one that takes no more refunds is settled outside the service',
  },
  {
    code: 'DUPLICATE_TRANSACTION_ID',
    status: 400,
    scopes: REFUNDS,
    condition: 'a transaction with this id exists already (the description\'s code)',
    fix: 'use a new id for each attempt',
  },
  {
    code: 'DUPLICATE_ID',
    status: 400,
    scopes: ['gateway'],
    condition: 'another id used before: a merchant id, a refund id with another amount, or a dashboard user of this merchant',
    fix: 'choose a new id; repeat a refund with its first amount to read it again',
  },
  {
    code: 'NO_SUCH_TRANSACTION',
    status: 400,
    scopes: ['web', 'sdk'],
    condition: 'the transaction named in the body does not exist for these credentials (the description\'s code and status)',
    fix: 'send the id of a transaction you initiated with these credentials',
  },
  {
    code: 'AUTHORIZATION_FAILED',
    status: 401,
    scopes: ALL,
    condition: 'missing, malformed or wrong credentials',
    adds: {
      gateway: 'Basic credentials, or credentials of the other kind',
      extras: 'Basic credentials',
      web: 'the partner id, or a signature missing where required or wrong',
      sdk: 'the partner id, or a signature missing or wrong',
      sandbox: 'the operator token or a tenant credential of a hosted sandbox',
    },
    fix: 'send the credentials issued for this API; sign the exact bytes you send',
  },
  {
    code: 'FORBIDDEN',
    status: 403,
    scopes: ['sandbox'],
    condition: 'a hosted sandbox: only the operator moves the shared clock',
    fix: 'ask the operator, or run a sandbox of your own',
  },
  {
    code: 'NO_SUCH_TRANSACTION',
    status: 404,
    scopes: ['gateway', 'web', 'sandbox'],
    condition: 'the transaction named in the address does not exist for these credentials',
    fix: 'use the id of a transaction created with these credentials',
  },
  {
    code: 'NOT_FOUND',
    status: 404,
    scopes: ALL,
    condition: 'the address names nothing: no route has this path',
    adds: { gateway: 'an unknown merchant or user-input reference', sandbox: 'an unknown record of the sandbox (a refund, a delivery, an invitation)' },
    fix: 'check the path against the document, and the id against what the service answered',
  },
  {
    code: 'METHOD_NOT_ALLOWED',
    status: 405,
    scopes: ALL,
    condition: 'the path exists, the method does not; `Allow` lists the methods it takes',
    fix: 'use a method that `Allow` lists',
  },
  {
    code: 'REQUEST_TIMEOUT',
    status: 408,
    scopes: ALL,
    condition: 'the request line and headers did not arrive within 30 s, or the whole request within 60 s (the connection is closed)',
    fix: 'send the whole request at once, as many body bytes as `Content-Length` says',
  },
  {
    code: 'INVALID_STATE',
    status: 409,
    scopes: ['gateway', 'sandbox'],
    condition: 'the operation is not allowed in the current merchant stage or transaction step or status (a cancel of a final transaction)',
    fix: 'read the merchant or the transaction, and do what its stage or step allows',
  },
  {
    code: 'PAYLOAD_TOO_LARGE',
    status: 413,
    scopes: ALL,
    condition: 'the body exceeds the size limit, 1 MiB',
    fix: 'send a smaller body',
  },
  {
    code: 'TOO_MANY_REQUESTS',
    status: 429,
    scopes: ALL,
    condition: 'too many requests, or too many pending transactions',
    fix: 'wait the `Retry-After` seconds it carries, then retry',
  },
  {
    code: 'HEADERS_TOO_LARGE',
    status: 431,
    scopes: ALL,
    condition: 'the request headers exceed 16 KiB (the connection is closed)',
    fix: 'send shorter headers',
  },
  {
    code: 'INTERNAL_SERVER_ERROR',
    status: 500,
    scopes: ALL,
    condition: 'the service failed; nothing was changed',
    fix: 'retry later',
  },
  {
    code: 'SERVICE_UNAVAILABLE',
    status: 503,
    scopes: ['sandbox'],
    condition: 'a sandbox on a shared store cannot reach its database; nothing was done',
    fix: 'retry after `Retry-After` seconds',
  },
  {
    code: 'SANDBOX_STOPPING',
    status: 503,
    scopes: ['sandbox'],
    condition: 'the sandbox is stopping (the webhook stream)',
    fix: 'connect again when it is back',
  },
  {
    code: 'TOO_MANY_STREAMS',
    status: 503,
    scopes: ['sandbox'],
    condition: 'the most webhook streams are open at once',
    fix: 'close a stream, then retry after `Retry-After` seconds',
  },
] as const satisfies readonly ErrorCodeRow[];

/** A code of the list: the only codes the sandbox's error constructors take. */
export type ErrorCode = (typeof ERROR_CODES)[number]['code'];

/** A row's condition as a scope's table says it: the shared words, then what the scope adds. */
function conditionIn(row: ErrorCodeRow, scope: ErrorScope): string {
  const added = row.adds?.[scope];
  return added === undefined ? row.condition : `${row.condition}; ${added}`;
}

/** The rows a scope answers, in the list's order (by status, then as written). */
export function errorRows(scope: ErrorScope): ErrorCodeRow[] {
  return ERROR_CODES.filter((row) => (row.scopes as readonly ErrorScope[]).includes(scope));
}

/** Whether the list has this code with this status for this scope. */
export function isListedError(scope: ErrorScope, status: number, code: string): boolean {
  return errorRows(scope).some((row) => row.status === status && row.code === code);
}

/** The marker lines that enclose a rendered table in a Markdown file. */
export const errorTableMarkers = (scope: Family) => ({ start: `<!-- error-codes:${scope} -->`, end: '<!-- /error-codes -->' });

/**
 * The Markdown table of a family's error codes, one row per code and status, each line starting
 * with `indent` (a table inside a list item). The web and SDK families carry the code in
 * `message` (D03), the others in `errorCode` (D02).
 */
export function renderErrorTable(family: Family, indent = ''): string {
  const field = family === 'web' || family === 'sdk' ? 'message' : 'errorCode';
  const lines = [`| HTTP | ${field} | When | How to fix |`, '|---|---|---|---|'];
  for (const row of errorRows(family)) lines.push(`| ${row.status} | \`${row.code}\` | ${conditionIn(row, family)} | ${row.fix} |`);
  return lines.map((line) => `${indent}${line}`).join('\n');
}

/**
 * `text` with the table between each pair of `family`'s markers rendered again (the marker line's
 * indentation kept), or the problem when a marker is missing or unpaired.
 */
export function withErrorTables(text: string, family: Family): { ok: true; text: string } | { ok: false; problem: string } {
  const { start, end } = errorTableMarkers(family);
  const lines = text.split('\n');
  const out: string[] = [];
  let found = 0;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] as string;
    out.push(line);
    if (line.trim() !== start) continue;
    const close = lines.findIndex((candidate, at) => at > index && candidate.trim() === end);
    if (close < 0) return { ok: false, problem: `${start} has no ${end} after it` };
    const indent = line.slice(0, line.length - line.trimStart().length);
    out.push('', renderErrorTable(family, indent), '', lines[close] as string);
    index = close;
    found++;
  }
  return found === 0 ? { ok: false, problem: `no ${start}` } : { ok: true, text: out.join('\n') };
}
