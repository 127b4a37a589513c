/**
 * The webhook client: at most `maxSockets` sockets open over all receivers, idle ones closed least
 * recently used first to make room, a request in flight never cut off, and a status line received
 * counted as the receiver's answer even when the connection fails afterwards. Receivers are
 * told apart by their loopback address (127.0.0.x), on one server.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/sandbox/clock.js';
import { DeliveryDispatcher } from '../../src/sandbox/delivery/index.js';
import { httpSender } from '../../src/sandbox/webhook-client.js';
import { waitFor } from '../support/sandbox.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

interface Receivers {
  port: number;
  url(host: number): string;
  /** Connections the server has open, by the receiver's address. */
  open(host: number): number;
  /** Requests held until released. */
  held: Map<string, () => void>;
}

/** One server for receivers 127.0.0.1, 127.0.0.2, ...: answers 200 at once, or holds paths under /hold/ until released. */
async function receivers(): Promise<Receivers> {
  const open = new Map<string, number>();
  const held = new Map<string, () => void>();
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on('end', () => {
      if (request.url?.startsWith('/hold/')) held.set(request.url, () => response.end('ok'));
      else response.end('ok');
    });
  });
  server.on('connection', (socket: Socket) => {
    const host = socket.localAddress ?? '';
    open.set(host, (open.get(host) ?? 0) + 1);
    socket.on('close', () => open.set(host, (open.get(host) ?? 1) - 1));
  });
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  closers.push(() => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  }));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (host) => `http://127.0.0.${host}:${port}`,
    open: (host) => open.get(`127.0.0.${host}`) ?? 0,
    held,
  };
}

function sender(concurrency: number, maxSockets: number) {
  const send = httpSender({ concurrency, maxSockets });
  closers.push(() => send.close());
  const signal = new AbortController().signal;
  const answer = (url: string) => send({ url, headers: { 'Content-Type': 'application/json' }, body: '{}', timeoutMs: 10_000, signal });
  const post = async (url: string) => (await answer(url)).statusCode;
  return { send, post, answer };
}

describe('httpSender', () => {
  it('keeps at most maxSockets sockets open over all receivers, and every request is answered', async () => {
    const r = await receivers();
    const { send, post } = sender(2, 3);
    const statuses = await Promise.all(Array.from({ length: 24 }, (_, index) => post(`${r.url((index % 8) + 1)}/hook`)));
    expect(statuses).toEqual(Array.from({ length: 24 }, () => 200));
    expect(send.stats().mostOpenSockets).toBe(3);
    expect(send.stats().openSockets).toBeLessThanOrEqual(3);
  });

  it('never cuts off a request in flight: a request beyond the limit waits for a socket instead', async () => {
    const r = await receivers();
    const { send, post } = sender(2, 1);
    const first = post(`${r.url(1)}/hold/a`);
    await waitFor(() => (r.held.has('/hold/a') ? true : undefined));
    const second = post(`${r.url(2)}/hook`);
    await waitFor(() => (send.stats().waiting === 1 ? true : undefined));
    expect(r.open(2)).toBe(0);
    r.held.get('/hold/a')!();
    expect(await first).toBe(200);
    expect(await second).toBe(200);
    expect(send.stats().mostOpenSockets).toBe(1);
  });

  it('closes the idle socket of the receiver used least recently to make room, never one in use', async () => {
    const r = await receivers();
    const { send, post } = sender(2, 3);
    const held = post(`${r.url(1)}/hold/b`); // in flight throughout
    await waitFor(() => (r.held.has('/hold/b') ? true : undefined));
    expect(await post(`${r.url(2)}/hook`)).toBe(200);
    expect(await post(`${r.url(3)}/hook`)).toBe(200);
    expect(await post(`${r.url(2)}/hook`)).toBe(200); // 2 is now used more recently than 3
    expect(send.stats()).toMatchObject({ openSockets: 3, active: 1 });
    expect(await post(`${r.url(4)}/hook`)).toBe(200);
    await waitFor(() => (r.open(3) === 0 ? true : undefined));
    expect([r.open(1), r.open(2), r.open(4)]).toEqual([1, 1, 1]);
    r.held.get('/hold/b')!();
    expect(await held).toBe(200);
    expect(send.stats().mostOpenSockets).toBe(3);
  });

  it('counts a status line received as the answer when the connection is reset while the body is read', async () => {
    const server = createTcpServer((socket) => {
      socket.once('data', () => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\npartial', () => socket.resetAndDestroy());
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const { post } = sender(2, 4);
    expect(await post(url)).toBe(200);

    // The dispatcher records it delivered after one attempt: not sent again.
    const clock = new VirtualClock();
    const dispatcher = new DeliveryDispatcher({ clock, config: { webhooks: { concurrency: 2, maxSockets: 4 } } });
    closers.push(async () => {
      await dispatcher.stop();
      clock.stop();
    });
    const delivery = dispatcher.enqueue({ url, body: '{}', orderingKey: 'k', successStatus: 200, family: 'sdk', event: 'transactionStatus' });
    await dispatcher.idle();
    expect(dispatcher.get(delivery.id)).toMatchObject({ status: 'delivered', attempts: [{ attempt: 1, statusCode: 200, answer: 'partial' }] });
  });

  it("keeps the first 256 bytes of the receiver's answer, cut before a character that does not fit, and says the rest was cut", async () => {
    // 255 bytes, then '€' (3 bytes, which would end at byte 258), then more.
    const long = `${'a'.repeat(255)}€${'b'.repeat(2000)}`;
    const server: Server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.statusCode = request.url === '/long' ? 500 : 200;
        response.end(request.url === '/long' ? long : request.url === '/empty' ? '' : '{"ok":true}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { answer } = sender(2, 4);
    expect(await answer(`${base}/long`)).toEqual({ statusCode: 500, answer: 'a'.repeat(255), answerTruncated: true });
    expect(await answer(`${base}/short`)).toEqual({ statusCode: 200, answer: '{"ok":true}', answerTruncated: false });
    expect(await answer(`${base}/empty`)).toEqual({ statusCode: 200, answer: '', answerTruncated: false });
  });
});
