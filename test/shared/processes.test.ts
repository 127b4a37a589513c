/**
 * Two `paylater sandbox --database-url` processes on one real PostgreSQL database behave as one
 * sandbox: written on one, read on the other; a refund race split over both never overspends; a
 * clock advance on one expires a transaction read on the other; transactions confirmed across
 * both each reach the receiver; and a process killed with SIGKILL, in the middle of deliveries,
 * loses nothing: started again it has every record, and every event still arrives (at least once,
 * with the same event id).
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_HEAP_FLAGS } from '../../src/cli/heap.js';
import { sdkSignature } from '../../src/signature.js';
import { CLI_ENTRY } from '../support/cli.js';
import { startOnFreePort, stopChild, type StartedChild } from '../support/processes.js';
import { postgresUnavailable, startPostgres, type PostgresCluster } from '../support/postgres.js';
import { PARTNER_ID, PRIVATE_KEY } from '../support/sandbox.js';

const unavailable = postgresUnavailable();
if (unavailable !== undefined) console.warn(`shared-store process tests skipped: ${unavailable}`);

interface Receiver {
  url: string;
  /** Event ids received, in order, repeats included. */
  events: string[];
  bodies: Map<string, string>;
  /** How long the receiver takes to answer. */
  delayMs: number;
  server: Server;
}

