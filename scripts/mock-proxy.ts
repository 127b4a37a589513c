/**
 * The small HTTP proxy in front of each Prism mock: it passes every request and answer through
 * unchanged, except the answers in which Prism rejects the request, whose bodies it replaces with
 * what was wrong, in the family's error format.
 *
 * Why: when Prism rejects a request (an invalid body, a missing header), it answers the first
 * example of the operation's 422, 400 or default response (or the one `Prefer: example=` names),
 * whatever that example says; the reason is only in its `sl-violations` header. For the SDK
 * initiate that example is `DUPLICATE_TRANSACTION_ID`, an answer to a different mistake. Prism has
 * no option to build the body from the violations, and running it in-process with a hook means
 * depending on its internal packages; a proxy reads its documented output (status and
 * `sl-violations`) and needs only node:http. So:
 *
 * - 400 or 422 with request violations in `sl-violations` becomes
 *   `{"errorCode":"BAD_REQUEST","message":"Request is invalid: ...","details":[{"field","issue"},...]}`
 *   (gateway, extras: D02) or `{"message":"BAD_REQUEST","detail":"..."}` (web, SDK: D03), listing
 *   every violation (fields as JSON pointers into the body, parameters and headers by their
 *   documented names);
 * - Prism's own `{"error":{"code":"invalid_json"}}` for a body that is not JSON becomes the same
 *   `BAD_REQUEST` saying so;
 * - an amount's violation says the unit, integer paise, with its bounds in paise and rupees (D75),
 *   and an `X-Signature` of the wrong form is explained as the sandbox explains it (D28), rather
 *   than by the regular expression Prism quotes;
 * - 401 for a security violation (no or malformed Basic credentials, no partner id header) becomes
 *   `AUTHORIZATION_FAILED` saying what is missing, instead of an example about a
 *   wrong signature.
 *
 * - Prism's 404 `problem+json` for a path no operation has, a `Prefer: example=` no response of the
 *   operation has, or a `Prefer: code=` it does not document becomes `NOT_FOUND` in the family's
 *   format, listing what there is: the family's operations, or the operation's example names or
 *   statuses.
 *
 * The status and the `sl-violations` header stay as Prism sent them; every replaced body is valid
 * against the operation's documented 400 or 401 schema. Any other answer, `Prefer` included, is
 * Prism's own. The proxy keeps no state; it closes every connection, keep-alive ones included,
 * when stopped.
 */
import { readFileSync } from 'node:fs';
import { Agent, createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { amountIssue, amountProblemOf, isAmountField } from '../src/sandbox/amounts.js';
import { malformedSignatureDetail } from '../src/sandbox/families/partner.js';
import { familyInfo, type Family } from './families.js';

export interface ErrorProxyOptions {
  family: Family;
  /** The bundled document Prism serves (for the documented names of parameters and headers). */
  document: string;
  /** Where the proxy listens. */
  host: string;
  port: number;
  /** Where Prism listens. */
  target: { host: string; port: number };
}

export interface ErrorProxy {
  port: number;
  /** Closes the server and every connection, and waits until it is closed. */
  close(): Promise<void>;
}

/** One entry of Prism's `sl-violations` header. */
export interface Violation {
  location?: unknown[];
  severity?: string;
  code?: string | number;
  message?: string;
}

export interface Issue {
  /** A JSON pointer into the body, or the documented name of a header, query or path parameter. */
  field: string;
  issue: string;
}

/** An issue and where it is, for the sentence. */
interface LocatedIssue extends Issue {
  where: 'body' | 'header' | 'query' | 'path' | 'request';
}

/** Answers larger than this are passed through, never buffered (Prism's error bodies are tiny). */
const MAX_BUFFERED = 64 * 1024;

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);

export async function startErrorProxy(options: ErrorProxyOptions): Promise<ErrorProxy> {
  const names = documentedNames(options.document);
  const operations = documentedOperations(options.document);
  const format: Format = familyInfo(options.family).errorFormat;
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });

  const server = createServer((incoming, outgoing) => {
    const upstream = httpRequest(
      {
        host: options.target.host,
        port: options.target.port,
        method: incoming.method,
        path: incoming.url,
        headers: forwardHeaders(incoming.headers),
        agent,
      },
      (answer) =>
        relay(answer, outgoing, {
          format,
          names,
          operations,
          method: incoming.method ?? 'GET',
          url: incoming.url ?? '/',
          signature: firstHeader(incoming.headers['x-signature']),
        }),
    );
    upstream.on('error', () => {
      if (outgoing.headersSent) {
        outgoing.destroy();
        return;
      }
      const body = errorBody(format, 'internal', `The Prism mock of ${options.family} did not answer; see the output of npm run mock.`, []);
      send(outgoing, 502, {}, body);
    });
    incoming.on('error', () => upstream.destroy());
    incoming.pipe(upstream);
  });

  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen({ host: options.host.replace(/^\[(.*)\]$/, '$1'), port: options.port, exclusive: true }, () => {
      server.off('error', reject);
      resolveListen();
    });
  });
  let closed: Promise<void> | undefined;
  return {
    port: (server.address() as AddressInfo).port,
    close() {
      closed ??= new Promise<void>((resolveClose) => {
        server.close(() => resolveClose());
        server.closeAllConnections();
        agent.destroy();
      });
      return closed;
    },
  };
}

