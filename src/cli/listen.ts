/**
 * `paylater listen`: follows the sandbox's webhook events live (GET /sandbox/webhooks/stream, see
 * src/sandbox/webhook-stream.ts) and forwards each one, with its exact body and its signed headers,
 * to a receiver on this machine, printing one line per event with the receiver's answer.
 *
 * - Events are forwarded one at a time, in the order the sandbox recorded them (as the service
 *   delivers the events of a transaction in order), each with a 10 s limit like the service's own
 *   attempts. At most {@link MAX_PENDING} wait; more are dropped with a message.
 * - The sandbox going away: if the first connection fails, the command stops with a clear message
 *   (exit 1): the URL is wrong or the sandbox is not running. Once connected, a lost connection (the
 *   sandbox restarted, or it stopped) is retried with a back-off from 0.5 s to 5 s until it comes
 *   back or Ctrl+C; events recorded in between are not forwarded (GET /sandbox/webhooks/deliveries
 *   still lists them). A connection silent for three heartbeats is treated as lost.
 * - Ctrl+C (SIGINT) or SIGTERM stops it: the stream is closed, a forward in progress is abandoned,
 *   exit 0.
 *
 * Only webhooks are forwarded. The web flow's call to the initiate's `notes.webhook_url`
 * (`transactionResult`, a form post to the shop's own URL, not a JSON webhook) is in the stream too,
 * but the sandbox always sends it to that URL itself: forwarding it as well would give the receiver,
 * a JSON webhook handler, a form it refuses (400). Its line says where it went instead.
 *
 * Event lines (the event, its status, the receiver's answer) go to standard output; status lines
 * (ready, lost, reconnected, stopped, and once per family a warning when the sandbox also delivers
 * that family's events itself) to standard error. Neither ever shows a secret: URLs are shown without credentials or query.
 */
import { performance } from 'node:perf_hooks';
import { CommandFailed } from './command-line.js';
import { SseParser } from './sse.js';
import { sandboxEndpoint, shownUrl } from './urls.js';
import { isWebhookFamily, type WebhookFamily } from '../contract/webhooks.js';
import { shownWebhookUrl } from '../sandbox/shown-url.js';
import type { StreamedDelivery } from '../sandbox/webhook-stream.js';
import { FAMILY_HEADER } from '../webhooks/handler.js';

/** Every family with webhooks, in the order the guides name them. */
const ALL_FAMILIES: readonly WebhookFamily[] = ['sdk', 'web', 'gateway'];
/** Events waiting to be forwarded, at most. */
const MAX_PENDING = 1000;
/** The time limit of one forward, as the service's own attempts. */
const FORWARD_TIMEOUT_MS = 10_000;
const FIRST_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 5_000;

/** One event of the stream (`event: delivery`), as the sandbox sends it. */
export type StreamedEvent = StreamedDelivery;

export interface ListenOptions {
  sandbox: URL;
  forwardTo: URL;
  /**
   * The families to forward; `undefined`: the one the receiver names in its answer to a first
   * request (the package's webhook handler does), else every family.
   */
  families: readonly WebhookFamily[] | undefined;
  /** The lines that tell the signing key of each forwarded family, written once ready. */
  keys?: (families: readonly WebhookFamily[]) => Promise<string[]>;
  /** Aborted by Ctrl+C. */
  signal: AbortSignal;
  /** One event line (standard output). */
  out(line: string): void;
  /** One status line (standard error). */
  err(line: string): void;
}

