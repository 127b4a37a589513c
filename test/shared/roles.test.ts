/**
 * The roles of a shared sandbox's processes (shared-role.ts) on a real PostgreSQL: the first to
 * start is the writer and the others forward to it; when the writer goes, one of the others takes
 * the role within seconds, reads every record, and the rest forward to it; a forwarding process
 * that cannot reach a writer answers 503 with Retry-After in its family's error format.
 */
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Forwarder } from '../../src/sandbox/forward.js';
import { errorHelpers } from '../../src/sandbox/errors.js';
import { TunnelAcceptor } from '../../src/sandbox/tunnel-ends.js';
import { freePort } from '../support/processes.js';
import { startSandbox, waitFor, type TestSandbox } from '../support/sandbox.js';
import { postgresUnavailable, startPostgres, type PostgresCluster } from '../support/postgres.js';

// Without PostgreSQL this throws (the run fails) unless PAYLATER_SKIP_POSTGRES=1 asks to skip.
const unavailable = postgresUnavailable();
if (unavailable !== undefined) console.warn(`shared-store role tests skipped: ${unavailable}`);

const initiate = (t: TestSandbox, id: string) =>
  t.sdk('/merchant/credit/initiateTransaction', { merchantTransactionId: id, userPhoneNumber: '+919876543210', userId: 'u', amount: 10_000 });
const roleCheck = async (t: TestSandbox) => {
  const answer = await fetch(t.sandbox.roleCheckUrl!);
  return { status: answer.status, body: (await answer.json()) as unknown };
};
const status = async (t: TestSandbox, id: string) => (await t.sdk('/merchant/credit/checkTransactionStatus', { merchantTransactionId: id })).body;

describe.skipIf(unavailable !== undefined)('three sandbox processes on one database', () => {
  let cluster: PostgresCluster;
  const started: TestSandbox[] = [];

  beforeAll(async () => {
    cluster = (await startPostgres())!;
    const databaseUrl = await cluster.createDatabase();
    for (let index = 0; index < 3; index++) started.push(await startSandbox({ databaseUrl, config: { rolePort: 0 } }));
  }, 60_000);
  afterAll(async () => {
    for (const t of started) await t.close();
    await cluster?.stop();
  });

  it('have one writer, the first; the others forward to it, and a new writer takes over within seconds when it goes', async () => {
    const [a, b, c] = started as [TestSandbox, TestSandbox, TestSandbox];
    expect([a.sandbox.role, b.sandbox.role, c.sandbox.role]).toEqual(['writer', 'forwarding', 'forwarding']);
    // Written through each: the writer serves them all.
    expect((await initiate(b, 'roles-1')).status).toBe(201);
    expect((await initiate(c, 'roles-2')).status).toBe(201);
    expect((await initiate(a, 'roles-1')).body.message).toBe('DUPLICATE_TRANSACTION_ID');
    expect((await b.request('POST', '/sandbox/sdk/transactions/roles-2/confirm')).status).toBe(200);
    // Only the writer holds records: a forwarding process reads none.
    expect(b.sandbox.store.collection('sdk.transactions').size + c.sandbox.store.collection('sdk.transactions').size).toBe(0);

    // A load balancer's health check (--role-port) finds the writer: 200 there, 503 on the others.
    expect(await Promise.all([a, b, c].map(roleCheck))).toEqual([
      { status: 200, body: { role: 'writer', serves: true } },
      { status: 503, body: { role: 'forwarding', serves: false } },
      { status: 503, body: { role: 'forwarding', serves: false } },
    ]);

    await a.close();
    const writer = await waitFor(() => [b, c].find((t) => t.sandbox.role === 'writer'), 15_000);
    const other = writer === b ? c : b;
    expect(other.sandbox.role).toBe('forwarding');
    expect(await roleCheck(writer)).toEqual({ status: 200, body: { role: 'writer', serves: true } });
    expect((await roleCheck(other)).status).toBe(503);
    // The new writer read every record; the other forwards to it once it is found.
    await waitFor(async () => ((await status(other, 'roles-1')).message === 'PENDING' ? true : undefined), 10_000);
    expect(await status(writer, 'roles-2')).toEqual({ message: 'SUCCESS' });
    expect((await initiate(other, 'roles-3')).status).toBe(201);
    expect(await status(writer, 'roles-3')).toEqual({ message: 'PENDING' });
  }, 60_000);
});

