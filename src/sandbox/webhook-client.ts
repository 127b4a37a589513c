/**
 * How the sandbox POSTs a webhook: node:http(s) with one keep-alive Agent per receiver (scheme, host
 * and port) holding at most `concurrency` sockets (`maxSockets`: a hard limit, whatever the timing
 * of requests ending and starting), and at most `maxSockets` sockets open over all receivers, in
 * use or idle (docs/sandbox.md, "Under load"):
 * - an attempt that would open a socket beyond the overall limit first closes the idle socket used
 *   least recently (of another receiver); when every open socket is in use it waits, in order, for
 *   one to be given back, and its 10 s time limit starts only when it has a socket;
 * - an Agent is never destroyed: its idle sockets are closed (by the limit above, or by Node after
 *   30 s without use), and it is forgotten once it has neither a socket nor a request, so a request in
 *   flight is never cut off;
 * - an answer's status line received is the receiver's answer, even when the connection fails
 *   while the rest of the answer is read: the attempt counts as answered with that status, so a
 *   received event is not sent again;
 * - the first {@link ANSWER_START_BYTES} bytes of the answer's body are kept with the attempt (the
 *   dashboard and the deliveries list show them); the rest is read and thrown away.
 *
 * The receivers are kept in a Map in the order they were last used (a use moves one to the end):
 * that is the LRU order in which idle sockets are closed. An LRU cache package does not fit: it
 * evicts by count, whatever the entry, where an Agent with requests in flight must never be
 * evicted, and what is limited here is sockets, not Agents. Node's own `maxTotalSockets` does not
 * fit either: its requests wait inside the Agent with their time limit running, and a socket closed
 * for one receiver is not reliably handed to a request of another.
 *
 * Node's own http client rather than fetch: a webhook attempt through fetch (undici's Request,
 * Response and web streams, two abort signals) cost several times the CPU of one through
 * node:http, and under a load test the sandbox could not send webhooks as fast as it created them.
 * A fetch given by the caller (tests) is still used as given: see {@link fetchSender}.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import Queue from 'yocto-queue';

interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** Aborted when the sandbox stops. */
  signal: AbortSignal;
}

/** What the receiver answered: its HTTP status and the start of its body. */
interface WebhookAnswer {
  statusCode: number;
  /** The first {@link ANSWER_START_BYTES} bytes of the body at most, as UTF-8 text (an incomplete last character left out). */
  answer: string;
  /** Whether the body went on beyond {@link answer}. */
  answerTruncated: boolean;
}

/** Sends a webhook; resolves to the receiver's answer, rejects with the error of the attempt. */
export type WebhookSender = (request: WebhookRequest) => Promise<WebhookAnswer>;

/**
 * Bytes of an answer's body kept with its attempt: enough for an error's first line or a
 * short JSON answer, little enough that the deliveries held stay within their memory estimate.
 */
const ANSWER_START_BYTES = 256;

/** The start of an answer from its first chunks: at most {@link ANSWER_START_BYTES}, cut at a character. */
class AnswerStart {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private truncated = false;

  add(chunk: Uint8Array): void {
    if (this.kept >= ANSWER_START_BYTES) {
      if (chunk.length > 0) this.truncated = true;
      return;
    }
    const room = ANSWER_START_BYTES - this.kept;
    if (chunk.length > room) this.truncated = true;
    const part = Buffer.from(chunk.buffer, chunk.byteOffset, Math.min(chunk.length, room));
    // A copy: the chunk's buffer may be a pool that later chunks reuse.
    this.chunks.push(Buffer.from(part));
    this.kept += part.length;
  }

  /** Whether the next byte would be beyond the start kept. */
  get full(): boolean {
    return this.truncated;
  }

  answer(statusCode: number): WebhookAnswer {
    // `stream: true` holds back the bytes of a character cut at the end, rather than U+FFFD.
    const answer = new TextDecoder('utf-8').decode(Buffer.concat(this.chunks), { stream: true });
    return { statusCode, answer, answerTruncated: this.truncated };
  }
}

/** The error of an attempt that got no answer within its time limit. */
class WebhookTimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

/** Bytes of an answer read (and thrown away) so that its connection can be reused. */
const DRAIN_LIMIT = 64 * 1024;
/** How long an idle keep-alive socket is kept. */
const IDLE_SOCKET_MS = 30_000;

