/**
 * Two `paylater sandbox --database-url` processes on one real PostgreSQL database behave as one
 * sandbox: written on one, read on the other; a refund race split over both never overspends; a
 * clock advance on one expires a transaction read on the other; transactions confirmed across
 * both each reach the receiver; and a process killed with SIGKILL, in the middle of deliveries,
 * loses nothing: started again it has every record, and every event still arrives (at least once,
 * with the same event id).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopChild, type StartedChild } from '../support/processes.js';
import { postgresUnavailable, startPostgres, type PostgresCluster } from '../support/postgres.js';
import { initiateOn, postTo, sdkCall, startReceiver, startSharedProcess, statusOn, waitUntil, type Receiver } from '../support/shared-processes.js';

const unavailable = postgresUnavailable();
if (unavailable !== undefined) console.warn(`shared-store process tests skipped: ${unavailable}`);

describe.skipIf(unavailable !== undefined)('two sandbox processes on one database', () => {
  let cluster: PostgresCluster;
  let databaseUrl: string;
  let receiver: Receiver;
  const processes: StartedChild[] = [];

  const start = async (): Promise<StartedChild> => {
    const started = await startSharedProcess(databaseUrl, ['--sdk-webhook-url', receiver.url]);
    processes.push(started);
    return started;
  };
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
    expect((await initiateOn(a, 'proc-1')).status).toBe(201);
    expect(await statusOn(b, 'proc-1')).toBe('PENDING');
    expect((await initiateOn(b, 'proc-1')).body.message).toBe('DUPLICATE_TRANSACTION_ID');
  });

  it('accepts exactly two of 24 concurrent 40% refunds split across both', async () => {
    expect((await initiateOn(b, 'proc-refunds')).status).toBe(201);
    expect((await postTo(a, '/sandbox/sdk/transactions/proc-refunds/confirm')).status).toBe(200);
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, index) =>
        sdkCall(index % 2 === 0 ? a : b, '/merchant/credit/refundTransaction', { merchantTransactionId: 'proc-refunds', amount: 4_000 }),
      ),
    );
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(2);
    expect(answers.filter((answer) => answer.body.message === 'REFUND_AMOUNT_TOO_LARGE')).toHaveLength(22);
  });

  it('expires on the other process a pending transaction when one advances the clock', async () => {
    expect((await initiateOn(a, 'proc-expiry')).status).toBe(201);
    expect((await postTo(b, '/sandbox/clock/advance', { ms: 61_000 })).status).toBe(200);
    expect(await statusOn(a, 'proc-expiry')).toBe('FAILURE');
    expect(await statusOn(b, 'proc-expiry')).toBe('FAILURE');
  });

  it('sends the webhook of each of 40 transactions confirmed across both, once each', async () => {
    const ids = Array.from({ length: 40 }, (_, index) => `proc-hook-${index}`);
    for (const [index, id] of ids.entries()) expect((await initiateOn(index % 2 === 0 ? a : b, id)).status).toBe(201);
    const before = receiver.events.length;
    await Promise.all(ids.map((id, index) => postTo(index % 2 === 0 ? b : a, `/sandbox/sdk/transactions/${id}/confirm`)));
    await waitUntil(() => receiver.events.length - before >= 40, '40 webhooks');
    const bodies = receiver.events.slice(before).map((eventId) => JSON.parse(receiver.bodies.get(eventId)!) as { merchantTransactionId: string });
    expect(new Set(bodies.map((body) => body.merchantTransactionId))).toEqual(new Set(ids));
    expect(new Set(receiver.events.slice(before)).size).toBe(40);
  });

  it('loses nothing when a process is killed with SIGKILL in the middle of deliveries', async () => {
    const ids = Array.from({ length: 20 }, (_, index) => `proc-kill-${index}`);
    for (const id of ids) expect((await initiateOn(a, id)).status).toBe(201);
    // The receiver answers slowly: the deliveries are under way when the process dies.
    receiver.delayMs = 1_000;
    const before = receiver.events.length;
    await Promise.all(ids.map((id) => postTo(a, `/sandbox/sdk/transactions/${id}/confirm`)));
    a.child.kill('SIGKILL');
    await new Promise((resolve) => a.child.once('close', resolve));
    receiver.delayMs = 0;
    // A was the writer: B takes the role within seconds (503 with Retry-After meanwhile).
    await waitUntil(async () => (await statusOn(b, 'proc-kill-0')) !== 'SERVICE_UNAVAILABLE', 'B to take the writer\'s role', 15_000);
    // Every record is still there, read on the other process and on a new one.
    for (const id of ids) expect(await statusOn(b, id)).toBe('SUCCESS');
    const again = await start();
    expect(await statusOn(again, 'proc-1')).toBe('FAILURE');
    expect(await statusOn(again, 'proc-refunds')).toBe('SUCCESS');
    expect(await statusOn(again, 'proc-kill-7')).toBe('SUCCESS');
    // Every event arrives: the deliveries the killed process had under way are taken over.
    await waitUntil(() => {
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
    // Every copy was signed, the ones the other process sent after taking over included.
    expect(receiver.unsigned).toEqual([]);
  }, 120_000);
});