/** Runs until `signal` is aborted (exit 0) or the first connection fails (CommandFailed). */
export async function listen(options: ListenOptions): Promise<number> {
  const { signal, err } = options;
  const streamUrl = sandboxEndpoint(options.sandbox, '/sandbox/webhooks/stream');
  const target = receiverOf(options.forwardTo);
  const asked = options.families === undefined ? await askReceiver(target, signal) : undefined;
  const families = options.families ?? (asked === undefined ? ALL_FAMILIES : [asked]);
  if (families.length < ALL_FAMILIES.length) streamUrl.searchParams.set('family', families.join(','));
  const chosen =
    options.families !== undefined
      ? ''
      : asked === undefined
        ? ' (the receiver did not name the family it verifies; choose with --family)'
        : ` (the family the receiver verifies, named by its ${FAMILY_HEADER} header; --family chooses others)`;
  const forwarder = new Forwarder(options, target);
  const where = shownUrl(options.sandbox);

  let connected = false;
  let lost = false;
  let backoff = FIRST_BACKOFF_MS;
  while (!signal.aborted) {
    const attempt = await connect(streamUrl, signal);
    if (signal.aborted) break;
    if (!attempt.ok) {
      if (!connected || attempt.final) {
        throw new CommandFailed(`cannot follow the webhooks of the sandbox at ${where}: ${attempt.reason}`);
      }
      if (!lost) {
        err(`Lost the connection to the sandbox (${attempt.reason}); reconnecting...`);
        lost = true;
      }
      await sleep(backoff, signal);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      continue;
    }
    if (lost) {
      err(`Reconnected to the sandbox at ${where}. Events recorded while disconnected were not forwarded (GET /sandbox/webhooks/deliveries lists them).`);
    }
    lost = false;
    backoff = FIRST_BACKOFF_MS;
    const reason = await follow(attempt.response, forwarder, signal, () => {
      if (connected) return;
      connected = true;
      err(`Ready: forwarding the ${listed(families)} webhooks${chosen} of the sandbox at ${where} to ${shownWebhookUrl(options.forwardTo.href)}. Press Ctrl+C to stop.`);
      if (options.keys !== undefined) {
        void options.keys(families).then(
          (lines) => lines.forEach((line) => err(line)),
          () => undefined,
        );
      }
    }, err);
    if (signal.aborted) break;
    if (!connected) throw new CommandFailed(`the sandbox at ${where} closed the stream before it was ready (${reason})`);
    err(`Lost the connection to the sandbox (${reason}); reconnecting...`);
    lost = true;
  }
  forwarder.stop();
  err('Stopped.');
  return 0;
}

type Attempt = { ok: true; response: Response } | { ok: false; reason: string; final: boolean };