type Format = 'apiError' | 'messageError';

function forwardHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const forwarded: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!HOP_BY_HOP.has(name) && value !== undefined) forwarded[name] = value;
  }
  return forwarded;
}

function answerHeaders(answer: IncomingMessage, drop: readonly string[] = []): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || drop.includes(name)) continue;
    headers[name] = value;
  }
  return headers;
}

interface Context {
  format: Format;
  names: ReadonlyMap<string, string>;
  operations: readonly DocumentedOperation[];
  method: string;
  /** The path and query of the request, as sent. */
  url: string;
  /** The request's `X-Signature`, to say how long a malformed one is (never repeated). */
  signature?: string | undefined;
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function relay(answer: IncomingMessage, outgoing: ServerResponse, context: Context): void {
  const status = answer.statusCode ?? 502;
  const violations = parseViolations(answer.headers['sl-violations']);
  const candidate =
    ((status === 400 || status === 422) && violations.some(isRequestError)) ||
    (status === 401 && violations.some((violation) => violation.code === 401)) ||
    (status === 400 && violations.length === 0 && /json/i.test(answer.headers['content-type'] ?? '')) ||
    (status === 404 && /problem\+json/i.test(answer.headers['content-type'] ?? ''));
  if (!candidate) {
    outgoing.writeHead(status, answerHeaders(answer));
    answer.pipe(outgoing);
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  answer.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= MAX_BUFFERED) chunks.push(chunk);
  });
  answer.on('error', () => outgoing.destroy());
  answer.on('end', () => {
    const original = Buffer.concat(chunks);
    const replaced = size <= MAX_BUFFERED ? replacement(status, violations, original, context) : undefined;
    if (replaced === undefined) {
      send(outgoing, status, answerHeaders(answer, ['content-length']), original);
      return;
    }
    // A missing X-Signature is 401, as the contract and the sandbox answer it (D28), not Prism's 400.
    send(outgoing, missingSignature(violations, context) ? 401 : status, answerHeaders(answer, ['content-length', 'content-type']), replaced);
  });
}

function send(outgoing: ServerResponse, status: number, headers: Record<string, string | string[]>, body: Buffer | object): void {
  const payload = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
  if (!Buffer.isBuffer(body)) headers['content-type'] = 'application/json';
  headers['content-length'] = String(payload.length);
  outgoing.writeHead(status, headers);
  outgoing.end(payload);
}

/** The body that replaces Prism's, or undefined to keep Prism's. */
export function replacement(status: number, violations: readonly Violation[], original: Buffer, context: Context): object | undefined {
  const { format, names } = context;
  if (status === 401) return errorBody(format, 'unauthorized', unauthorizedText(format, names), []);
  if (missingSignature(violations, context)) {
    return errorBody(format, 'unauthorized', 'X-Signature is missing: send the request signature, 44 characters of standard base64 (D28).', []);
  }
  const errors = violations.filter(isRequestError);
  if (errors.length > 0) {
    const all = errors.map((violation) => explainPlus(explainSignature(toIssue(violation, names), violation, context.signature), context.url));
    // Two keywords can give one issue (an amount's `type` and `format`): each is said once.
    const located = [...new Map(all.map((issue) => [`${issue.where}\u0000${issue.field}\u0000${issue.issue}`, issue])).values()];
    const issues = located.map(({ field, issue }) => ({ field, issue }));
    return errorBody(format, 'badRequest', `Request is invalid: ${describe(located)}.`, issues);
  }
  if (isPrismInvalidJson(original)) {
    return errorBody(format, 'badRequest', 'The request body is not valid JSON.', []);
  }
  if (status === 404) {
    const text = notFoundText(original, context);
    if (text !== undefined) return format === 'apiError' ? { errorCode: 'NOT_FOUND', message: text } : { message: 'NOT_FOUND', detail: text };
  }
  return undefined;
}

