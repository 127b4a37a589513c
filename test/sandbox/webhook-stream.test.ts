/**
 * GET /sandbox/webhooks/stream: every delivery pushed live as Server-Sent Events, not_sent ones
 * included, with the exact body and signed headers; and its bounds (connections, buffering, stalled
 * readers), heartbeats and clean close, checked on a stream fed by hand.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { SseParser, type SseEvent } from '../../src/cli/sse.js';
import type { Delivery } from '../../src/sandbox/delivery/index.js';
import { errorHelpers } from '../../src/sandbox/errors.js';
import { WebhookStream, type WebhookStreamLimits } from '../../src/sandbox/webhook-stream.js';
import { verifySdkWebhook, verifyWebWebhook } from '../../src/webhooks/index.js';
import { initiateSdk, PRIVATE_KEY, startSandbox, waitFor, type TestSandbox } from '../support/sandbox.js';

/** An open stream read with fetch: the events so far, and a way to wait for more. */
interface Reader {
  /** The text received, comments included. */
  raw: string[];
  status: number;
  headers: Headers;
  events: SseEvent[];
  /** Resolves when the answer ended. */
  ended: Promise<void>;
  next(name: string, count?: number): Promise<SseEvent[]>;
  close(): void;
}

async function open(url: string): Promise<Reader> {
  const abort = new AbortController();
  const response = await fetch(url, { headers: { Accept: 'text/event-stream' }, signal: abort.signal });
  const events: SseEvent[] = [];
  const raw: string[] = [];
  const parser = new SseParser();
  const ended = (async () => {
    if (response.body === null) return;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        raw.push(read.value);
        events.push(...parser.push(read.value));
      }
    } catch {
      // Aborted by close().
    }
  })();
  return {
    raw,
    status: response.status,
    headers: response.headers,
    events,
    ended,
    next: (name, count = 1) =>
      waitFor(() => {
        const found = events.filter((event) => event.event === name);
        return found.length >= count ? found : undefined;
      }),
    close: () => abort.abort(),
  };
}