async function connect(url: URL, signal: AbortSignal): Promise<Attempt> {
  let response: Response;
  try {
    response = await fetch(url, { headers: { Accept: 'text/event-stream' }, signal, redirect: 'error' });
  } catch (error) {
    return { ok: false, reason: `${describeError(error)}; is it running? Start it with 'paylater sandbox', or give its URL with --sandbox`, final: false };
  }
  if (response.status === 200 && (response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    return { ok: true, response };
  }
  const problem = await errorOf(response);
  if (response.status === 404 || response.status === 405 || response.status === 200) {
    return { ok: false, reason: `it does not serve GET /sandbox/webhooks/stream (HTTP ${response.status}); is that URL a paylater sandbox of this version?`, final: true };
  }
  // 503 (too many streams, stopping) and 5xx may pass; 4xx will not.
  return { ok: false, reason: `HTTP ${response.status}${problem}`, final: response.status < 500 };
}

/** Reads the stream until it ends; resolves to why it ended. */
async function follow(
  response: Response,
  forwarder: Forwarder,
  signal: AbortSignal,
  onReady: () => void,
  err: (line: string) => void,
): Promise<string> {
  const body = response.body;
  if (body === null) return 'an empty answer';
  const parser = new SseParser();
  /** The families whose double delivery was told, once each per connection. */
  const warned = new Set<string>();
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let silence: NodeJS.Timeout | undefined;
  let silentFor = 0;
  let timedOut = false;
  const watch = () => {
    if (silentFor === 0) return;
    clearTimeout(silence);
    silence = setTimeout(() => {
      timedOut = true;
      void reader.cancel().catch(() => undefined);
    }, silentFor);
  };
  const onAbort = () => void reader.cancel().catch(() => undefined);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return timedOut ? `no data for ${Math.round(silentFor / 1000)} s` : 'the sandbox closed the stream';
      watch();
      for (const event of parser.push(value)) {
        switch (event.event) {
          case 'ready': {
            const ready = parseJson(event.data) as { heartbeatMs?: unknown } | undefined;
            if (typeof ready?.heartbeatMs === 'number' && ready.heartbeatMs > 0) silentFor = ready.heartbeatMs * 3 + 5_000;
            watch();
            onReady();
            break;
          }
          case 'delivery': {
            const delivery = asEvent(parseJson(event.data));
            if (delivery === undefined) {
              err('warning: the sandbox sent an event this version cannot read; it was skipped');
              break;
            }
            const warning = warned.has(delivery.family) || !isForwarded(delivery) ? undefined : doubleDeliveryWarning(delivery);
            if (warning !== undefined) {
              warned.add(delivery.family);
              err(warning);
            }
            forwarder.add(delivery);
            break;
          }
          case 'overflow': {
            const overflow = parseJson(event.data) as { message?: unknown } | undefined;
            err(`warning: ${typeof overflow?.message === 'string' ? overflow.message : 'the sandbox dropped events this listener fell behind on'}`);
            break;
          }
          case 'close':
            return 'the sandbox is stopping';
          default:
            break;
        }
      }
    }
  } catch (error) {
    return timedOut ? `no data for ${Math.round(silentFor / 1000)} s` : describeError(error);
  } finally {
    clearTimeout(silence);
    signal.removeEventListener('abort', onAbort);
    void reader.cancel().catch(() => undefined);
  }
}

/** `sdk`, `sdk and web`, `sdk, web and gateway`. */
function listed(families: readonly string[]): string {
  return families.length < 2 ? families.join('') : `${families.slice(0, -1).join(', ')} and ${families.at(-1)!}`;
}

/** The receiver without credentials (fetch refuses them in a URL), and their Authorization header. */
interface Receiver {
  url: URL;
  authorization: string | undefined;
}

function receiverOf(forwardTo: URL): Receiver {
  const url = new URL(forwardTo);
  if (url.username === '' && url.password === '') return { url, authorization: undefined };
  const user = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  url.username = '';
  url.password = '';
  return { url, authorization: `Basic ${Buffer.from(user, 'utf8').toString('base64')}` };
}

/** How long the receiver has to answer the first request, which asks for its family. */
const ASK_TIMEOUT_MS = 3_000;

/**
 * The family the receiver verifies, from the {@link FAMILY_HEADER} header of its answer to an
 * unsigned `{}` (which a handler refuses, 401, and does not log); undefined when it does not say,
 * does not answer in time or is not running yet.
 */
async function askReceiver(receiver: Receiver, signal: AbortSignal): Promise<WebhookFamily | undefined> {
  try {
    const response = await fetch(receiver.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(receiver.authorization === undefined ? {} : { Authorization: receiver.authorization }) },
      body: '{}',
      redirect: 'manual',
      signal: AbortSignal.any([AbortSignal.timeout(ASK_TIMEOUT_MS), signal]),
    });
    await response.body?.cancel().catch(() => undefined);
    const named = response.headers.get(FAMILY_HEADER)?.trim().toLowerCase();
    return isWebhookFamily(named) ? named : undefined;
  } catch {
    return undefined;
  }
}

/** Forwards events one at a time, in order, to the receiver; prints one line each. */
class Forwarder {
  private readonly queue: StreamedEvent[] = [];
  private running = false;
  private readonly stopped = new AbortController();
  private readonly target: URL;
  private readonly authorization: string | undefined;

  constructor(
    private readonly options: ListenOptions,
    receiver: Receiver,
  ) {
    this.target = receiver.url;
    this.authorization = receiver.authorization;
  }

