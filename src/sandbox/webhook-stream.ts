/**
 * `GET /sandbox/webhooks/stream`: every webhook the sandbox records, pushed live as Server-Sent
 * Events (text/event-stream) the moment it is enqueued, whether it is then sent to a URL or recorded
 * `not_sent` (no URL configured). `paylater listen` reads it to forward each event, with its exact
 * body and signed headers, to a receiver on the developer's machine.
 *
 * The stream (docs/sandbox.md):
 *
 *   retry: 1000
 *   event: ready           data: {"families":[...],"heartbeatMs":15000,"maxBufferedBytes":1048576}
 *   id: dlv_...            (one per delivery)
 *   event: delivery        data: {"id","eventId","family","event","transactionId","status","body","headers","createdAt"}
 *   : heartbeat <time>     (a comment, every heartbeatMs)
 *   event: overflow        data: {"dropped":n,"message":"..."}   (events were dropped, see below)
 *   event: close           data: {"message":"..."}               (the sandbox is stopping)
 *
 * Bounded: at most `maxConnections` streams at once (more answer 503 `TOO_MANY_STREAMS`); each
 * connection buffers at most `maxBufferedBytes` (what Node holds for the socket included) and one
 * event more. An event that finds the buffer full is dropped and counted (when no reader has
 * room, it is not even written out: readers that fall behind cost nothing per event), and once the
 * reader catches up it gets one `overflow` event saying how many were lost; a reader that stays full for `stallTimeoutMs` is
 * disconnected. Nothing is replayed: `GET /sandbox/webhooks/deliveries` lists every event recorded.
 * `?family=sdk,gateway` (or repeated) keeps only those families.
 *
 * What a reader is behind by is kept here, as the events' bytes, and handed to Node at most
 * {@link PIECE} bytes at a time, joined, once Node's buffer for the socket is empty ('drain'): Node
 * writes everything it holds for a socket in one `writev` when the socket drains, and 16 slow readers
 * each 1 MiB behind had it build and write thousands of chunks in one turn of the event loop (60 ms,
 * the attack suite's `slow-streams`).
 *
 * The router answers whole JSON replies only, so the server hands this path to {@link WebhookStream}
 * before routing (server.ts); its errors use the sandbox endpoints' `{ errorCode, message }` format.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import Denque from 'denque';
import { isWebhookFamily, WEBHOOK_FAMILIES } from '../contract/webhooks.js';
import type { Delivery } from './delivery/index.js';
import type { ErrorHelpers } from './errors.js';
import { send, type IncomingRequest } from './router.js';
import type { SandboxAccess, Tenant } from './access.js';

const STREAM_PATH = '/sandbox/webhooks/stream';
/** The most a reader's queued events hand Node at once, bytes (joined into one write). */
const PIECE = 64 * 1024;

export interface WebhookStreamLimits {
  /** Streams open at once; one more answers 503. */
  maxConnections: number;
  /** Bytes buffered per connection before events are dropped. */
  maxBufferedBytes: number;
  /** How often a comment is sent to keep the connection (and proxies) alive. */
  heartbeatMs: number;
  /** A connection whose buffer stays full this long is closed. */
  stallTimeoutMs: number;
}

const DEFAULT_STREAM_LIMITS: Readonly<WebhookStreamLimits> = Object.freeze({
  maxConnections: 16,
  maxBufferedBytes: 1024 * 1024,
  heartbeatMs: 15_000,
  stallTimeoutMs: 60_000,
});

/** What the stream subscribes to: the dispatcher's `onEnqueue`. */
export interface DeliverySource {
  onEnqueue(listener: (delivery: Delivery) => void): () => void;
}

/** One delivery as the stream sends it: what a receiver gets, never the receiver's URL. */
export interface StreamedDelivery {
  id: string;
  eventId: string;
  family: string;
  event: string;
  transactionId: string | null;
  /** `pending` (the sandbox sends it to its URL too) or `not_sent` (no URL configured). */
  status: string;
  /** The exact body, as signed. */
  body: string;
  /** The headers, as signed and sent (Content-Type, X-Event-Id, X-Signature). */
  headers: Record<string, string>;
  createdAt: string;
}

interface Client {
  response: ServerResponse;
  /** `undefined`: every family. */
  families: ReadonlySet<string> | undefined;
  /** Events dropped since the last `overflow` event. */
  dropped: number;
  /** When the buffer was first seen full (ms), while it stays full. */
  fullSince: number | undefined;
  /** Who reads (access.ts): a hosted sandbox streams each tenant its own events only. */
  tenant: Tenant;
  /** Bytes not handed to Node yet, in order (while Node holds a piece for the socket). */
  queue: Denque<Buffer>;
  queuedBytes: number;
}

