/**
 * The shared store (postgres/store.ts) on a real PostgreSQL: two sandboxes on one database behave
 * as one sandbox, and a sandbox started again on it has everything. (test/shared/processes.test.ts
 * does the same with separate processes, one killed with SIGKILL.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startGateway, type GatewayTest } from '../support/gateway.js';
import { PRIVATE_KEY, startSandbox, type TestSandbox } from '../support/sandbox.js';
import { verifySdkSignature } from '../../src/signature.js';
import { postgresUnavailable, startPostgres, type PostgresCluster } from '../support/postgres.js';

const unavailable = postgresUnavailable();
if (unavailable !== undefined) console.warn(`shared-store tests skipped: ${unavailable}`);

describe.skipIf(unavailable !== undefined)('two sandboxes on one PostgreSQL database', () => {
  let cluster: PostgresCluster;
  let databaseUrl: string;
  let a: TestSandbox;
  let b: TestSandbox;

  beforeAll(async () => {
    cluster = (await startPostgres())!;
    databaseUrl = await cluster.createDatabase();
    a = await startSandbox({ databaseUrl });
    b = await startSandbox({ databaseUrl });
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await cluster?.stop();
  });

  const initiate = (t: TestSandbox, id: string, amount = 10_000) =>
    t.sdk('/merchant/credit/initiateTransaction', {
      merchantTransactionId: id,
      userPhoneNumber: '+919876543210',
      userId: 'user-1',
      amount,
    });
  const status = async (t: TestSandbox, id: string) =>
    (await t.sdk('/merchant/credit/checkTransactionStatus', { merchantTransactionId: id })).body;

  it('reads on one what was written on the other', async () => {
    expect((await initiate(a, 'shared-1')).status).toBe(201);
    expect(await status(b, 'shared-1')).toEqual({ message: 'PENDING' });
    // One id once, whichever process is asked.
    expect((await initiate(b, 'shared-1')).body).toMatchObject({ message: 'DUPLICATE_TRANSACTION_ID' });
  });

  it('accepts exactly two of 24 concurrent 40% refunds split across both', async () => {
    expect((await initiate(a, 'shared-refunds', 10_000)).status).toBe(201);
    expect((await b.request('POST', '/sandbox/sdk/transactions/shared-refunds/confirm')).status).toBe(200);
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, index) =>
        (index % 2 === 0 ? a : b).sdk('/merchant/credit/refundTransaction', { merchantTransactionId: 'shared-refunds', amount: 4_000 }),
      ),
    );
    const accepted = answers.filter((answer) => answer.status === 200);
    expect(accepted).toHaveLength(2);
    expect(answers.filter((answer) => answer.status === 400)).toHaveLength(22);
    const record = await a.request('GET', '/sandbox/sdk/transactions/shared-refunds');
    expect(record.body.refundedAmount).toBe(8_000);
  });

  it('moves both clocks when one advances: a pending transaction expires once, read on the other', async () => {
    expect((await initiate(b, 'shared-expiry')).status).toBe(201);
    await a.advance(61_000);
    expect(await status(b, 'shared-expiry')).toEqual({ message: 'FAILURE' });
    expect(await status(a, 'shared-expiry')).toEqual({ message: 'FAILURE' });
    const clockA = (await a.request('GET', '/sandbox/clock')).body;
    const clockB = (await b.request('GET', '/sandbox/clock')).body;
    expect(Math.abs(Date.parse(clockA.now) - Date.parse(clockB.now))).toBeLessThan(5_000);
    expect(Date.parse(clockB.now) - Date.now()).toBeGreaterThan(55_000);
  });

  it('shows on one, in its list and live stream, the webhook events recorded on the other', async () => {
    // B forwards to the writer, A: its live stream is A's, relayed as it comes.
    expect([a.sandbox.role, b.sandbox.role]).toEqual(['writer', 'forwarding']);
    const stream = await fetch(`${b.url}/sandbox/webhooks/stream`);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = stream.body!.getReader();
    try {
      expect((await initiate(a, 'shared-events')).status).toBe(201);
      expect((await a.request('POST', '/sandbox/sdk/transactions/shared-events/confirm')).status).toBe(200);
      const onA = await a.deliveries('shared-events');
      expect(onA).toHaveLength(1);
      let text = '';
      while (!text.includes(onA[0].eventId)) {
        const chunk = await reader.read();
        if (chunk.done) break;
        text += new TextDecoder().decode(chunk.value);
      }
      expect(text).toContain(onA[0].eventId);
      const onB = await b.deliveries('shared-events');
      expect(onB.map((delivery: { eventId: string; body: string; id: string }) => [delivery.id, delivery.eventId, delivery.body])).toEqual([
        [onA[0].id, onA[0].eventId, onA[0].body],
      ]);
      // Signed with the partner's key, which the row names (its signer) and does not hold.
      expect(verifySdkSignature(onB[0].headers['X-Signature'], onB[0].body, PRIVATE_KEY)).toBe(true);
      expect(onB[0].headers).toEqual(onA[0].headers);
    } finally {
      await reader.cancel();
    }
  });

  it('has everything after a restart on the same database', async () => {
    expect((await initiate(a, 'shared-restart')).status).toBe(201);
    await a.close();
    a = await startSandbox({ databaseUrl });
    expect(await status(a, 'shared-restart')).toEqual({ message: 'PENDING' });
    // Expired by the advance on the other sandbox, and still so.
    expect(await status(a, 'shared-1')).toEqual({ message: 'FAILURE' });
    const record = await a.request('GET', '/sandbox/sdk/transactions/shared-refunds');
    expect(record.body.refundedAmount).toBe(8_000);
  });

  it('keeps each record as one row of JSON in sandbox_records, with the applied schema version', async () => {
    const client = new pg.Client(databaseUrl);
    await client.connect();
    try {
      const row = await client.query("SELECT data FROM sandbox_records WHERE collection = 'sdk.transactions' AND id = 'shared-1'");
      expect(JSON.parse(row.rows[0].data)).toMatchObject({
        merchantTransactionId: 'shared-1',
        status: 'FAILURE',
        failureReason: 'EXPIRED',
      });
      const deliveries = await client.query("SELECT data FROM sandbox_records WHERE collection = 'sandbox.deliveries'");
      expect(deliveries.rows.length).toBeGreaterThan(0);
      for (const { data } of deliveries.rows) expect(data).not.toContain(PRIVATE_KEY);
      const versions = await client.query('SELECT version FROM sandbox_schema_migrations ORDER BY version');
      expect(versions.rows.map((r) => r.version)).toEqual([1, 2, 3, 4]);
    } finally {
      await client.end();
    }
  });
});

describe.skipIf(unavailable !== undefined)('the gateway on two sandboxes sharing a database', () => {
  let cluster: PostgresCluster;
  let a: GatewayTest;
  let b: GatewayTest;

  beforeAll(async () => {
    cluster = (await startPostgres())!;
    const databaseUrl = await cluster.createDatabase();
    a = await startGateway({ databaseUrl });
    b = await startGateway({ databaseUrl });
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await cluster?.stop();
  });

  it('onboards on one, transacts on the other, lists and expires across both; one OTP attempt counts once', async () => {
    const merchant = await a.onboard();
    const auth = merchant.credentials.auth;
    expect((await b.createTransaction(auth, { id: 'gw-shared-1', amount: 150_000 })).status).toBe(200);
    expect((await b.createTransaction(auth, { id: 'gw-shared-2', amount: 150_000 })).status).toBe(200);
    // The merchant's list on the process that did not create them.
    const list = await a.call('GET', '/api/merchant/transaction?limit=100', auth);
    expect(list.body.transactions.map((transaction: { id: string }) => transaction.id)).toEqual(['gw-shared-2', 'gw-shared-1']);
    // Three wrong OTPs split over both processes, at once: the third fails the transaction, once.
    const stage = await a.stage(auth, 'gw-shared-2');
    const referenceId = stage.transactionStage.nextStep.options.userInputOptions[0].referenceId as string;
    const path = `/api/merchant/transaction/gw-shared-2/user-inputs/${referenceId}`;
    const answers = await Promise.all([a, b, a, b].map((t) => t.call('POST', path, auth, { value: '999999' })));
    // Three count ("does not match"); the fourth finds no attempt left, the same code (D250).
    expect(answers.map((answer) => answer.body.errorCode)).toEqual(['INVALID_OTP', 'INVALID_OTP', 'INVALID_OTP', 'INVALID_OTP']);
    expect(answers.filter((answer) => String(answer.body.message).includes('does not match'))).toHaveLength(3);
    expect(await b.transaction(auth, 'gw-shared-2')).toMatchObject({ status: 'FAILED', failureReason: 'OTP_ATTEMPTS_EXCEEDED' });
    // The clock advanced on the one that did not create it: the other transaction expires, read on both.
    await a.advance(16 * 60_000);
    expect((await b.transaction(auth, 'gw-shared-1')).status).toBe('CANCELLED');
    expect(await a.transaction(auth, 'gw-shared-1')).toMatchObject({ status: 'CANCELLED', failureReason: 'EXPIRED' });
  });

  it("refuses on one a webhook URL at the other's address and port, however it is written; a receiver stays allowed", async () => {
    const { credentials } = await a.onboard();
    const port = new URL(a.url).port;
    for (const webhookUrl of [
      `http://127.0.0.1:${port}/sandbox/sdk/transactions/x/confirm`,
      `http://localhost:${port}/sandbox/clock/advance`,
      `http://[::ffff:127.0.0.1]:${port}/x`,
    ]) {
      const answer = await b.createTransaction(credentials.auth, { id: b.id('sibling'), amount: 10_000, webhookUrl });
      expect(answer.status, webhookUrl).toBe(400);
      expect(answer.body.details[0]).toMatchObject({ field: '/createConfiguration/webhookUrl' });
      expect(JSON.stringify(answer.body)).toMatch(/the sandbox itself/);
    }
    const receiver = await b.createTransaction(credentials.auth, { id: b.id('receiver'), amount: 10_000, webhookUrl: 'http://127.0.0.1:9/hook' });
    expect(receiver.status).toBe(200);
  });
});