  add(event: StreamedEvent): void {
    if (this.queue.length >= MAX_PENDING) {
      this.options.err(`warning: ${MAX_PENDING} events are waiting for the receiver; event ${event.eventId} was not forwarded`);
      return;
    }
    this.queue.push(event);
    if (!this.running) void this.drain();
  }

  stop(): void {
    this.queue.length = 0;
    this.stopped.abort();
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      for (let event = this.queue.shift(); event !== undefined; event = this.queue.shift()) {
        await this.forward(event);
      }
    } finally {
      this.running = false;
    }
  }

  private async forward(event: StreamedEvent): Promise<void> {
    if (!isForwarded(event)) return this.options.out(eventLine(event, NOT_FORWARDED));
    const started = performance.now();
    let answer: string;
    try {
      const response = await fetch(this.target, {
        method: 'POST',
        headers: this.authorization === undefined ? event.headers : { ...event.headers, Authorization: this.authorization },
        body: event.body,
        redirect: 'manual',
        signal: AbortSignal.any([AbortSignal.timeout(FORWARD_TIMEOUT_MS), this.stopped.signal, this.options.signal]),
      });
      const reason = response.ok ? undefined : await receiverReason(response);
      await response.body?.cancel().catch(() => undefined);
      answer = `${response.status}${response.statusText === '' ? '' : ` ${response.statusText}`} in ${elapsed(started)}`;
      if (reason !== undefined) answer += `: ${reason}`;
    } catch (error) {
      if (this.stopped.signal.aborted || this.options.signal.aborted) return;
      answer = `failed after ${elapsed(started)}: ${describeError(error)}`;
    }
    this.options.out(eventLine(event, answer));
  }
}

/** The answer shown for the call to `notes.webhook_url`, which is not forwarded. */
const NOT_FORWARDED = "not forwarded: the call to the initiate's notes.webhook_url (a form post, not a webhook), sent there by the sandbox itself";

/** Whether an event is forwarded: a webhook, not the web flow's call to `notes.webhook_url`. */
function isForwarded(event: Pick<StreamedEvent, 'event'>): boolean {
  return event.event !== 'transactionResult';
}

/** Bytes of a refusing receiver's answer read for its reason. */
const REASON_BYTES = 4096;
/** Characters of that reason printed. */
const REASON_CHARS = 300;

/**
 * Why a receiver refused an event, from the start of its answer: the package's handler answers
 * `{ "error": "invalid_payload", "message": "..." }`, other receivers often a JSON `message` or
 * `error`, or a line of text. Undefined when the answer says nothing readable. At most
 * {@link REASON_BYTES} are read; control characters are dropped (the line is the terminal's).
 */
