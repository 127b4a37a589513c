/**
 * The database lost under load, with two `paylater sandbox --database-url` processes serving
 * initiates, confirms and refunds: PostgreSQL stopped with `pg_ctl -m fast` (every connection ended
 * with an error first) and with `-m immediate` (killed), then started again. No process exits; a
 * request meanwhile is answered 503 with `Retry-After` in its family's error format; both processes
 * answer again without a restart; nothing answered 201 is lost. And PostgreSQL stopped for 4 s while
 * 200 webhooks are under way to a slow receiver: every outcome reaches the database once it is
 * back (no delivery stays pending with no attempt due), and a takeover after it sends nothing
 * again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopChild, type StartedChild } from '../support/processes.js';
import { deliveriesInDatabase, postgresUnavailable, startPostgres, type PostgresCluster } from '../support/postgres.js';
import { initiateOn, postTo, sdkCall, startReceiver, startSharedProcess, statusOn, waitUntil, type Receiver } from '../support/shared-processes.js';

const unavailable = postgresUnavailable();
if (unavailable !== undefined) console.warn(`shared-store outage tests skipped: ${unavailable}`);

interface Answered {
  what: string;
  status: number;
  retryAfter: string | null;
  /** The error's code: `message` (SDK format) or `errorCode` (the sandbox's own endpoints). */
  code: string | undefined;
}

describe.skipIf(unavailable !== undefined)('the database lost under load', () => {
  let cluster: PostgresCluster;
  let databaseUrl: string;
  let receiver: Receiver;
  let a: StartedChild;
  let b: StartedChild;

  beforeAll(async () => {
    cluster = (await startPostgres())!;
    databaseUrl = await cluster.createDatabase();
    receiver = await startReceiver();
    const args = ['--sdk-webhook-url', receiver.url];
    [a, b] = await Promise.all([startSharedProcess(databaseUrl, args), startSharedProcess(databaseUrl, args)]);
  }, 120_000);
  afterAll(async () => {
    for (const started of [a, b]) if (started !== undefined) await stopChild(started.child);
    await new Promise((resolve) => receiver?.server.close(resolve));
    await cluster?.stop();
  });

  const deliveries = () => deliveriesInDatabase(databaseUrl);

  const alive = (started: StartedChild) => started.child.exitCode === null && started.child.signalCode === null;

  for (const mode of ['fast', 'immediate'] as const) {
    it(`stopped with pg_ctl -m ${mode} and started again: no process exits, 503 with Retry-After meanwhile, then back`, async () => {
      const answers: Answered[] = [];
      const acknowledged: string[] = [];
      let running = true;
      const worker = async (index: number) => {
        for (let n = 0; running; n++) {
          const id = `${mode}-${index}-${n}`;
          const [here, there] = n % 2 === 0 ? [a, b] : [b, a];
          try {
            const initiated = await initiateOn(here, id);
            answers.push({ what: 'initiate', status: initiated.status, retryAfter: initiated.retryAfter, code: initiated.body.message });
            if (initiated.status !== 201) continue;
            acknowledged.push(id);
            const confirmed = await postTo(there, `/sandbox/sdk/transactions/${id}/confirm`);
            const body = (await confirmed.json()) as { errorCode?: string };
            answers.push({ what: 'confirm', status: confirmed.status, retryAfter: confirmed.headers.get('retry-after'), code: body.errorCode });
            if (confirmed.status !== 200) continue;
            const refunded = await sdkCall(here, '/merchant/credit/refundTransaction', { merchantTransactionId: id, amount: 1_000 });
            answers.push({ what: 'refund', status: refunded.status, retryAfter: refunded.retryAfter, code: refunded.body.message });
          } catch (error) {
            // A connection refused or reset would mean a process went away.
            answers.push({ what: `fetch failed: ${(error as Error).message}`, status: 0, retryAfter: null, code: undefined });
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        }
      };
      const workers = Array.from({ length: 12 }, (_, index) => worker(index));
      await waitUntil(() => acknowledged.length >= 20, 'load before the outage');
      await cluster.pause(mode);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(alive(a) && alive(b), `${a.output()}\n${b.output()}`).toBe(true);
      await cluster.start();
      // Both processes answer again by themselves.
      const recovered = acknowledged.length;
      await waitUntil(
        () => answers.slice(-40).filter((answer) => answer.status === 201).length >= 4 && acknowledged.length > recovered + 20,
        'both processes answering after the restart',
      );
      running = false;
      await Promise.all(workers);

      expect(alive(a) && alive(b), `${a.output()}\n${b.output()}`).toBe(true);
      expect(answers.filter((answer) => answer.status === 0)).toEqual([]);
      const unavailableAnswers = answers.filter((answer) => answer.status === 503);
      expect(unavailableAnswers.length).toBeGreaterThan(0);
      for (const answer of unavailableAnswers) {
        // 5 s: the writer's database is away; 2 s: a forwarding process cannot reach the writer.
        expect(['5', '2']).toContain(answer.retryAfter);
        expect(answer.code).toBe('SERVICE_UNAVAILABLE');
      }
      expect(answers.filter((answer) => answer.status !== 503 && answer.status !== 200 && answer.status !== 201)).toEqual([]);
      // Nothing acknowledged is lost: every transaction answered 201 is there, on both processes.
      for (const id of acknowledged.filter((_, index) => index % 7 === 0)) {
        expect(await statusOn(a, id), id).not.toBe('NO_SUCH_TRANSACTION');
        expect(await statusOn(b, id), id).not.toBe('NO_SUCH_TRANSACTION');
      }
    }, 120_000);
  }

  it('stopped for 4 s with 200 webhooks under way: every outcome is written once it is back, none stranded, none sent again by a takeover', async () => {
    const ids = Array.from({ length: 200 }, (_, index) => `in-flight-${index}`);
    for (let index = 0; index < ids.length; index += 20) {
      const answers = await Promise.all(ids.slice(index, index + 20).map((id, n) => initiateOn(n % 2 === 0 ? a : b, id)));
      for (const answer of answers) expect(answer.status).toBe(201);
    }
    await waitUntil(async () => (await deliveries()).pending === 0, 'no delivery pending before');
    const before = receiver.events.length;
    // Slow answers: the attempts end while the database is away.
    receiver.delayMs = 600;
    const confirmed = await Promise.all(ids.map((id, n) => postTo(n % 2 === 0 ? b : a, `/sandbox/sdk/transactions/${id}/confirm`)));
    for (const answer of confirmed) expect(answer.status).toBe(200);
    await cluster.pause('immediate');
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    await cluster.start();
    const received = () => new Set(receiver.events.slice(before).map((eventId) => JSON.parse(receiver.bodies.get(eventId)!).merchantTransactionId as string));
    await waitUntil(() => received().size === ids.length, 'the 200 webhooks', 60_000);
    receiver.delayMs = 0;
    // Every outcome reached the database: delivered, none pending (stranded or not).
    await waitUntil(async () => (await deliveries()).delivered >= ids.length, 'the outcomes written', 20_000);
    expect(await deliveries()).toMatchObject({ pending: 0, stranded: 0, other: 0 });
    expect(receiver.unsigned).toEqual([]);
    // A takeover after it (one process killed) sends nothing again: what was acknowledged is recorded.
    const sent = receiver.events.length;
    b.child.kill('SIGKILL');
    await new Promise((resolve) => b.child.once('close', resolve));
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(receiver.events.length).toBe(sent);
    expect(alive(a), a.output()).toBe(true);
  }, 180_000);
});
