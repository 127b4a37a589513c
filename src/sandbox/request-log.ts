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
 * Entries live in a ring buffer (denque) in the order answered, numbered without gaps, so an entry is
 * found by its number in O(1) and a page scans at most {@link MAX_SCANNED} entries.
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
 * the JSON is the text the answer sent, and one small record is pushed. Nothing is parsed or
 * redacted until the entry is read.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import Denque from 'denque';
import type { VirtualClock } from './clock.js';
import { KeptAnswer } from './io.js';
import { isJsonObject, redactBodyText, shownHeaders, shownTarget, type PathRedactor } from './request-redaction.js';
import type { RouteFacts } from './router.js';
import { stringifyJson } from '../http/raw-json.js';

/** The start of a body that is kept; the rest is counted, not kept. */
const BODY_KEPT = 16 * 1024;
/** Entries one page looks at, at most (a rare filter then answers fewer, with a cursor). */
const MAX_SCANNED = 20_000;
/** Bytes charged to every entry besides its text: the record, its strings' headers, the deque slot. */
const ENTRY_OVERHEAD = 320;
export const DEFAULT_REQUEST_PAGE = 50;
export const MAX_REQUEST_PAGE = 500;
/** The header the dashboard sends on its reads, which are not logged. */
const DASHBOARD_HEADER = 'x-sandbox-dashboard';

interface LoggedRequest {
  seq: number;
  /** Virtual time when it arrived, ms. */
  at: number;
  method: string;
  /** The target as received; shown redacted. */
  url: string;
  status: number;
  durationMs: number;
  requestId: string;
  family: string | undefined;
  operation: string | undefined;
  principal: string | undefined;
  transactionId: string | undefined;
  /** An error's message, for the list. */
  reason: string | undefined;
  rawHeaders: string[];
  requestBody: Buffer;
  requestBytes: number;
  responseHeaders: Record<string, string> | undefined;
  responseBody: string;
  responseBytes: number;
  bytes: number;
}

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
  private readonly entries = new Denque<LoggedRequest>();
  private readonly facts = new WeakMap<ServerResponse, RouteFacts>();
  private nextSeq = 1;
  private usedBytes = 0;

  constructor(
    private readonly options: {
      /** The budget of the log, bytes. */
      byteLimit: number;
      clock: VirtualClock;
      /** How the log line writes a path (its secrets redacted). */
      logPath: PathRedactor;
    },
  ) {}

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
    let responseBody = '';
    let responseBytes = 0;
    let reason: string | undefined;
    const body = facts?.reply.body;
    if (typeof body === 'string' || Buffer.isBuffer(body)) {
      responseBytes = Buffer.byteLength(body);
      // Pages and scripts are described, not kept.
    } else if (body !== undefined) {
      // The JSON as sent (error answers carry the request id); serialised here only when the
      // answer was not sent by the sandbox's own server.
      const text =
        (response instanceof KeptAnswer ? response.sentText : undefined) ??
        stringifyJson(status >= 400 && isJsonObject(body) ? { ...body, requestId } : body) ??
        '';
      responseBytes = Buffer.byteLength(text);
      responseBody = text.length > BODY_KEPT ? text.slice(0, BODY_KEPT) : text;
      if (status >= 400 && isJsonObject(body)) reason = reasonOf(body);
    }
    const raw = facts?.rawBody;
    const requestBody = raw === undefined ? EMPTY : raw.length > BODY_KEPT ? Buffer.from(raw.subarray(0, BODY_KEPT)) : raw;
    const rawHeaders = request.rawHeaders;
    let headerBytes = 0;
    for (const part of rawHeaders) headerBytes += part.length;
    const route = facts?.route;
    const entry: LoggedRequest = {
      seq: this.nextSeq++,
      // When it arrived, on the virtual clock (the clock may have moved while it was answered).
      at: this.options.clock.now() - Math.round(elapsedMs),
      method,
      url,
      status,
      durationMs: Math.round(elapsedMs * 10) / 10,
      requestId,
      family: route?.family,
      operation: route === undefined ? undefined : (route.operationId ?? `${route.method} ${route.path}`),
      principal: facts === undefined ? undefined : principalOf(facts),
      transactionId: facts === undefined ? undefined : transactionOf(facts, url),
      reason,
      rawHeaders,
      requestBody,
      requestBytes: raw?.length ?? 0,
      responseHeaders: facts?.reply.headers,
      responseBody,
      responseBytes,
      bytes: 0,
    };
    entry.bytes = ENTRY_OVERHEAD + url.length + headerBytes + requestBody.length + responseBody.length + (reason?.length ?? 0);
    this.entries.push(entry);
    this.usedBytes += entry.bytes;
    while (this.usedBytes > this.options.byteLimit && this.entries.length > 1) {
      this.usedBytes -= this.entries.shift()!.bytes;
    }
  }

  /** Entries held. */
  get size(): number {
    return this.entries.length;
  }

  /** Bytes charged to the entries held. */
  get bytes(): number {
    return this.usedBytes;
  }

  /** A page, newest first (see {@link RequestQuery}). */
  page(query: RequestQuery = {}): RequestPage {
    const limit = query.limit ?? DEFAULT_REQUEST_PAGE;
    const latest = this.nextSeq - 1;
    const requests: RequestSummary[] = [];
    const first = this.entries.peekFront()?.seq ?? this.nextSeq;
    let index = this.entries.length - 1;
    if (query.before !== undefined) index = Math.min(index, query.before - first - 1);
    const stopAt = query.after === undefined ? 0 : Math.max(0, query.after - first + 1);
    let scanned = 0;
    for (; index >= stopAt && requests.length < limit && scanned < MAX_SCANNED; index--, scanned++) {
      const entry = this.entries.peekAt(index)!;
      if (matches(entry, query)) requests.push(this.summary(entry));
    }
    const more = index >= stopAt && query.after === undefined;
    return { requests, nextCursor: more ? String(this.entries.peekAt(index + 1)!.seq) : null, latest };
  }

  /** One entry as shown, or undefined when it is not held (or the reader may not see it). */
  get(id: string, visible: RequestQuery['visible'] = undefined): RequestDetail | undefined {
    const seq = entryNumber(id);
    const first = this.entries.peekFront()?.seq;
    if (seq === undefined || first === undefined) return undefined;
    const entry = this.entries.peekAt(seq - first);
    if (entry === undefined || entry.seq !== seq || (visible !== undefined && !visible(entry.principal))) return undefined;
    const logPath = this.options.logPath;
    const requestTruncated = entry.requestBytes > entry.requestBody.length;
    const responseTruncated = entry.responseBytes > entry.responseBody.length;
    return {
      ...this.summary(entry),
      request: {
        headers: shownHeaders(entry.rawHeaders),
        body: redactBodyText(entry.requestBody.toString('utf8'), !requestTruncated, logPath),
        bytes: entry.requestBytes,
        truncated: requestTruncated,
      },
      response: {
        headers: { 'X-Request-Id': entry.requestId, ...entry.responseHeaders },
        body: redactBodyText(entry.responseBody, !responseTruncated, logPath),
        bytes: entry.responseBytes,
        truncated: responseTruncated,
      },
    };
  }

  private summary(entry: LoggedRequest): RequestSummary {
    const target = shownTarget(entry.url, this.options.logPath);
    return {
      id: `${ID_PREFIX}${entry.seq}`,
      at: new Date(entry.at).toISOString(),
      method: entry.method,
      path: target,
      family: entry.family ?? null,
      operation: entry.operation ?? null,
      principal: entry.principal ?? null,
      transactionId: entry.transactionId ?? null,
      status: entry.status,
      durationMs: entry.durationMs,
      requestId: entry.requestId,
      reason: entry.reason ?? null,
    };
  }
}