describe('a forwarding process without a writer to reach', () => {
  let server: Server;
  let url: string;

  beforeAll(async () => {
    const closedPort = await freePort();
    const forwarder = new Forwarder((path) => errorHelpers(path.startsWith('/merchant/') ? 'messageError' : 'apiError'));
    server = createServer((request, response) => {
      const target = request.url?.includes('none') === true ? undefined : { host: '127.0.0.1', port: closedPort };
      forwarder.forward(target, request, response);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('answers 503 with Retry-After in the family format, saying to send it again, and reads the body away', async () => {
    const unreachable = await fetch(`${url}/merchant/credit/checkTransactionStatus`, { method: 'POST', body: JSON.stringify({ merchantTransactionId: 'x' }) });
    expect(unreachable.status).toBe(503);
    expect(unreachable.headers.get('retry-after')).toBe('2');
    const body = (await unreachable.json()) as Record<string, unknown>;
    expect(body.message).toBe('SERVICE_UNAVAILABLE');
    expect(String(body.detail)).toMatch(/writer process cannot be reached.*Send the request again in 2 s/);
    const none = await fetch(`${url}/api/merchant/none`, { method: 'POST', body: 'x'.repeat(100_000) });
    expect(none.status).toBe(503);
    const noneBody = (await none.json()) as Record<string, unknown>;
    expect(noneBody.errorCode).toBe('SERVICE_UNAVAILABLE');
    expect(String(noneBody.message)).toMatch(/has no writer process right now/);
    expect(noneBody.requestId).toMatch(/^req_/);
  });
});

describe('connections relayed to the writer (Forwarder.relayConnections)', () => {
  let upstream: Server;
  /** The connections on which the writer received requests. */
  const requestSockets = new Set<unknown>();
  let upstreamPort: number;
  let closedPort: number;
  let front: Server;
  let frontUrl: string;
  let target: { host: string; port: number } | undefined;
  let forwarder: Forwarder;

  beforeAll(async () => {
    upstream = createServer((request, response) => {
      requestSockets.add(request.socket);
      response.setHeader('Content-Type', 'application/json');
      response.end(JSON.stringify({ served: 'upstream', url: request.url, header: request.headers['x-probe'] ?? null }));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamPort = (upstream.address() as AddressInfo).port;
    closedPort = await freePort();
    forwarder = new Forwarder((path) => errorHelpers(path.startsWith('/merchant/') ? 'messageError' : 'apiError'));
    front = createServer((request, response) => {
      response.setHeader('Content-Type', 'application/json');
      response.end(JSON.stringify({ served: 'front' }));
    });
    forwarder.relayConnections(front, () => target);
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    frontUrl = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    forwarder.close();
    for (const s of [front, upstream]) {
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
    }
  });

  /** Sends `raw` on a new connection (after `delayMs`), and reads until the connection ends. */
  const exchange = (raw: string, delayMs = 0) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port: (front.address() as AddressInfo).port });
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('error', reject);
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
      socket.on('connect', () => setTimeout(() => socket.write(raw), delayMs));
    });

  it('joins each connection to one of its own to the writer, every request of it passed as sent', async () => {
    target = { host: '127.0.0.1', port: upstreamPort };
    requestSockets.clear();
    const raw =
      'GET /first HTTP/1.1\r\nHost: x\r\nX-Probe: one\r\n\r\n' + 'GET /second HTTP/1.1\r\nHost: x\r\nX-Probe: two\r\nConnection: close\r\n\r\n';
    const answer = await exchange(raw);
    expect(answer.match(/"served":"upstream"/g)).toHaveLength(2);
    expect(answer).toContain('"url":"/first","header":"one"');
    expect(answer).toContain('"url":"/second","header":"two"');
    expect(requestSockets.size).toBe(1);
  });

  it('serves a connection itself when no writer is known', async () => {
    target = undefined;
    const answer = await fetch(`${frontUrl}/anything`, { headers: { connection: 'close' } });
    expect(await answer.json()).toEqual({ served: 'front' });
  });

  it('answers 503 in the family format when the writer cannot be reached, even for a request line that comes later', async () => {
    target = { host: '127.0.0.1', port: closedPort };
    for (const delayMs of [0, 150]) {
      const answer = await exchange('POST /merchant/credit/checkTransactionStatus HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}', delayMs);
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 503 /);
      expect(head).toMatch(/\r\nRetry-After: 2\r\n/);
      const parsed = JSON.parse(body) as Record<string, unknown>;
      expect(parsed.message).toBe('SERVICE_UNAVAILABLE');
      expect(String(parsed.detail)).toMatch(/writer process cannot be reached.*Send the request again in 2 s/);
      expect(parsed.requestId).toMatch(/^req_/);
    }
    const gateway = await exchange('GET /api/merchant/m_1 HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(JSON.parse(gateway.split('\r\n\r\n')[1] ?? '')).toMatchObject({ errorCode: 'SERVICE_UNAVAILABLE' });
  });
});

describe.each([
  { over: 'a TCP connection of its own', tunnel: false },
  { over: 'a tunnel (tunnel-ends.ts)', tunnel: true },
])('a connection relayed over $over whose writer goes', ({ tunnel }) => {
  it('answers 503 in the family format to a request under way, and to the next request of an idle connection, never a dropped connection; ends it when the writer closed it', async () => {
    const writer = createServer((request, response) => {
      // The writer dies under this request: its connection closes without an answer.
      if (request.url === '/merchant/credit/die') {
        request.socket.destroy();
        return;
      }
      response.setHeader('Content-Type', 'application/json');
      response.end('{"served":"writer"}');
    });
    // A writer's HTTP server closes an idle connection after this long (its keep-alive timeout).
    writer.keepAliveTimeout = 300;
    const tunnels = tunnel ? new TunnelAcceptor(writer, (id) => id === 'w1', 100, errorHelpers('apiError')) : undefined;
    await new Promise<void>((resolve) => writer.listen(0, '127.0.0.1', resolve));
    const target = { host: '127.0.0.1', port: (writer.address() as AddressInfo).port, ...(tunnel ? { id: 'w1' } : {}) };
    const forwarder = new Forwarder((path) => errorHelpers(path.startsWith('/merchant/') ? 'messageError' : 'apiError'));
    const front = createServer(() => undefined);
    forwarder.relayConnections(front, () => target);
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    const frontPort = (front.address() as AddressInfo).port;
    const open = () =>
      new Promise<{ send: (raw: string) => Promise<string>; closed: Promise<void> }>((resolve) => {
        const socket = connect({ host: '127.0.0.1', port: frontPort }, () => resolve({ send, closed }));
        let received = '';
        let waiting: ((text: string) => void) | undefined;
        socket.on('data', (chunk: Buffer) => {
          received += chunk.toString('utf8');
          const ends = received.indexOf('}');
          if (waiting !== undefined && ends >= 0) {
            const text = received.slice(0, ends + 1);
            received = received.slice(ends + 1);
            waiting(text);
          }
        });
        // A connection that closes answers what it got (a test then fails at once, not at its timeout).
        const closed = new Promise<void>((done) =>
          socket.on('close', () => {
            waiting?.(received);
            done();
          }),
        );
        const send = (raw: string) =>
          new Promise<string>((answer) => {
            waiting = answer;
            socket.write(raw);
          });
      });
    try {
      const underWay = await open();
      const died = await underWay.send('POST /merchant/credit/die HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}');
      expect(died).toMatch(/^HTTP\/1\.1 503 [\s\S]*Retry-After: 2[\s\S]*"message":"SERVICE_UNAVAILABLE"/);

      // The writer closes an idle connection (its keep-alive timeout): the client's is ended too.
      const closedByWriter = await open();
      expect(await closedByWriter.send('GET /api/merchant/m_1 HTTP/1.1\r\nHost: x\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 /);
      await closedByWriter.closed;

      const idle = await open();
      expect(await idle.send('GET /api/merchant/m_1 HTTP/1.1\r\nHost: x\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 [\s\S]*"served":"writer"/);
      // The writer goes while the connection is idle; the connection stays, and its next request
      // is answered.
      writer.keepAliveTimeout = 60_000;
      tunnels?.close();
      writer.closeAllConnections();
      await new Promise((resolve) => writer.close(resolve));
      await new Promise((resolve) => setTimeout(resolve, 100));
      const next = await idle.send('GET /api/merchant/m_1 HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(next).toMatch(/^HTTP\/1\.1 503 [\s\S]*"errorCode":"SERVICE_UNAVAILABLE"/);
      await idle.closed;
    } finally {
      forwarder.close();
      front.closeAllConnections();
      await new Promise((resolve) => front.close(resolve));
      if (writer.listening) await new Promise((resolve) => writer.close(resolve));
    }
  });
});
