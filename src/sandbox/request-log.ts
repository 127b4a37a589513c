/**
 * The request log behind the dashboard (docs/sandbox.md, "The dashboard"): the latest
 * requests the sandbox answered, each with its time on the virtual clock, family, operation,
 * partner or merchant, status, duration, request id and transaction, and for reading one: its
 * headers and body and the answer, with secrets redacted when read (request-redaction.ts).
 *
 * Bounded by bytes, not by a count: `limits.requestLogBytes` (`--max-request-log-bytes`, default
 * 16 MiB). Each entry is charged a fixed overhead plus its target, headers and the bodies it keeps,
 * and the oldest entries go first once the total is over the budget. A body is kept up to
 * {@link BODY_KEPT} bytes (its start; the size is kept), so one entry never holds a 1 MiB upload.
 * Entries are kept in the order answered, numbered without gaps, so an entry is found by its number
 * in O(1) and a page scans at most {@link MAX_SCANNED} entries. They are stored as bytes and numbers
 * (request-ring.ts), not as objects that the collector would copy, promote and compact.
 *
 * Kept per process: on the shared store, each process logs the requests it answered.
 * Writing every request into PostgreSQL would add a write, under the sandbox's one lock, to every
 * read; the log is a view for a developer, not state the sandbox acts on.
 *
 * What is not logged: the request log's own endpoints and the dashboard page, and the reads the
 * dashboard makes of other endpoints (GET with `X-Sandbox-Dashboard`), so that watching the log
 * does not fill it.
 *
 * Cost per request (measured by `npm run bench -- --only request-log`): the router's facts are
 * kept on the answer (io.ts's `KeptAnswer`; a WeakMap for any other answer) until it is finished,
 * the JSON is the text the answer sent, and the entry's texts are copied as bytes. Nothing is parsed
 * or redacted until the entry is read.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { VirtualClock } from './clock.js';
import { KeptAnswer } from './io.js';
import { EntryRing, Part } from './request-ring.js';
import { isJsonObject, redactBodyText, shownHeaders, shownTarget, type PathRedactor } from './request-redaction.js';
import type { RouteFacts } from './router.js';
import { stringifyJson } from '../http/raw-json.js';
import { TextParts } from '../http/send.js';

/** The start of a body that is kept; the rest is counted, not kept. */
const BODY_KEPT = 16 * 1024;
/** Entries one page looks at, at most (a rare filter then answers fewer, with a cursor). */
const MAX_SCANNED = 20_000;
/** The start of an id (a transaction's, a principal's) that is kept. */
const ID_KEPT = 1024;
export const DEFAULT_REQUEST_PAGE = 50;
export const MAX_REQUEST_PAGE = 500;
/** The header the dashboard sends on its reads, which are not logged. */
const DASHBOARD_HEADER = 'x-sandbox-dashboard';

/** One request in the list. */
export interface RequestSummary {
  id: string;
  at: string;
  method: string;
  path: string;
  family: string | null;
  operation: string | null;
  principal: string | null;
  transactionId: string | null;
  status: number;
  durationMs: number;
  requestId: string;
  reason: string | null;
}

/** One request opened: the summary, then the request and the answer as shown. */
export interface RequestDetail extends RequestSummary {
  request: { headers: [string, string][]; body: string; bytes: number; truncated: boolean };
  response: { headers: Record<string, string>; body: string; bytes: number; truncated: boolean };
}

export interface RequestQuery {
  family?: string | undefined;
  /** `401`, or a class: `4xx`, `5xx`, ... */
  status?: string | undefined;
  requestId?: string | undefined;
  transactionId?: string | undefined;
  /** Entries older than this one (`nextCursor`). */
  before?: number | undefined;
  /** Entries newer than this one (live updates); answered newest first, at most `limit`. */
  after?: number | undefined;
  limit?: number | undefined;
  /** Which entries the reader may see (the access rule, see pages/dashboard.ts). */
  visible?: ((principal: string | undefined) => boolean) | undefined;
}

export interface RequestPage {
  requests: RequestSummary[];
  /** Pass as `before` for older entries; null when none is left. */
  nextCursor: string | null;
  /** The newest entry's number, for `after` (0 when the log is empty). */
  latest: number;
}

const ID_PREFIX = 'rq_';

/** `rq_42` to 42; undefined for anything else. */
function entryNumber(id: string): number | undefined {
  if (!id.startsWith(ID_PREFIX) || !/^[0-9]{1,15}$/.test(id.slice(ID_PREFIX.length))) return undefined;
  return Number(id.slice(ID_PREFIX.length));
}

export class RequestLog {
  private readonly entries: EntryRing;
  private readonly facts = new WeakMap<ServerResponse, RouteFacts>();
  /** The number of the oldest entry held (of the next one when none is). */
  private firstSeq = 1;

  constructor(
    private readonly options: {
      /** The budget of the log, bytes. */
      byteLimit: number;
      clock: VirtualClock;
      /** How the log line writes a path (its secrets redacted). */
      logPath: PathRedactor;
    },
  ) {
    this.entries = new EntryRing(options.byteLimit);
  }