describe('the webhook stream of the sandbox', () => {
  let t: TestSandbox | undefined;
  const readers: Reader[] = [];
  afterEach(async () => {
    for (const reader of readers.splice(0)) reader.close();
    if (t !== undefined) expect(t.loggedErrors).toEqual([]);
    await t?.close();
    t = undefined;
  });

  it('streams not_sent deliveries with the exact body and the signed headers', async () => {
    t = await startSandbox();
    const reader = await open(`${t.url}/sandbox/webhooks/stream`);
    readers.push(reader);
    expect(reader.status).toBe(200);
    expect(reader.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const [ready] = await reader.next('ready');
    expect(JSON.parse(ready!.data)).toMatchObject({ families: ['gateway', 'web', 'sdk'], heartbeatMs: 15_000 });

    const id = `stream_${Date.now()}`;
    await initiateSdk(t, id);
    expect((await t.request('POST', `/sandbox/sdk/transactions/${id}/confirm`)).status).toBe(200);
    const [event] = await reader.next('delivery');
    const streamed = JSON.parse(event!.data);
    const [recorded] = await t.deliveries(id);
    expect(recorded.status).toBe('not_sent');
    expect(event!.id).toBe(recorded.id);
    expect(streamed).toEqual({
      id: recorded.id,
      eventId: recorded.eventId,
      family: 'sdk',
      event: 'transactionStatus',
      transactionId: id,
      status: 'not_sent',
      body: recorded.body,
      headers: recorded.headers,
      createdAt: recorded.createdAt,
    });
    const verified = verifySdkWebhook(streamed.body, streamed.headers, PRIVATE_KEY);
    expect(verified).toEqual({ name: 'transactionStatus', eventId: recorded.eventId, payload: { merchantTransactionId: id, status: 'SUCCESS' } });
  });

  it('keeps only the families asked for, and refuses a bad request in the sandbox error format', async () => {
    t = await startSandbox();
    const webOnly = await open(`${t.url}/sandbox/webhooks/stream?family=web`);
    readers.push(webOnly);
    await webOnly.next('ready');
    const sdkId = `sdk_${Date.now()}`;
    await initiateSdk(t, sdkId);
    expect((await t.request('POST', `/sandbox/sdk/transactions/${sdkId}/confirm`)).status).toBe(200);
    const webId = `web_${Date.now()}`;
    const initiated = await t.web('POST', '/api/transaction', { id: webId, amount: 150_000, user: { name: 'Asha Rao', phoneNumber: '+919000000001' } });
    expect(initiated.status).toBe(200);
    await t.request('POST', `/sandbox/web/transactions/${webId}/cancel`);
    const [event] = await webOnly.next('delivery');
    const streamed = JSON.parse(event!.data);
    expect(streamed.family).toBe('web');
    expect(verifyWebWebhook(streamed.body, streamed.headers, PRIVATE_KEY).payload.status).toBe('CANCELLED');
    expect(webOnly.events.filter((e) => e.event === 'delivery')).toHaveLength(1);

    const unknown = await fetch(`${t.url}/sandbox/webhooks/stream?family=sdk,extras`);
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toEqual({
      errorCode: 'BAD_REQUEST',
      message: 'family must be one or more of gateway, web, sdk, separated by commas or repeated.',
      details: [{ field: 'family', issue: 'must be one of gateway, web, sdk' }],
      requestId: unknown.headers.get('x-request-id'),
    });
    const post = await fetch(`${t.url}/sandbox/webhooks/stream`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
    expect((await post.json()).errorCode).toBe('METHOD_NOT_ALLOWED');
  });

  it('ends every stream with a close event when the sandbox stops', async () => {
    t = await startSandbox();
    const reader = await open(`${t.url}/sandbox/webhooks/stream`);
    await reader.next('ready');
    await t.close();
    t = undefined;
    await reader.ended;
    expect(reader.events.at(-1)).toEqual({ event: 'close', data: JSON.stringify({ message: 'The sandbox is stopping.' }), id: undefined });
  });
});

// ---------------------------------------------------------------------------------------------
// The bounds, on a stream fed by hand.

class Source {
  private listener: ((delivery: Delivery) => void) | undefined;
  onEnqueue(listener: (delivery: Delivery) => void): () => void {
    this.listener = listener;
    return () => {
      this.listener = undefined;
    };
  }
  emit(delivery: Delivery): void {
    this.listener?.(delivery);
  }
}

let sequence = 0;
function delivery(bodyBytes = 100): Delivery {
  const n = sequence++;
  return {
    id: `dlv_${n}`,
    eventId: `evt_${n}`,
    family: 'sdk',
    event: 'transactionStatus',
    transactionId: `txn_${n}`,
    url: null,
    body: JSON.stringify({ merchantTransactionId: `txn_${n}`, status: 'SUCCESS', pad: 'x'.repeat(bodyBytes) }),
    headers: { 'Content-Type': 'application/json', 'X-Event-Id': `evt_${n}`, 'X-Signature': 'x'.repeat(43) + '=' },
    orderingKey: `sdk:p:txn_${n}`,
    successStatus: 200,
    status: 'not_sent',
    attempts: [],
    createdAt: new Date().toISOString(),
    nextAttemptAt: null,
    completedAt: null,
  };
}

interface Harness {
  url: string;
  source: Source;
  stream: WebhookStream;
  responses: ServerResponse[];
  close(): Promise<void>;
}

async function harness(limits: Partial<WebhookStreamLimits>): Promise<Harness> {
  const source = new Source();
  const stream = new WebhookStream(source, errorHelpers('apiError'), limits);
  const responses: ServerResponse[] = [];
  const server: Server = createServer((request, response) => {
    responses.push(response);
    stream.handle(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/sandbox/webhooks/stream`,
    source,
    stream,
    responses,
    async close() {
      await stream.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** A client that sends the request and then reads nothing until told to. */
async function slowReader(url: string): Promise<{ socket: Socket; read(): Promise<string> }> {
  const { hostname, port, pathname } = new URL(url);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.pause();
  // HTTP/1.0: the answer is the raw event stream until the connection closes (no chunked encoding).
  socket.write(`GET ${pathname} HTTP/1.0\r\nHost: ${hostname}\r\nAccept: text/event-stream\r\n\r\n`);
  return {
    socket,
    /** Reads until the server closes the connection. */
    read: () =>
      new Promise<string>((resolve) => {
        const chunks: Buffer[] = [];
        socket.on('data', (chunk: Buffer) => chunks.push(chunk));
        socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        socket.resume();
      }),
  };
}

describe('the bounds of the webhook stream', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('refuses a stream over the connection cap with 503 and Retry-After', async () => {
    h = await harness({ maxConnections: 2 });
    const first = await open(h.url);
    const second = await open(h.url);
    await Promise.all([first.next('ready'), second.next('ready')]);
    const third = await fetch(h.url);
    expect(third.status).toBe(503);
    expect(third.headers.get('retry-after')).toBe('5');
    expect((await third.json()).errorCode).toBe('TOO_MANY_STREAMS');
    first.close();
    await waitFor(() => (h!.stream.connections === 1 ? true : undefined));
    const again = await open(h.url);
    expect(again.status).toBe(200);
    second.close();
    again.close();
  });

  it('drops events for a reader that falls behind, within its buffer, and then says how many', async () => {
    const maxBufferedBytes = 64 * 1024;
    h = await harness({ maxBufferedBytes, heartbeatMs: 60_000 });
    const reader = await slowReader(h.url);
    await waitFor(() => (h!.stream.connections === 1 ? true : undefined));
    const response = h.responses[0]!;

    const total = 3000;
    const eventBytes = 8 * 1024;
    let largest = 0;
    for (let n = 0; n < total; n++) {
      h.source.emit(delivery(eventBytes));
      largest = Math.max(largest, response.writableLength);
      if (n % 50 === 49) await nextTurn();
    }
    // Never more than the cap plus the one event that crossed it.
    expect(largest).toBeLessThanOrEqual(maxBufferedBytes + eventBytes + 1024);

    // Read everything, up to the close event of the stream's end.
    const reading = reader.read();
    await h.stream.close();
    const text = await reading;
    const events = new SseParser().push(text.slice(text.indexOf('\r\n\r\n') + 4));
    expect(events.at(-1)?.event).toBe('close');
    const overflows = events.filter((event) => event.event === 'overflow').map((event) => JSON.parse(event.data) as { dropped: number; message: string });
    expect(overflows.length).toBeGreaterThan(0);
    for (const { dropped, message } of overflows) {
      expect(message).toBe(`${dropped} webhook event${dropped === 1 ? ' was' : 's were'} dropped: this stream fell more than 65536 bytes behind. GET /sandbox/webhooks/deliveries lists every event.`);
    }
    const dropped = overflows.reduce((sum, overflow) => sum + overflow.dropped, 0);
    expect(dropped).toBeGreaterThan(0);
    const received = events.filter((event) => event.event === 'delivery').length;
    expect(received + dropped).toBe(total);
  });

  it('keeps what a slow reader is behind by, hands Node a piece at a time, and delivers every event in order', async () => {
    const maxBufferedBytes = 1024 * 1024;
    h = await harness({ maxBufferedBytes, heartbeatMs: 60_000 });
    const reader = await slowReader(h.url);
    await waitFor(() => (h!.stream.connections === 1 ? true : undefined));
    const response = h.responses[0]!;

    // About 600 KB: behind, but within the buffer, so nothing is dropped.
    const total = 600;
    const eventBytes = 1024;
    let largest = 0;
    for (let n = 0; n < total; n++) {
      h.source.emit(delivery(eventBytes));
      largest = Math.max(largest, response.writableLength);
      if (n % 50 === 49) await nextTurn();
    }
    // What Node holds for the socket (and writes in one go when it drains) stays one piece of 64 KiB
    // and an event, whatever the reader is behind by.
    expect(largest).toBeLessThanOrEqual(64 * 1024 + eventBytes + 1024);

    const reading = reader.read();
    await h.stream.close();
    const text = await reading;
    const events = new SseParser().push(text.slice(text.indexOf('\r\n\r\n') + 4));
    expect(events.filter((event) => event.event === 'overflow')).toEqual([]);
    const ids = events.filter((event) => event.event === 'delivery').map((event) => (JSON.parse(event.data) as { id: string }).id);
    expect(ids).toHaveLength(total);
    const first = Number(ids[0]!.slice('dlv_'.length));
    expect(ids).toEqual(Array.from({ length: total }, (_, index) => `dlv_${first + index}`));
    expect(events.at(-1)?.event).toBe('close');
  });

  it('sends every reader the same bytes of an event, other alphabets included', async () => {
    h = await harness({ heartbeatMs: 60_000 });
    const first = await open(h.url);
    const second = await open(h.url);
    await Promise.all([first.next('ready'), second.next('ready')]);
    const event = { ...delivery(), body: JSON.stringify({ note: '₹1,500 — नमस्ते', status: 'SUCCESS' }) };
    h.source.emit(event);
    const [a] = await first.next('delivery');
    const [b] = await second.next('delivery');
    expect(a).toEqual(b);
    expect(JSON.parse(a!.data).body).toBe(event.body);
    first.close();
    second.close();
  });

  it('sends heartbeats, and disconnects a reader that stays full', async () => {
    h = await harness({ maxBufferedBytes: 16 * 1024, heartbeatMs: 50, stallTimeoutMs: 300 });
    const live = await open(h.url);
    // Heartbeats are comments, every 50 ms here.
    await waitFor(() => (live.raw.join('').match(/^: heartbeat \S+\n\n/gm)?.length ?? 0) >= 2 || undefined);
    const stalled = await slowReader(h.url);
    await waitFor(() => (h!.stream.connections === 2 ? true : undefined));
    // Until the socket's kernel buffers are full too and Node holds the rest.
    for (let n = 0; n < 5000; n++) {
      h.source.emit(delivery(8 * 1024));
      if (n % 20 !== 19) continue;
      await new Promise((resolve) => setTimeout(resolve, 2));
      if (h.responses[1]!.writableLength >= 16 * 1024) break;
    }
    expect(h.responses[1]!.writableLength).toBeGreaterThanOrEqual(16 * 1024);
    // The stalled reader is disconnected once full for 300 ms; reading now finds the connection closed.
    await waitFor(() => (h!.stream.connections === 1 && h!.responses[1]!.destroyed ? true : undefined));
    const closed = new Promise<void>((resolve) => stalled.socket.once('close', () => resolve()));
    stalled.socket.on('error', () => undefined);
    stalled.socket.resume();
    await closed;
    // The live reader kept up and is still there, and got every event.
    expect(live.events.filter((event) => event.event === 'delivery').length).toBeGreaterThan(0);
    live.close();
  });
});

describe('the event-stream reader', () => {
  it('splits on LF, CR and CRLF, across chunks, and joins data lines', () => {
    const parser = new SseParser();
    const text = 'retry: 1000\r\nevent: ready\r\ndata: {"a":1}\r\n\r\n: heartbeat\n\nid: 7\nevent: delivery\ndata: one\ndata: two\r\rdata: last\n\n';
    const events: SseEvent[] = [];
    for (let at = 0; at < text.length; at += 3) events.push(...parser.push(text.slice(at, at + 3)));
    expect(events).toEqual([
      { event: 'ready', data: '{"a":1}', id: undefined },
      { event: 'delivery', data: 'one\ntwo', id: '7' },
      { event: 'message', data: 'last', id: '7' },
    ]);
  });

  it('refuses a line longer than its limit', () => {
    const parser = new SseParser(100);
    expect(() => parser.push(`data: ${'x'.repeat(200)}`)).toThrow(/longer than 100/);
  });
});