/** One operation of the document: its method, path template, statuses and example names. */
interface DocumentedOperation {
  method: string;
  path: string;
  pattern: RegExp;
  statuses: string[];
  examples: string[];
}

/** The operations of the bundled document, for the answers to an unknown path, example or status. */
function documentedOperations(document: string): DocumentedOperation[] {
  const parsed = JSON.parse(readFileSync(document, 'utf8')) as { paths?: Record<string, Record<string, unknown>> };
  const operations: DocumentedOperation[] = [];
  for (const [path, item] of Object.entries(parsed.paths ?? {})) {
    const pattern = new RegExp(`^${path.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')).join('[^/]+')}$`);
    for (const [method, operation] of Object.entries(item)) {
      if (!['get', 'put', 'post', 'delete', 'patch'].includes(method)) continue;
      const responses = ((operation as { responses?: Record<string, { content?: Record<string, { examples?: Record<string, unknown> }> }> }).responses ?? {});
      const examples = Object.values(responses).flatMap((response) => Object.values(response.content ?? {}).flatMap((media) => Object.keys(media.examples ?? {})));
      operations.push({ method: method.toUpperCase(), path, pattern, statuses: Object.keys(responses), examples: [...new Set(examples)] });
    }
  }
  return operations;
}

/** What Prism's 404 means, with what there is instead; undefined for a 404 of another kind. */
function notFoundText(original: Buffer, context: Context): string | undefined {
  let problem: { type?: unknown; detail?: unknown };
  try {
    problem = JSON.parse(original.toString('utf8')) as typeof problem;
  } catch {
    return undefined;
  }
  const type = typeof problem.type === 'string' ? problem.type : '';
  const detail = typeof problem.detail === 'string' ? problem.detail : '';
  const path = context.url.split('?')[0] ?? '/';
  if (type.endsWith('#NO_PATH_MATCHED_ERROR')) {
    const served = context.operations.map((operation) => `${operation.method} ${operation.path}`).join(', ');
    return `No operation of this mock has the path ${path}. It serves: ${served}.`;
  }
  const operation = context.operations.find((candidate) => candidate.method === context.method.toUpperCase() && candidate.pattern.test(path));
  if (!type.endsWith('#NOT_FOUND') || operation === undefined) return undefined;
  const example = /exampleKey: (.*) does not exist/.exec(detail)?.[1];
  if (example !== undefined) {
    return `${operation.method} ${operation.path} has no example named '${example}'. Its examples: ${operation.examples.join(', ')} (Prefer: example=<name>).`;
  }
  const code = /status code (\S+) is not defined/.exec(detail)?.[1];
  if (code !== undefined) {
    return `${operation.method} ${operation.path} documents no status ${code}. Its statuses: ${operation.statuses.join(', ')} (Prefer: code=<status>).`;
  }
  return undefined;
}

function errorBody(format: Format, kind: 'badRequest' | 'unauthorized' | 'internal', text: string, issues: Issue[]): object {
  if (format === 'apiError') {
    const errorCode = kind === 'badRequest' ? 'BAD_REQUEST' : kind === 'unauthorized' ? 'AUTHORIZATION_FAILED' : 'INTERNAL_SERVER_ERROR';
    return issues.length > 0 ? { errorCode, message: text, details: issues } : { errorCode, message: text };
  }
  const message = kind === 'badRequest' ? 'BAD_REQUEST' : kind === 'unauthorized' ? 'AUTHORIZATION_FAILED' : 'INTERNAL_SERVER_ERROR';
  return { message, detail: text };
}

function unauthorizedText(format: Format, names: ReadonlyMap<string, string>): string {
  if (format === 'apiError') {
    return 'Missing or malformed HTTP Basic credentials: send Authorization: Basic and the base64 of username:password (the mock checks their form only).';
  }
  const header = names.get('x-partner-id') ?? names.get('x-partnerid') ?? 'the partner id header';
  return `${header} is missing: send your partner id in ${header} (the mock checks that it is present only).`;
}

function isPrismInvalidJson(body: Buffer): boolean {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { error?: { code?: unknown } };
    return parsed?.error?.code === 'invalid_json';
  } catch {
    return false;
  }
}

export function parseViolations(header: string | string[] | undefined): Violation[] {
  if (typeof header !== 'string') return [];
  try {
    const parsed = JSON.parse(header) as unknown;
    return Array.isArray(parsed) ? parsed.filter((item): item is Violation => typeof item === 'object' && item !== null) : [];
  } catch {
    return [];
  }
}