export async function receiverReason(response: Response): Promise<string | undefined> {
  const reader = response.body?.getReader();
  if (reader === undefined) return undefined;
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  try {
    while (bytes < REASON_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      bytes += value.length;
    }
  } catch {
    return undefined;
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  const text = Buffer.concat(chunks).subarray(0, REASON_BYTES).toString('utf8');
  let reason: string | undefined;
  try {
    const body = JSON.parse(text) as unknown;
    if (typeof body === 'object' && body !== null) {
      const { error, message } = body as { error?: unknown; message?: unknown };
      const parts = [error, message].filter((part): part is string => typeof part === 'string' && part !== '');
      reason = parts.length > 0 ? parts.join(': ') : undefined;
    }
  } catch {
    reason = (response.headers.get('content-type') ?? '').startsWith('text/plain') ? text.split('\n', 1)[0] : undefined;
  }
  if (reason === undefined) return undefined;
  const line = reason.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  if (line === '') return undefined;
  return line.length > REASON_CHARS ? `${line.slice(0, REASON_CHARS)}…` : line;
}

/**
 * `14:02:07  sdk      transactionStatus   SUCCESS    ord_1001  evt_...  -> 200 OK in 4 ms` (local
 * time): the event's status (the transaction's or the refund's, from the body) beside the event.
 */
export function eventLine(event: StreamedEvent, answer: string): string {
  const time = new Date().toTimeString().slice(0, 8);
  return [
    time,
    event.family.padEnd(7),
    event.event.padEnd(18),
    (eventStatus(event) ?? '-').padEnd(9),
    event.transactionId ?? '-',
    event.eventId,
    `-> ${answer}`,
  ].join('  ');
}

/**
 * The status an event reports: `status` of the SDK and web bodies, `transaction.status` and
 * `refund.status` of the gateway's, `txnStatus` of the form sent to `notes.webhook_url`; undefined
 * when the body has none (never thrown on).
 */
export function eventStatus(event: Pick<StreamedEvent, 'body' | 'event'>): string | undefined {
  let status: unknown;
  if (!isForwarded(event)) status = new URLSearchParams(event.body).get('txnStatus');
  else {
    const body = parseJson(event.body) as Record<string, unknown> | undefined;
    if (body === null || typeof body !== 'object') return undefined;
    status = [body, body.transaction, body.refund].find(
      (item): item is Record<string, unknown> => item !== null && typeof item === 'object' && typeof (item as Record<string, unknown>).status === 'string',
    )?.status;
  }
  if (typeof status !== 'string') return undefined;
  // Shown on one line of a terminal: printable ASCII only, and short.
  return status.replace(/[^\x20-\x7e]/g, '?').slice(0, 32);
}

/**
 * The warning for an event the sandbox also sends to a webhook URL of its own (`pending`): a
 * receiver at that URL that `listen` forwards to as well gets the event twice.
 */
export function doubleDeliveryWarning(event: Pick<StreamedEvent, 'family' | 'status'>): string | undefined {
  if (event.status !== 'pending') return undefined;
  const setting = event.family === 'gateway' ? "the merchant's or the transaction's webhook URL" : `its ${event.family} webhook URL (--${event.family}-webhook-url or --webhook-url)`;
  return (
    `warning: the sandbox also delivers ${event.family} events itself, to ${setting}. If that is the receiver listen forwards to, ` +
    'it gets each event twice: receive one way, either the sandbox delivering (with retries) or listen forwarding.'
  );
}

function elapsed(started: number): string {
  return `${Math.round(performance.now() - started)} ms`;
}

function asEvent(value: unknown): StreamedEvent | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const event = value as Record<string, unknown>;
  const strings = ['id', 'eventId', 'family', 'event', 'body', 'createdAt'].every((key) => typeof event[key] === 'string');
  const headers = event.headers;
  const headersOk =
    headers !== null && typeof headers === 'object' && Object.values(headers as object).every((item) => typeof item === 'string');
  return strings && headersOk ? (event as unknown as StreamedEvent) : undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

async function errorOf(response: Response): Promise<string> {
  const text = await response.text().catch(() => '');
  const body = parseJson(text) as { errorCode?: unknown; message?: unknown } | undefined;
  if (typeof body?.message !== 'string') return '';
  return `: ${typeof body.errorCode === 'string' ? `${body.errorCode}: ` : ''}${body.message}`;
}

/**
 * A network error in a few words: `connection refused (ECONNREFUSED)`, `no answer within 10 s`.
 * Credentials that a message might quote from a URL are masked.
 */
function describeError(error: unknown): string {
  return describeErrorText(error).replace(/\/\/[^/@\s]*@/g, '//***@');
}

function describeErrorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === 'TimeoutError') return `no answer within ${FORWARD_TIMEOUT_MS / 1000} s`;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    if (code === 'ECONNREFUSED') return 'connection refused (ECONNREFUSED)';
    if (code === 'ECONNRESET') return 'connection reset (ECONNRESET)';
    if (code === 'ENOTFOUND') return 'unknown host (ENOTFOUND)';
    return typeof code === 'string' ? `${code}: ${cause.message}` : cause.message;
  }
  return error.message;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
