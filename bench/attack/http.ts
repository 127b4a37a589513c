/**
 * HTTP for the attacks: a request that never rejects (a reset, a refusal or a time-out is an
 * answer with status 0 and the error's code) and keeps at most `keepBytes` of the body it reads;
 * a driver that runs `count` requests `concurrency` at a time; and webhook receivers that count
 * what they get. Everything on 127.0.0.1.
 */
import { Agent, createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Reply {
  /** 0 when no answer came. */
  status: number;
  /** The first `keepBytes` of the body, as text. */
  body: string;
  /** The whole body's length. */
  bytes: number;
  headers: IncomingHttpHeaders;
  ms: number;
  /** Why there is no answer: `ECONNRESET`, `ECONNREFUSED`, `timeout`, ... */
  error?: string;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  body?: string | Buffer;
  timeoutMs?: number;
  /** Default 1 MiB. */
  keepBytes?: number;
  agent?: Agent;
}

export function request(base: string, method: string, path: string, options: RequestOptions = {}): Promise<Reply> {
  const url = new URL(base);
  const started = performance.now();
  const keep = options.keepBytes ?? 1024 * 1024;
  return new Promise<Reply>((resolve) => {
    let settled = false;
    const settle = (reply: Omit<Reply, 'ms'>) => {
      if (settled) return;
      settled = true;
      resolve({ ...reply, ms: performance.now() - started });
    };
    const body = options.body;
    const headers: Record<string, string> = { ...options.headers };
    if (body !== undefined) {
      headers['Content-Type'] ??= 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(body));
    }
    const outgoing = httpRequest(
      { host: url.hostname, port: Number(url.port), method, path, headers, agent: options.agent ?? false },
      (response) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        let bytes = 0;
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (kept < keep) {
            chunks.push(chunk.subarray(0, keep - kept));
            kept += Math.min(chunk.length, keep - kept);
          }
        });
        const done = (error?: string) =>
          settle({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), bytes, headers: response.headers, ...(error === undefined ? {} : { error }) });
        response.on('end', () => done());
        response.on('error', (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
        response.on('close', () => done(response.complete ? undefined : 'ECONNRESET'));
      },
    );
    outgoing.setTimeout(options.timeoutMs ?? 30_000, () => outgoing.destroy(Object.assign(new Error('timeout'), { code: 'timeout' })));
    outgoing.on('error', (error: NodeJS.ErrnoException) => settle({ status: 0, body: '', bytes: 0, headers: {}, error: error.code ?? error.message }));
    outgoing.end(body);
  });
}

/**
 * Runs `make(index)` for index 0..count-1, `concurrency` at a time; stops early once `stop()` says
 * so (checked before each request).
 */
export async function drive(count: number, concurrency: number, make: (index: number) => Promise<unknown>, stop: () => boolean = () => false): Promise<number> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count && !stop()) await make(next++);
    }),
  );
  return next;
}

/** One webhook receiver on 127.0.0.1: counts the connections and every event id it answered 200. */
export interface Receiver {
  url: string;
  port: number;
  /** Requests received. */
  requests: number;
  /** Connections open now and most at once. */
  openConnections: number;
  peakConnections: number;
  /** Connections accepted in all. */
  connections: number;
  close(): Promise<void>;
}

export interface ReceiverOptions {
  /** Called with each request's X-Event-Id; the answer is 200 when it returns. */
  onEvent?: (eventId: string) => void;
  /** Called once the 200 was handed to the connection (`finish`): the receiver answered it. */
  onAnswered?: (eventId: string) => void;
  /** Called when a connection opens and closes (to count the sandbox's sockets over all receivers). */
  onConnection?: (delta: 1 | -1) => void;
  path?: string;
}

export async function startReceiver(options: ReceiverOptions = {}): Promise<Receiver> {
  const sockets = new Set<Socket>();
  const receiver = {
    url: '',
    port: 0,
    requests: 0,
    openConnections: 0,
    peakConnections: 0,
    connections: 0,
    close: async () => undefined,
  } satisfies Receiver as Receiver;
  const server: Server = createServer((incoming, response) => {
    incoming.resume();
    incoming.on('end', () => {
      receiver.requests++;
      const eventId = String(incoming.headers['x-event-id'] ?? '');
      options.onEvent?.(eventId);
      response.once('finish', () => options.onAnswered?.(eventId));
      response.writeHead(200, { 'Content-Length': '2' }).end('ok');
    });
  });
  server.keepAliveTimeout = 60_000;
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    receiver.connections++;
    receiver.openConnections++;
    receiver.peakConnections = Math.max(receiver.peakConnections, receiver.openConnections);
    options.onConnection?.(1);
    socket.once('close', () => {
      sockets.delete(socket);
      receiver.openConnections--;
      options.onConnection?.(-1);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}${options.path ?? '/hook'}`;
  receiver.close = () =>
    new Promise<void>((done) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => done());
    });
  return receiver;
}

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** Waits until `check()` holds or `timeoutMs` passed; whether it held. */
export async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 100): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (performance.now() > deadline) return false;
    await sleep(everyMs);
  }
}
