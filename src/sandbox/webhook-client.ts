/**
 * How the sandbox POSTs a webhook: node:http(s) with one keep-alive Agent per receiver (scheme, host
 * and port) holding at most `concurrency` sockets (`maxSockets`: a hard limit, whatever the timing
 * of requests ending and starting).
 *
 * Node's own http client rather than fetch: a webhook attempt through fetch (undici's Request,
 * Response and web streams, two abort signals) cost several times the CPU of one through
 * node:http, and under a load test the sandbox could not send webhooks as fast as it created them.
 * A fetch given by the caller (tests) is still used as given: see {@link fetchSender}.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** Aborted when the sandbox stops. */
  signal: AbortSignal;
}

/** Sends a webhook; resolves to the receiver's HTTP status, rejects with the error of the attempt. */
export type WebhookSender = (request: WebhookRequest) => Promise<number>;

/** The error of an attempt that got no answer within its time limit. */
export class WebhookTimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

/** Bytes of an answer read (and thrown away) so that its connection can be reused. */
const DRAIN_LIMIT = 64 * 1024;

/** The default sender: node:http(s) with a pool of at most `concurrency` sockets per receiver. */
export function httpSender(concurrency: number): WebhookSender & { close(): void } {
  const agents = new Map<string, HttpAgent>();
  const agentFor = (url: URL): HttpAgent => {
    let agent = agents.get(url.origin);
    if (agent === undefined) {
      const options = { keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency, timeout: 30_000 };
      agent = url.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options);
      // Receivers are few; an origin no longer used keeps at most its idle sockets, which time out.
      if (agents.size >= 1000) {
        for (const old of agents.values()) old.destroy();
        agents.clear();
      }
      agents.set(url.origin, agent);
    }
    return agent;
  };

  const send: WebhookSender = ({ url, headers, body, timeoutMs, signal }) =>
    new Promise<number>((resolve, reject) => {
      const target = new URL(url);
      const request = (target.protocol === 'https:' ? httpsRequest : httpRequest)(
        target,
        {
          method: 'POST',
          agent: agentFor(target),
          headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
          signal,
        },
        (response: IncomingMessage) => {
          clearTimeout(timer);
          const status = response.statusCode ?? 0;
          let read = 0;
          response.on('data', (chunk: Buffer) => {
            read += chunk.length;
            // A big answer is not read to its end: its connection is closed instead.
            if (read > DRAIN_LIMIT) response.destroy();
          });
          response.on('end', () => resolve(status));
          response.on('close', () => resolve(status));
          response.on('error', () => resolve(status));
        },
      );
      // Until the answer's headers arrive (as fetch's time limit did).
      const timer = setTimeout(() => request.destroy(new WebhookTimeoutError(`no answer within ${timeoutMs} ms`)), timeoutMs);
      request.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      request.end(body);
    });

  return Object.assign(send, {
    close() {
      for (const agent of agents.values()) agent.destroy();
      agents.clear();
    },
  });
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
    await response.body?.cancel().catch(() => undefined);
    return response.status;
  };
}
