/**
 * The shared store behaves as the memory store: random sequences of SDK operations (fast-check:
 * initiates, confirms, cancels, failures, refunds, status checks, clock advances) run on a sandbox
 * in memory and on one on PostgreSQL, each operation on both in turn; every answer must be the
 * same, and so must every webhook each sandbox sent (its body and its signature).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySdkSignature } from '../../src/signature.js';
import { MemoryStore } from '../../src/sandbox/store.js';
import { postgresUnavailable, startPostgres, type PostgresCluster } from '../support/postgres.js';
import { PRIVATE_KEY, startReceiver, startSandbox, type Receiver, type TestSandbox } from '../support/sandbox.js';

const unavailable = postgresUnavailable();
if (unavailable !== undefined) console.warn(`shared-store equivalence tests skipped: ${unavailable}`);

const SEED = 3_030;

type Operation =
  | { kind: 'initiate'; tx: number; amount: number }
  | { kind: 'confirm' | 'cancel' | 'fail' | 'status'; tx: number }
  | { kind: 'refund'; tx: number; amount: number }
  | { kind: 'advance'; ms: number };

const tx = fc.integer({ min: 0, max: 3 });
const operation: fc.Arbitrary<Operation> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('initiate' as const), tx, amount: fc.integer({ min: 1, max: 40 }).map((n) => n * 1_000) }),
  },
  fc.record({ kind: fc.constantFrom('confirm' as const, 'cancel' as const, 'fail' as const, 'status' as const), tx }),
  fc.record({ kind: fc.constant('refund' as const), tx, amount: fc.integer({ min: 1, max: 30 }).map((n) => n * 1_000) }),
  // Away from the 60 s expiry in sums: the two sandboxes' clocks differ by milliseconds.
  fc.record({ kind: fc.constant('advance' as const), ms: fc.constantFrom(7_000, 61_000) }),
);

/** One operation on one sandbox: the answer's status and body. */
async function apply(t: TestSandbox, prefix: string, op: Operation): Promise<{ status: number; body: unknown }> {
  if (op.kind === 'advance') {
    await t.advance(op.ms);
    return { status: 200, body: null };
  }
  const merchantTransactionId = `${prefix}-${op.tx}`;
  const answer =
    op.kind === 'initiate'
      ? await t.sdk('/merchant/credit/initiateTransaction', { merchantTransactionId, userPhoneNumber: '+919876543210', userId: 'u', amount: op.amount })
      : op.kind === 'refund'
        ? await t.sdk('/merchant/credit/refundTransaction', { merchantTransactionId, amount: op.amount })
        : op.kind === 'status'
          ? await t.sdk('/merchant/credit/checkTransactionStatus', { merchantTransactionId })
          : await t.request('POST', `/sandbox/sdk/transactions/${merchantTransactionId}/${op.kind}`);
  return { status: answer.status, body: answer.body };
}

/** The webhooks of this run's transactions a receiver got, as comparable text, sorted. */
function webhooksOf(receiver: Receiver, prefix: string): string[] {
  return receiver.received
    .filter((webhook) => webhook.body.includes(`"${prefix}-`))
    .map((webhook) => `${verifySdkSignature(webhook.headers['x-signature'], webhook.body, PRIVATE_KEY) ? 'signed' : 'UNSIGNED'} ${webhook.body}`)
    .sort();
}

describe.skipIf(unavailable !== undefined)('the same operations in memory and on the shared store', () => {
  let cluster: PostgresCluster;
  let memory: TestSandbox;
  let shared: TestSandbox;
  let memoryHooks: Receiver;
  let sharedHooks: Receiver;

  beforeAll(async () => {
    cluster = (await startPostgres())!;
    [memoryHooks, sharedHooks] = await Promise.all([startReceiver(), startReceiver()]);
    memory = await startSandbox({ store: new MemoryStore(), config: { partner: { webhookUrl: memoryHooks.url } } });
    shared = await startSandbox({ databaseUrl: await cluster.createDatabase(), config: { partner: { webhookUrl: sharedHooks.url } } });
  }, 60_000);
  afterAll(async () => {
    await memory?.close();
    await shared?.close();
    await memoryHooks?.close();
    await sharedHooks?.close();
    await cluster?.stop();
  });

  it('gives the same answers and sends the same webhooks', async () => {
    let run = 0;
    let webhooks = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 25 }), async (operations) => {
        const prefix = `eq${run++}`;
        for (const [index, op] of operations.entries()) {
          const inMemory = await apply(memory, prefix, op);
          const onShared = await apply(shared, prefix, op);
          expect(onShared, `operation ${index}: ${JSON.stringify(op)}`).toEqual(inMemory);
        }
        // Every webhook arrives on both sides (each attempt answered 200 at once).
        const deadline = Date.now() + 10_000;
        for (;;) {
          const [fromMemory, fromShared] = [webhooksOf(memoryHooks, prefix), webhooksOf(sharedHooks, prefix)];
          if (fromMemory.length === fromShared.length && JSON.stringify(fromMemory) === JSON.stringify(fromShared)) {
            webhooks += fromMemory.length;
            break;
          }
          if (Date.now() > deadline) {
            expect(fromShared).toEqual(fromMemory);
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(webhooksOf(sharedHooks, prefix).filter((line) => line.startsWith('UNSIGNED'))).toEqual([]);
      }),
      { seed: SEED, numRuns: 25 },
    );
    // The runs were not empty: webhooks were compared (each transaction's final status sends one).
    expect(webhooks).toBeGreaterThan(10);
    expect(memory.loggedErrors).toEqual([]);
    expect(shared.loggedErrors).toEqual([]);
  }, 120_000);
});