/** A stream reader's credentials, as access.ts reads them from any request. */
function credentialsOf(request: IncomingMessage): Pick<IncomingRequest, 'url' | 'rawBody' | 'header'> {
  return {
    url: request.url ?? '',
    rawBody: Buffer.alloc(0),
    header: (name) => {
      const value = request.headers[name.toLowerCase()];
      return Array.isArray(value) ? value[0] : value;
    },
  };
}

export class WebhookStream {
  private readonly limits: WebhookStreamLimits;
  private readonly clients = new Set<Client>();
  /** Subscribed to the source while a stream is open: without readers no event is prepared. */
  private unsubscribe: (() => void) | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly source: DeliverySource,
    private readonly errors: ErrorHelpers,
    limits: Partial<WebhookStreamLimits> = {},
    private readonly access?: SandboxAccess,
  ) {
    this.limits = { ...DEFAULT_STREAM_LIMITS, ...limits };
  }

  /** Whether the request is for the stream's path (any method; others are answered 405). */
  claims(request: IncomingMessage): boolean {
    const url = request.url ?? '';
    return url === STREAM_PATH || url.startsWith(`${STREAM_PATH}?`);
  }

  /** Streams open now. */
  get connections(): number {
    return this.clients.size;
  }

  handle(request: IncomingMessage, response: ServerResponse): void {
    request.resume();
    if (request.method !== 'GET') {
      send(response, this.errors.methodNotAllowed(['GET']));
      return;
    }
    const families = this.familiesOf(request.url ?? '');
    if (!Array.isArray(families) && families !== undefined) {
      send(response, families);
      return;
    }
    if (this.closed) {
      send(response, { ...this.errors.error(503, 'SANDBOX_STOPPING', 'The sandbox is stopping.') });
      return;
    }
    const identified = this.access?.identify(credentialsOf(request)) ?? { ok: true, principal: { kind: 'operator' } as Tenant };
    if (!identified.ok) {
      send(response, identified.reply);
      return;
    }
    if (this.clients.size >= this.limits.maxConnections) {
      send(response, {
        ...this.errors.error(
          503,
          'TOO_MANY_STREAMS',
          `At most ${this.limits.maxConnections} webhook streams may be open at once; close one (another paylater listen?) and try again.`,
        ),
        headers: { 'Retry-After': '5' },
      });
      return;
    }

    const client: Client = {
      response,
      families: families === undefined ? undefined : new Set(families),
      dropped: 0,
      fullSince: undefined,
      tenant: identified.principal,
      queue: new Denque<Buffer>(),
      queuedBytes: 0,
    };
    this.clients.add(client);
    this.unsubscribe ??= this.source.onEnqueue((delivery) => this.publish(delivery));
    response.on('close', () => this.remove(client));
    response.on('drain', () => {
      this.pump(client);
      this.flushOverflow(client);
    });
    request.socket.setNoDelay(true);
    response.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    const ready = {
      families: families ?? WEBHOOK_FAMILIES,
      heartbeatMs: this.limits.heartbeatMs,
      maxBufferedBytes: this.limits.maxBufferedBytes,
    };
    response.write(`retry: 1000\nevent: ready\ndata: ${JSON.stringify(ready)}\n\n`);
    this.heartbeat ??= setInterval(() => this.beat(), this.limits.heartbeatMs).unref();
  }

  /** Ends every stream with a `close` event; resolves once they are flushed (at most 1 s). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.stopHeartbeat();
    const finished = [...this.clients].map(
      (client) =>
        new Promise<void>((resolve) => {
          client.response.once('close', resolve);
          this.flushOverflow(client, true);
          // Stopping: what is queued goes at once, then the close event.
          for (let bytes = client.queue.shift(); bytes !== undefined; bytes = client.queue.shift()) client.response.write(bytes);
          client.queuedBytes = 0;
          client.response.end(`event: close\ndata: ${JSON.stringify({ message: 'The sandbox is stopping.' })}\n\n`, resolve);
        }),
    );
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(finished),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, 1_000);
      }),
    ]);
    clearTimeout(timer);
    this.clients.clear();
  }

  private publish(delivery: Delivery): void {
    if (this.clients.size === 0) return;
    // Readers that stay behind cost nothing more: when none of the readers of this family has room,
    // the event is counted as dropped for each without being written out.
    let room = false;
    for (const client of this.clients) {
      if (!this.reads(client, delivery)) continue;
      if (this.isFull(client)) client.dropped += 1;
      else room = true;
    }
    if (!room) return;
    const streamed: StreamedDelivery = {
      id: delivery.id,
      eventId: delivery.eventId,
      family: delivery.family,
      event: delivery.event,
      transactionId: delivery.transactionId ?? null,
      status: delivery.status,
      body: delivery.body,
      headers: delivery.headers,
      createdAt: delivery.createdAt,
    };
    // JSON.stringify escapes CR and LF, so the data is one line. Serialised and encoded once for
    // every reader: a string written to each response would be encoded to UTF-8 once per reader.
    const bytes = Buffer.from(`id: ${delivery.id}\nevent: delivery\ndata: ${JSON.stringify(streamed)}\n\n`, 'utf8');
    for (const client of this.clients) {
      if (!this.reads(client, delivery)) continue;
      if (this.isFull(client)) continue;
      this.flushOverflow(client);
      this.write(client, bytes);
    }
  }

  /** Writes to a reader in order: at once while Node holds less than a piece for it, else queued. */
  private write(client: Client, bytes: Buffer): void {
    if (client.queuedBytes === 0 && client.response.writableLength < PIECE) {
      client.response.write(bytes);
      return;
    }
    client.queue.push(bytes);
    client.queuedBytes += bytes.length;
  }

  /**
   * Once Node's buffer drained: the queue's next pieces, each joined into one write, until Node
   * asks to wait for 'drain' again (one or two pieces) or the queue is empty.
   */
  private pump(client: Client): void {
    const { queue } = client;
    while (queue.length > 0 && !client.response.destroyed) {
      const piece: Buffer[] = [queue.shift()!];
      let bytes = piece[0]!.length;
      while (queue.length > 0 && bytes + queue.peekFront()!.length <= PIECE) {
        const next = queue.shift()!;
        piece.push(next);
        bytes += next.length;
      }
      client.queuedBytes -= bytes;
      if (!client.response.write(piece.length === 1 ? piece[0]! : Buffer.concat(piece, bytes))) return;
    }
  }

  /** Whether `client` reads `delivery`: of a family it asked for, and its tenant's own. */
  private reads(client: Client, delivery: Delivery): boolean {
    if (client.families !== undefined && !client.families.has(delivery.family)) return false;
    return client.tenant.kind === 'operator' || this.access === undefined || this.access.seesDelivery(client.tenant, delivery);
  }

  private isFull(client: Client): boolean {
    return client.response.writableLength + client.queuedBytes >= this.limits.maxBufferedBytes;
  }

  /** Tells a reader that caught up (or, `last`, a reader about to be closed) how many events it missed. */
  private flushOverflow(client: Client, last = false): void {
    if (client.dropped === 0 || (this.isFull(client) && !last)) return;
    const dropped = client.dropped;
    client.dropped = 0;
    const message =
      `${dropped} webhook event${dropped === 1 ? ' was' : 's were'} dropped: this stream fell more than ` +
      `${this.limits.maxBufferedBytes} bytes behind. GET /sandbox/webhooks/deliveries lists every event.`;
    this.write(client, Buffer.from(`event: overflow\ndata: ${JSON.stringify({ dropped, message })}\n\n`, 'utf8'));
  }

  private beat(): void {
    const now = Date.now();
    for (const client of this.clients) {
      if (!this.isFull(client)) {
        client.fullSince = undefined;
        this.write(client, Buffer.from(`: heartbeat ${new Date(now).toISOString()}\n\n`, 'utf8'));
        continue;
      }
      client.fullSince ??= now;
      if (now - client.fullSince >= this.limits.stallTimeoutMs) {
        // A reader that stopped reading: free its place and its buffer.
        client.response.destroy();
        this.remove(client);
      }
    }
  }

  private remove(client: Client): void {
    this.clients.delete(client);
    if (this.clients.size === 0) {
      this.stopHeartbeat();
      this.unsubscribe?.();
      this.unsubscribe = undefined;
    }
  }

  private stopHeartbeat(): void {
    if (this.heartbeat !== undefined) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  /** The `family` filter of the query: a list, `undefined` for all, or a 400 reply. */
  private familiesOf(url: string): string[] | undefined | ReturnType<ErrorHelpers['badRequest']> {
    const query = new URLSearchParams(url.includes('?') ? url.slice(url.indexOf('?') + 1) : '');
    const given = query.getAll('family').flatMap((value) => value.split(',')).map((value) => value.trim());
    if (given.length === 0) return undefined;
    const unknown = given.filter((family) => !isWebhookFamily(family));
    if (unknown.length > 0 || given.includes('')) {
      return this.errors.badRequest(
        `family must be one or more of ${WEBHOOK_FAMILIES.join(', ')}, separated by commas or repeated.`,
        [{ field: 'family', issue: `must be one of ${WEBHOOK_FAMILIES.join(', ')}` }],
      );
    }
    return [...new Set(given)];
  }
}