/** The request has no `X-Signature` where the contract requires one: 401, as the sandbox answers (D28). */
function missingSignature(violations: readonly Violation[], context: Context): boolean {
  return violations.some((violation) => {
    if (!isRequestError(violation) || violation.code !== 'required') return false;
    const issue = toIssue(violation, context.names);
    return issue.where === 'header' && issue.field.toLowerCase() === 'x-signature';
  });
}

function isRequestError(violation: Violation): boolean {
  return violation.severity === 'Error' && Array.isArray(violation.location) && violation.location[0] === 'request' && violation.code !== 401;
}

/** One violation as a field and what is wrong with it. */
export function toIssue(violation: Violation, names: ReadonlyMap<string, string>): LocatedIssue {
  const location = (violation.location ?? []).map(String);
  const where = location[1];
  const message = violation.message ?? 'is invalid';
  const required = violation.code === 'required' ? /required property '([^']*)'/.exec(message)?.[1] : undefined;
  if (where === 'body') {
    const path = location.slice(2);
    if (required !== undefined) path.push(required);
    const field = path.length === 0 ? '' : `/${path.map(escapePointer).join('/')}`;
    if (required !== undefined) return { where, field, issue: 'is required' };
    // An amount's issue says its unit (D75): Prism's `code` is the JSON Schema keyword.
    const amount = isAmountField(field) ? amountProblemOf(String(violation.code ?? ''), undefined, message) : undefined;
    return { where, field, issue: amount === undefined ? stripPrefix(message) : amountIssue(amount) };
  }
  if (where === 'header' || where === 'query' || where === 'path') {
    const name = required ?? location[2] ?? '';
    const documented = names.get(name.toLowerCase()) ?? name;
    return { where, field: documented, issue: required !== undefined ? 'is required' : stripPrefix(message) };
  }
  if (violation.code === 415) {
    const supported = /content types: (.*)$/i.exec(message)?.[1];
    return { where: 'header', field: 'Content-Type', issue: supported === undefined ? message : `must be ${supported}` };
  }
  return { where: 'request', field: '', issue: stripPrefix(message) };
}

/** An `X-Signature` that breaks the header's pattern: what the form is, as the sandbox says it (D28). */
function explainSignature(issue: LocatedIssue, violation: Violation, signature: string | undefined): LocatedIssue {
  if (issue.where !== 'header' || issue.field.toLowerCase() !== 'x-signature' || violation.code !== 'pattern') return issue;
  return { ...issue, issue: malformedSignatureDetail(signature ?? '').replace(/^X-Signature /, '').replace(/\.$/, '') };
}

/** A query parameter sent with a bare `+` reads as a space: say so. */
function explainPlus(issue: LocatedIssue, url: string): LocatedIssue {
  if (issue.where !== 'query') return issue;
  const query = url.includes('?') ? url.slice(url.indexOf('?') + 1) : '';
  const withPlus = query.split('&').some((pair) => {
    const [name = '', value = ''] = pair.split('=', 2);
    return name.toLowerCase() === issue.field.toLowerCase() && value.includes('+');
  });
  return withPlus ? { ...issue, issue: `${issue.issue} (a bare + in a query string reads as a space: write it %2B)` } : issue;
}

/** "Request body property amount must be number" -> "must be number". */
function stripPrefix(message: string): string {
  return message.replace(/^Request (body|query|header|path)( (property|parameter) \S+)? /, '');
}

function escapePointer(part: string): string {
  return part.replace(/~/g, '~0').replace(/\//g, '~1');
}

const WHERE: Record<LocatedIssue['where'], string> = {
  body: '',
  header: 'header ',
  query: 'query parameter ',
  path: 'path parameter ',
  request: '',
};

/** Issues for a person, in the order Prism found them. */
function describe(issues: readonly LocatedIssue[]): string {
  return issues
    .map(({ where, field, issue }) => {
      if (field === '') return `the request ${where === 'body' ? 'body ' : ''}${issue}`;
      return `${WHERE[where]}${field} ${issue}`;
    })
    .join('; ');
}

/**
 * The documented name of every parameter and header of the document, by its lower-case form
 * (Prism reports `x-signature` and `userphonenumber`).
 */
export function documentedNames(document: string): Map<string, string> {
  const names = new Map<string, string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const child of node) visit(child);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const record = node as Record<string, unknown>;
    // Parameters, and apiKey security schemes (the partner id headers).
    if (typeof record.name === 'string' && typeof record.in === 'string') names.set(record.name.toLowerCase(), record.name);
    for (const child of Object.values(record)) visit(child);
  };
  visit(JSON.parse(readFileSync(document, 'utf8')) as unknown);
  return names;
}
