/**
 * The roles of a shared sandbox's processes (shared-role.ts) on a real PostgreSQL: the first to
 * start is the writer and the others forward to it; when the writer goes, one of the others takes
 * the role within seconds, reads every record, and the rest forward to it; a forwarding process
 * that cannot reach a writer answers 503 with Retry-After in its family's error format.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Forwarder } from '../../src/sandbox/forward.js';
import { errorHelpers } from '../../src/sandbox/errors.js';
import { freePort } from '../support/processes.js';
import { startSandbox, waitFor, type TestSandbox } from '../support/sandbox.js';
import { postgresUnavailable, startPostgres, type PostgresCluster } from '../support/postgres.js';

const unavailable = postgresUnavailable();
if (unavailable !== undefined) console.warn(`shared-store role tests skipped: ${unavailable}`);

const initiate = (t: TestSandbox, id: string) =>
  t.sdk('/merchant/credit/initiateTransaction', { merchantTransactionId: id, userPhoneNumber: '+919876543210', userId: 'u', amount: 10_000 });
const status = async (t: TestSandbox, id: string) => (await t.sdk('/merchant/credit/checkTransactionStatus', { merchantTransactionId: id })).body;

describe.skipIf(unavailable !== undefined)('three sandbox processes on one database', () => {
  let cluster: PostgresCluster;
  const started: TestSandbox[] = [];

  beforeAll(async () => {
    cluster = (await startPostgres())!;
    const databaseUrl = await cluster.createDatabase();
    for (let index = 0; index < 3; index++) started.push(await startSandbox({ databaseUrl }));
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

    await a.close();
    const writer = await waitFor(() => [b, c].find((t) => t.sandbox.role === 'writer'), 15_000);
    const other = writer === b ? c : b;
    expect(other.sandbox.role).toBe('forwarding');
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