  /** The router's hook: what the pipeline knew, until the answer is finished. */
  readonly observe = (response: ServerResponse, facts: RouteFacts): void => {
    if (response instanceof KeptAnswer) response.facts = facts;
    else this.facts.set(response, facts);
  };

  /** Records a request once its answer was sent (server.ts, on `finish`). */
  finish(request: IncomingMessage, response: ServerResponse, elapsedMs: number, requestId: string): void {
    const url = request.url ?? '/';
    if (url.startsWith('/sandbox/requests') || url.startsWith('/dashboard')) return;
    const method = request.method ?? '-';
    if ((method === 'GET' || method === 'HEAD') && request.headers[DASHBOARD_HEADER] !== undefined) return;
    // Only `observe` writes a KeptAnswer's facts, always a RouteFacts.
    const facts = response instanceof KeptAnswer ? (response.facts as RouteFacts | undefined) : this.facts.get(response);
    const status = response.statusCode;
    const ring = this.entries;
    ring.text(`${method} ${url}`);
    ring.end(Part.Target);
    ring.headerList(request.rawHeaders);
    ring.end(Part.Headers);
    ring.text(requestId);
    ring.end(Part.RequestId);
    if (facts !== undefined) principalOf(facts, ring);
    ring.end(Part.Principal);
    const transaction = facts === undefined ? undefined : transactionOf(facts, url);
    if (transaction !== undefined) ring.text(transaction, ID_KEPT);
    ring.end(Part.TransactionId);
    let responseBytes = 0;
    let text: string | undefined;
    const body = facts?.reply.body;
    if (typeof body === 'string' || Buffer.isBuffer(body)) {
      responseBytes = Buffer.byteLength(body);
      // Pages and scripts are described, not kept.
    } else if (body instanceof TextParts) {
      // A page of kept texts (the extras' pushes), counted as sent, not joined to be kept.
      responseBytes = body.bytes;
    } else if (body !== undefined) {
      // The JSON as sent (error answers carry the request id); serialised here only when the
      // answer was not sent by the sandbox's own server.
      text =
        (response instanceof KeptAnswer ? response.sentText : undefined) ??
        stringifyJson(status >= 400 && isJsonObject(body) ? { ...body, requestId } : body) ??
        '';
      responseBytes = Buffer.byteLength(text);
      if (status >= 400 && isJsonObject(body)) {
        const reason = reasonOf(body);
        if (reason !== undefined) ring.text(reason);
      }
    }
    ring.end(Part.Reason);
    ring.headerRecord(facts?.reply.headers);
    ring.end(Part.ResponseHeaders);
    if (text !== undefined) ring.text(text, BODY_KEPT);
    ring.end(Part.ResponseBody);
    const raw = facts?.rawBody;
    if (raw !== undefined) ring.raw(raw, BODY_KEPT);
    ring.end(Part.RequestBody);
    const before = ring.length;
    ring.commit({
      // When it arrived, on the virtual clock (the clock may have moved while it was answered).
      at: this.options.clock.now() - Math.round(elapsedMs),
      durationMs: Math.round(elapsedMs * 10) / 10,
      status,
      requestBytes: raw?.length ?? 0,
      responseBytes,
      route: facts?.route,
    });
    this.firstSeq += before + 1 - ring.length;
  }

  /** Entries held. */
  get size(): number {
    return this.entries.length;
  }

  /** Bytes charged to the entries held. */
  get bytes(): number {
    return this.entries.bytes;
  }

  /** A page, newest first (see {@link RequestQuery}). */
  page(query: RequestQuery = {}): RequestPage {
    const limit = query.limit ?? DEFAULT_REQUEST_PAGE;
    const first = this.firstSeq;
    const latest = first + this.entries.length - 1;
    const requests: RequestSummary[] = [];
    let index = this.entries.length - 1;
    if (query.before !== undefined) index = Math.min(index, query.before - first - 1);
    const stopAt = query.after === undefined ? 0 : Math.max(0, query.after - first + 1);
    let scanned = 0;
    for (; index >= stopAt && requests.length < limit && scanned < MAX_SCANNED; index--, scanned++) {
      const row = this.entries.row(index);
      if (this.matches(row, query)) requests.push(this.summary(row, first + index));
    }
    const more = index >= stopAt && query.after === undefined;
    return { requests, nextCursor: more ? String(first + index + 1) : null, latest };
  }