export interface HttpSenderOptions {
  /** Sockets per receiver (scheme, host and port). */
  concurrency: number;
  /** Sockets open over all receivers, in use or idle. */
  maxSockets: number;
}

/** What the sender knows of one receiver. */
interface Receiver {
  readonly agent: HttpAgent;
  /** Requests in flight. */
  active: number;
  /** Sockets open, in use or idle. */
  open: number;
}

/** The sender's counts, for tests and benchmarks. */
export interface SenderStats {
  /** Sockets open over all receivers, in use or idle. */
  openSockets: number;
  /** The most sockets that were open at once. */
  mostOpenSockets: number;
  /** Requests in flight. */
  active: number;
  /** Requests waiting for a socket. */
  waiting: number;
  /** Receivers with a socket or a request. */
  receivers: number;
}

/** The default sender: node:http(s), at most `concurrency` sockets per receiver and `maxSockets` in all. */
export function httpSender(options: HttpSenderOptions): WebhookSender & { close(): void; stats(): SenderStats } {
  const { concurrency, maxSockets } = options;
  /** In the order of last use: the first is the least recently used. */
  const receivers = new Map<string, Receiver>();
  const waiting = new Queue<Waiting>();
  let openSockets = 0;
  let mostOpenSockets = 0;
  /** Idle sockets closed to make room, whose `close` has not come yet. */
  let closing = 0;
  let active = 0;
  let closed = false;

  const receiverFor = (url: URL): Receiver => {
    let receiver = receivers.get(url.origin);
    if (receiver === undefined) {
      const agentOptions = { keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency, timeout: IDLE_SOCKET_MS };
      const agent = url.protocol === 'https:' ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
      receiver = { agent, active: 0, open: 0 };
      countSockets(url.origin, receiver);
    } else {
      receivers.delete(url.origin);
    }
    receivers.set(url.origin, receiver);
    return receiver;
  };

  const forgetIfUnused = (origin: string, receiver: Receiver): void => {
    if (receiver.open === 0 && receiver.active === 0 && receivers.get(origin) === receiver) receivers.delete(origin);
  };

  /** Counts the sockets the receiver's Agent opens and closes, and forgets it once it has none. */
  const countSockets = (origin: string, receiver: Receiver): void => {
    const create = receiver.agent.createConnection.bind(receiver.agent) as (...args: unknown[]) => Duplex;
    receiver.agent.createConnection = ((...args: unknown[]) => {
      const socket = create(...args);
      openSockets++;
      if (openSockets > mostOpenSockets) mostOpenSockets = openSockets;
      receiver.open++;
      socket.once('close', () => {
        openSockets--;
        receiver.open--;
        forgetIfUnused(origin, receiver);
        pump();
      });
      return socket;
    }) as typeof receiver.agent.createConnection;
  };

  /** An idle keep-alive socket of the receiver, if it has one. */
  const idleSocket = (receiver: Receiver | undefined): Duplex | undefined => {
    if (receiver === undefined || receiver.open <= receiver.active) return undefined;
    for (const sockets of Object.values(receiver.agent.freeSockets)) {
      const socket = sockets?.find((candidate) => !candidate.destroyed);
      if (socket !== undefined) return socket;
    }
    return undefined;
  };

  /**
   * Whether a request to `origin` may start now. When every socket is open and some are idle, the
   * idle socket of the least recently used other receiver is closed, and the request starts when
   * it is (its `close` calls {@link pump}).
   */
  const mayStart = (origin: string): boolean => {
    if (active >= maxSockets) return false;
    const receiver = receivers.get(origin);
    if (openSockets < maxSockets || idleSocket(receiver) !== undefined) return true;
    if (closing === 0) {
      for (const other of receivers.values()) {
        if (other === receiver) continue;
        const socket = idleSocket(other);
        if (socket === undefined) continue;
        closing++;
        socket.once('close', () => {
          closing--;
          pump();
        });
        socket.destroy();
        break;
      }
    }
    return false;
  };

  /** Starts waiting requests, in order, while there is room. */
  const pump = (): void => {
    while (!closed && waiting.size > 0) {
      const next = waiting.peek()!;
      if (next.cancelled) {
        waiting.dequeue();
        continue;
      }
      if (!mayStart(next.origin)) return;
      waiting.dequeue();
      next.start();
    }
  };

  const attempt = (target: URL, request: WebhookRequest): Promise<WebhookAnswer> =>
    new Promise<WebhookAnswer>((resolve, reject) => {
      const { headers, body, timeoutMs, signal } = request;
      const receiver = receiverFor(target);
      receiver.active++;
      active++;
      let status: number | undefined;
      const start = new AnswerStart();
      let settled = false;
      const finish = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        receiver.active--;
        active--;
        outcome();
        forgetIfUnused(target.origin, receiver);
        // After Node has put the socket back among the idle ones (on the next tick), so that a
        // waiting request to the same receiver reuses it.
        setImmediate(pump);
      };
      const outgoing = (target.protocol === 'https:' ? httpsRequest : httpRequest)(
        target,
        {
          method: 'POST',
          agent: receiver.agent,
          headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
          signal,
        },
        (response: IncomingMessage) => {
          clearTimeout(timer);
          status = response.statusCode ?? 0;
          let read = 0;
          response.on('data', (chunk: Buffer) => {
            read += chunk.length;
            start.add(chunk);
            // A big answer is not read to its end: its connection is closed instead.
            if (read > DRAIN_LIMIT) response.destroy();
          });
          const answered = () => finish(() => resolve(start.answer(status!)));
          response.on('end', answered);
          response.on('close', answered);
          response.on('error', answered);
        },
      );
      // Until the answer's headers arrive (as fetch's time limit did).
      const timer = setTimeout(() => outgoing.destroy(new WebhookTimeoutError(`no answer within ${timeoutMs} ms`)), timeoutMs);
      outgoing.on('error', (error) => {
        // The status line was received: that is the receiver's answer, whatever happens next.
        finish(() => (status === undefined ? reject(error) : resolve(start.answer(status))));
      });
      outgoing.on('close', () => {
        // 'error', when there is one, comes first; this only settles an attempt nothing else did.
        setImmediate(() => finish(() => (status === undefined ? reject(new Error('the connection closed before an answer')) : resolve(start.answer(status)))));
      });
      outgoing.end(body);
    });

  const send: WebhookSender = (request) => {
    if (closed) return Promise.reject(new Error('the webhook sender is closed'));
    const target = new URL(request.url);
    if (waiting.size === 0 && mayStart(target.origin)) return attempt(target, request);
    return new Promise<WebhookAnswer>((resolve, reject) => {
      const onAbort = () => {
        entry.cancelled = true;
        reject(request.signal.reason ?? new Error('aborted'));
      };
      const entry: Waiting = {
        origin: target.origin,
        cancelled: false,
        start: () => {
          request.signal.removeEventListener('abort', onAbort);
          attempt(target, request).then(resolve, reject);
        },
      };
      if (request.signal.aborted) {
        onAbort();
        return;
      }
      request.signal.addEventListener('abort', onAbort, { once: true });
      waiting.enqueue(entry);
      pump();
    });
  };

  return Object.assign(send, {
    close() {
      closed = true;
      for (const receiver of receivers.values()) receiver.agent.destroy();
      receivers.clear();
      waiting.clear();
    },
    stats(): SenderStats {
      return { openSockets, mostOpenSockets, active, waiting: waiting.size, receivers: receivers.size };
    },
  });
}

/** A request waiting for a socket. */
interface Waiting {
  readonly origin: string;
  cancelled: boolean;
  start(): void;
}

/** A sender over a fetch function (tests give one to observe or fail attempts). */
export function fetchSender(fetchImpl: typeof fetch): WebhookSender {
  return async ({ url, headers, body, timeoutMs, signal }) => {
    const response = await fetchImpl(url, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), signal]),
    });
    const start = new AnswerStart();
    const reader = response.body?.getReader();
    if (reader !== undefined) {
      // The start of the body, then no more of it.
      try {
        for (let part = await reader.read(); !part.done; part = await reader.read()) {
          start.add(part.value);
          if (start.full) break;
        }
      } catch {
        // The body broke off: its start so far is the answer's start.
      }
      await reader.cancel().catch(() => undefined);
    }
    return start.answer(response.status);
  };
}