const EMPTY = Buffer.alloc(0);

function matches(entry: LoggedRequest, query: RequestQuery): boolean {
  if (query.family !== undefined && (entry.family ?? 'none') !== query.family) return false;
  if (query.requestId !== undefined && entry.requestId !== query.requestId) return false;
  if (query.transactionId !== undefined && entry.transactionId !== query.transactionId) return false;
  if (query.status !== undefined) {
    const status = String(entry.status);
    if (query.status.endsWith('xx') ? status[0] !== query.status[0] : status !== query.status) return false;
  }
  return query.visible === undefined || query.visible(entry.principal);
}

/** An error body's message: `detail` or `message`, at most 300 characters. */
function reasonOf(body: Record<string, unknown>): string | undefined {
  const text = [body.detail, body.message, body.errorCode].find((value) => typeof value === 'string' && value !== '');
  return typeof text === 'string' ? (text.length > 300 ? `${text.slice(0, 300)}...` : text) : undefined;
}

/** `partner <id>` or `merchant <id>`: who made the request (never a credential). */
function principalOf(facts: RouteFacts): string | undefined {
  const principal = facts.principal as { merchantId?: unknown; id?: unknown; privateKey?: unknown } | undefined;
  if (principal !== undefined && principal !== null && typeof principal === 'object') {
    if (typeof principal.merchantId === 'string') return `merchant ${principal.merchantId}`;
    if (typeof principal.id === 'string' && principal.privateKey !== undefined) return `partner ${principal.id}`;
  }
  const merchant = facts.params.merchantId ?? (facts.route?.path.startsWith('/api/merchant/{id}') ? facts.params.id : undefined);
  return merchant === undefined ? undefined : `merchant ${merchant}`;
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