  /** One entry as shown, or undefined when it is not held (or the reader may not see it). */
  get(id: string, visible: RequestQuery['visible'] = undefined): RequestDetail | undefined {
    const seq = entryNumber(id);
    if (seq === undefined || seq < this.firstSeq || seq >= this.firstSeq + this.entries.length) return undefined;
    const ring = this.entries;
    const row = ring.row(seq - this.firstSeq);
    const summary = this.summary(row, seq);
    if (visible !== undefined && !visible(summary.principal ?? undefined)) return undefined;
    const logPath = this.options.logPath;
    const numbers = ring.numbers(row);
    const requestBody = ring.partBuffer(row, Part.RequestBody);
    const responseBody = ring.part(row, Part.ResponseBody);
    const requestTruncated = numbers.requestBytes > requestBody.length;
    const responseTruncated = numbers.responseBytes > ring.partBytes(row, Part.ResponseBody);
    const responseHeaders = ring.partHeaders(row, Part.ResponseHeaders);
    const shownResponseHeaders: Record<string, string> = { 'X-Request-Id': summary.requestId };
    for (let index = 0; index + 1 < responseHeaders.length; index += 2) shownResponseHeaders[responseHeaders[index]!] = responseHeaders[index + 1]!;
    return {
      ...summary,
      request: {
        headers: shownHeaders(ring.partHeaders(row, Part.Headers)),
        body: redactBodyText(requestBody.toString('utf8'), !requestTruncated, logPath),
        bytes: numbers.requestBytes,
        truncated: requestTruncated,
      },
      response: {
        headers: shownResponseHeaders,
        body: redactBodyText(responseBody, !responseTruncated, logPath),
        bytes: numbers.responseBytes,
        truncated: responseTruncated,
      },
    };
  }

  private matches(row: number, query: RequestQuery): boolean {
    const ring = this.entries;
    if (query.family !== undefined && (ring.numbers(row).route?.family ?? 'none') !== query.family) return false;
    if (query.requestId !== undefined && ring.part(row, Part.RequestId) !== query.requestId) return false;
    if (query.transactionId !== undefined && ring.part(row, Part.TransactionId) !== query.transactionId) return false;
    if (query.status !== undefined) {
      const status = String(ring.numbers(row).status);
      if (query.status.endsWith('xx') ? status[0] !== query.status[0] : status !== query.status) return false;
    }
    return query.visible === undefined || query.visible(optional(ring.part(row, Part.Principal)));
  }

  private summary(row: number, seq: number): RequestSummary {
    const ring = this.entries;
    const { at, durationMs, status, route } = ring.numbers(row);
    const target = ring.part(row, Part.Target);
    const space = target.indexOf(' ');
    return {
      id: `${ID_PREFIX}${seq}`,
      at: new Date(at).toISOString(),
      method: target.slice(0, space),
      path: shownTarget(target.slice(space + 1), this.options.logPath),
      family: route?.family ?? null,
      operation: route === undefined ? null : (route.operationId ?? `${route.method} ${route.path}`),
      principal: optional(ring.part(row, Part.Principal)) ?? null,
      transactionId: optional(ring.part(row, Part.TransactionId)) ?? null,
      status,
      durationMs,
      requestId: ring.part(row, Part.RequestId),
      reason: optional(ring.part(row, Part.Reason)) ?? null,
    };
  }
}

/** An empty part read back as undefined (an id, a principal or a reason is never empty). */
function optional(text: string): string | undefined {
  return text === '' ? undefined : text;
}

/** An error body's message: `detail` or `message`, at most 300 characters. */
function reasonOf(body: Record<string, unknown>): string | undefined {
  const text = [body.detail, body.message, body.errorCode].find((value) => typeof value === 'string' && value !== '');
  return typeof text === 'string' ? (text.length > 300 ? `${text.slice(0, 300)}...` : text) : undefined;
}

/** Writes `partner <id>` or `merchant <id>`: who made the request (never a credential); nothing when unknown. */
function principalOf(facts: RouteFacts, ring: EntryRing): void {
  const principal = facts.principal as { merchantId?: unknown; id?: unknown; privateKey?: unknown } | undefined;
  let kind = 'merchant ';
  let id: string | undefined;
  if (principal !== undefined && principal !== null && typeof principal === 'object') {
    if (typeof principal.merchantId === 'string') id = principal.merchantId;
    else if (typeof principal.id === 'string' && principal.privateKey !== undefined) (kind = 'partner '), (id = principal.id);
  }
  id ??= facts.params.merchantId ?? (facts.route?.path.startsWith('/api/merchant/{id}') ? facts.params.id : undefined);
  if (id === undefined) return;
  ring.text(kind);
  ring.text(id, ID_KEPT);
}

const ID_MEMBERS = ['merchantTransactionId', 'transactionId'] as const;

/** The transaction a request is about, from its path, query or body. */
function transactionOf(facts: RouteFacts, url: string): string | undefined {
  const { params, route } = facts;
  const aboutTransactions = route !== undefined && route.path.includes('transaction');
  const fromParams = params.merchantTransactionId ?? params.transactionId ?? (aboutTransactions ? params.id : undefined);
  if (fromParams !== undefined) return fromParams;
  const body = facts.body;
  if (isJsonObject(body)) {
    for (const member of ID_MEMBERS) if (typeof body[member] === 'string') return body[member];
    const nested = body.transaction;
    if (isJsonObject(nested) && typeof nested.id === 'string') return nested.id;
    if (aboutTransactions && typeof body.id === 'string') return body.id;
  }
  if (aboutTransactions && url.includes('?')) return new URLSearchParams(url.slice(url.indexOf('?') + 1)).get('id') ?? undefined;
  return undefined;
}