async function startReceiver(): Promise<Receiver> {
  const receiver = { url: '', events: [] as string[], bodies: new Map<string, string>(), delayMs: 0 } as Receiver;
  receiver.server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const eventId = String(request.headers['x-event-id']);
      setTimeout(() => {
        receiver.events.push(eventId);
        receiver.bodies.set(eventId, body);
        response.writeHead(200).end();
      }, receiver.delayMs);
    });
  });
  await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}/hook`;
  return receiver;
}

async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.skipIf(unavailable !== undefined)('two sandbox processes on one database', () => {
  let cluster: PostgresCluster;
  let databaseUrl: string;
  let receiver: Receiver;
  const processes: StartedChild[] = [];

  const start = async (): Promise<StartedChild> => {
    const started = await startOnFreePort(
      (port) =>
        // With the heap flags, as `npm start` runs it: one process (not one that starts the
        // sandbox as its child), so that SIGKILL below kills the sandbox itself.
        spawn(process.execPath, [...SANDBOX_HEAP_FLAGS.map(({ flag }) => flag), CLI_ENTRY, 'sandbox', '--port', String(port), '--quiet', '--database-url', databaseUrl, '--sdk-webhook-url', receiver.url], {
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, NO_COLOR: '1' },
        }),
      { ready: /listening on http/ },
    );
    processes.push(started);
    return started;
  };
  const origin = (started: StartedChild) => `http://127.0.0.1:${started.port}`;
  const sdk = async (started: StartedChild, path: string, body: unknown) => {
    const text = JSON.stringify(body);
    const response = await fetch(`${origin(started)}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Partnerid': PARTNER_ID, 'X-Signature': sdkSignature(text, PRIVATE_KEY) },
      body: text,
    });
    return { status: response.status, body: (await response.json()) as { message: string } };
  };
  const initiate = (started: StartedChild, id: string, amount = 10_000) =>
    sdk(started, '/merchant/credit/initiateTransaction', { merchantTransactionId: id, userPhoneNumber: '+919876543210', userId: 'u', amount });
  const status = async (started: StartedChild, id: string) =>
    (await sdk(started, '/merchant/credit/checkTransactionStatus', { merchantTransactionId: id })).body.message;
  const post = (started: StartedChild, path: string, body?: unknown) =>
    fetch(`${origin(started)}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  let a: StartedChild;
  let b: StartedChild;

  beforeAll(async () => {
    cluster = (await startPostgres())!;
    databaseUrl = await cluster.createDatabase();
    receiver = await startReceiver();
    a = await start();
    b = await start();
  }, 120_000);
  afterAll(async () => {
    for (const started of processes) await stopChild(started.child);
    await new Promise((resolve) => receiver?.server.close(resolve));
    await cluster?.stop();
  });

  it('prints where the state is kept, without the password', () => {
    expect(a.output()).toMatch(/State: PostgreSQL postgres:\/\/postgres@127\.0\.0\.1:\d+\/sandbox_\d+_\d+ \(shared, kept across restarts\)/);
  });

  it('reads on one what was written on the other; one id once', async () => {
    expect((await initiate(a, 'proc-1')).status).toBe(201);
    expect(await status(b, 'proc-1')).toBe('PENDING');
    expect((await initiate(b, 'proc-1')).body.message).toBe('DUPLICATE_TRANSACTION_ID');
  });

  it('accepts exactly two of 24 concurrent 40% refunds split across both', async () => {
    expect((await initiate(b, 'proc-refunds')).status).toBe(201);
    expect((await post(a, '/sandbox/sdk/transactions/proc-refunds/confirm')).status).toBe(200);
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, index) =>
        sdk(index % 2 === 0 ? a : b, '/merchant/credit/refundTransaction', { merchantTransactionId: 'proc-refunds', amount: 4_000 }),
      ),
    );
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(2);
    expect(answers.filter((answer) => answer.body.message === 'REFUND_AMOUNT_TOO_LARGE')).toHaveLength(22);
  });

  it('expires on the other process a pending transaction when one advances the clock', async () => {
    expect((await initiate(a, 'proc-expiry')).status).toBe(201);
    expect((await post(b, '/sandbox/clock/advance', { ms: 61_000 })).status).toBe(200);
    expect(await status(a, 'proc-expiry')).toBe('FAILURE');
    expect(await status(b, 'proc-expiry')).toBe('FAILURE');
  });

  it('sends the webhook of each of 40 transactions confirmed across both, once each', async () => {
    const ids = Array.from({ length: 40 }, (_, index) => `proc-hook-${index}`);
    for (const [index, id] of ids.entries()) expect((await initiate(index % 2 === 0 ? a : b, id)).status).toBe(201);
    const before = receiver.events.length;
    await Promise.all(ids.map((id, index) => post(index % 2 === 0 ? b : a, `/sandbox/sdk/transactions/${id}/confirm`)));
    await waitFor(() => receiver.events.length - before >= 40, '40 webhooks');
    const bodies = receiver.events.slice(before).map((eventId) => JSON.parse(receiver.bodies.get(eventId)!) as { merchantTransactionId: string });
    expect(new Set(bodies.map((body) => body.merchantTransactionId))).toEqual(new Set(ids));
    expect(new Set(receiver.events.slice(before)).size).toBe(40);
  });

  it('loses nothing when a process is killed with SIGKILL in the middle of deliveries', async () => {
    const ids = Array.from({ length: 20 }, (_, index) => `proc-kill-${index}`);
    for (const id of ids) expect((await initiate(a, id)).status).toBe(201);
    // The receiver answers slowly: the deliveries are under way when the process dies.
    receiver.delayMs = 1_000;
    const before = receiver.events.length;
    await Promise.all(ids.map((id) => post(a, `/sandbox/sdk/transactions/${id}/confirm`)));
    a.child.kill('SIGKILL');
    await new Promise((resolve) => a.child.once('close', resolve));
    receiver.delayMs = 0;
    // Every record is still there, read on the other process and on a new one.
    for (const id of ids) expect(await status(b, id)).toBe('SUCCESS');
    const again = await start();
    expect(await status(again, 'proc-1')).toBe('FAILURE');
    expect(await status(again, 'proc-refunds')).toBe('SUCCESS');
    expect(await status(again, 'proc-kill-7')).toBe('SUCCESS');
    // Every event arrives: the deliveries the killed process had under way are taken over.
    await waitFor(() => {
      const received = new Set(receiver.events.slice(before).map((eventId) => JSON.parse(receiver.bodies.get(eventId)!).merchantTransactionId));
      return ids.every((id) => received.has(id));
    }, 'the 20 webhooks of the killed process', 60_000);
    // At least once, with one event id per transaction: a repeat carries the same id.
    const idsByTransaction = new Map<string, Set<string>>();
    for (const eventId of receiver.events.slice(before)) {
      const transactionId = JSON.parse(receiver.bodies.get(eventId)!).merchantTransactionId as string;
      idsByTransaction.set(transactionId, (idsByTransaction.get(transactionId) ?? new Set()).add(eventId));
    }
    for (const id of ids) expect(idsByTransaction.get(id)?.size, id).toBe(1);
  }, 120_000);
});
