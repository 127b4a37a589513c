/**
 * The shared store's faults, on a real PostgreSQL: a wrong URL, a database that is down at start,
 * one that goes away while the sandbox runs (503 with Retry-After, recovery without a restart,
 * nothing half written), a full disk, a schema newer than the sandbox knows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createSandbox } from '../../src/sandbox/server.js';
import { freePort } from '../support/processes.js';
import { startSandbox, type TestSandbox } from '../support/sandbox.js';
import { postgresUnavailable, startPostgres, type PostgresCluster } from '../support/postgres.js';

const unavailable = postgresUnavailable();
if (unavailable !== undefined) console.warn(`shared-store fault tests skipped: ${unavailable}`);

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const startError = async (databaseUrl: string): Promise<string> => {
  try {
    const sandbox = await createSandbox({ databaseUrl, logger: quiet });
    await sandbox.close();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('the sandbox started');
};

const initiate = (t: TestSandbox, id: string) =>
  t.sdk('/merchant/credit/initiateTransaction', { merchantTransactionId: id, userPhoneNumber: '+919876543210', userId: 'u', amount: 10_000 });
const status = async (t: TestSandbox, id: string) =>
  (await t.sdk('/merchant/credit/checkTransactionStatus', { merchantTransactionId: id })).body.message;

describe('the PostgreSQL tests without PostgreSQL', () => {
  it('fail saying what to install, unless PAYLATER_SKIP_POSTGRES=1 asks to skip them', () => {
    const missing = () => undefined;
    expect(() => postgresUnavailable({}, missing)).toThrow(/install Debian's postgresql package.*or set PAYLATER_SKIP_POSTGRES=1/);
    expect(() => postgresUnavailable({ PAYLATER_SKIP_POSTGRES: 'yes' }, missing)).toThrow(/PAYLATER_SKIP_POSTGRES=1/);
    expect(postgresUnavailable({ PAYLATER_SKIP_POSTGRES: '1' }, missing)).toMatch(/skipped as PAYLATER_SKIP_POSTGRES=1 asks/);
    expect(postgresUnavailable({}, () => '/usr/lib/postgresql/15/bin')).toBeUndefined();
  });
});

describe('a wrong database URL', () => {
  it('is refused before anything connects, saying how to write one', async () => {
    expect(await startError('mysql://root@localhost/shop')).toMatch(/runs on PostgreSQL, write it as postgres:\/\//);
    expect(await startError('localhost:5432')).toMatch(/starts with 'localhost:'/);
    expect(await startError('not a url')).toMatch(/is not a URL/);
    expect(await startError('postgres://127.0.0.1:5432')).toMatch(/names no database/);
    expect(await startError('  ')).toMatch(/is empty/);
  });

  it('naming a server that is not there: refused with the cause, never the password', async () => {
    const port = await freePort();
    const message = await startError(`postgres://sandbox:hunter2-secret@127.0.0.1:${port}/sandbox`);
    expect(message).toContain(`postgres://sandbox@127.0.0.1:${port}/sandbox`);
    expect(message).toMatch(/connection refused: is PostgreSQL running/);
    expect(message).not.toContain('hunter2');
  });
});

describe.skipIf(unavailable !== undefined)('a database that fails', () => {
  let cluster: PostgresCluster;
  beforeAll(async () => {
    cluster = (await startPostgres())!;
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('that does not exist: says to create it', async () => {
    const url = new URL(cluster.url);
    url.pathname = '/no_such_database';
    expect(await startError(url.toString())).toMatch(/does not exist.*createdb/);
  });

  it('two sandboxes starting at once on an empty database apply the schema once', async () => {
    const databaseUrl = await cluster.createDatabase();
    const both = await Promise.all([startSandbox({ databaseUrl }), startSandbox({ databaseUrl })]);
    try {
      const client = new pg.Client(databaseUrl);
      await client.connect();
      const versions = await client.query('SELECT version FROM sandbox_schema_migrations');
      await client.end();
      expect(versions.rows.map((row) => row.version).sort()).toEqual([1, 2, 3, 4]);
      expect((await initiate(both[0], 'started-together')).status).toBe(201);
      expect(await status(both[1], 'started-together')).toBe('PENDING');
    } finally {
      for (const t of both) await t.close();
    }
  });

  it('migrated by a newer sandbox: refused with what to do', async () => {
    const databaseUrl = await cluster.createDatabase();
    const first = await startSandbox({ databaseUrl });
    await first.close();
    const client = new pg.Client(databaseUrl);
    await client.connect();
    await client.query("INSERT INTO sandbox_schema_migrations (version, name) VALUES (999, 'from the future')");
    await client.end();
    expect(await startError(databaseUrl)).toMatch(/schema version 999, newer than this paylater-api knows \(4\).*Upgrade paylater-api/);
  });

  it('gone while running: 503 with Retry-After, nothing half written, and back by itself', async () => {
    const databaseUrl = await cluster.createDatabase();
    const t = await startSandbox({ databaseUrl });
    try {
      expect((await initiate(t, 'before-outage')).status).toBe(201);
      await cluster.pause();
      const during = await initiate(t, 'during-outage');
      expect(during.status).toBe(503);
      expect(during.headers.get('retry-after')).toBe('5');
      expect(during.body.message).toBe('SERVICE_UNAVAILABLE');
      expect(during.body.detail).toMatch(/cannot reach its database, so nothing was done/);
      // The sandbox logged the cause once.
      expect(t.loggedErrors.join('\n')).toMatch(/the database postgres:\/\/postgres@127\.0\.0\.1:\d+\/sandbox_\d+_\d+ failed/);
      t.loggedErrors.length = 0;
      await cluster.start();
      let after = await initiate(t, 'after-outage');
      for (let tries = 0; after.status === 503 && tries < 50; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        after = await initiate(t, 'after-outage');
      }
      expect(after.status).toBe(201);
      expect(await status(t, 'before-outage')).toBe('PENDING');
      // The request answered 503 left nothing behind, here or in the database.
      expect(await status(t, 'during-outage')).toBe('NO_SUCH_TRANSACTION');
      const client = new pg.Client(databaseUrl);
      await client.connect();
      const rows = await client.query("SELECT id FROM sandbox_records WHERE collection = 'sdk.transactions' ORDER BY id");
      await client.end();
      expect(rows.rows.map((row) => row.id)).toEqual(['after-outage', 'before-outage']);
    } finally {
      t.loggedErrors.length = 0;
      await t.close();
    }
  }, 60_000);

  it('with a full disk: 503 naming it, and nothing half written', async () => {
    const databaseUrl = await cluster.createDatabase();
    const t = await startSandbox({ databaseUrl });
    const client = new pg.Client(databaseUrl);
    await client.connect();
    try {
      // PostgreSQL's own error for a full disk (53100), raised on every write of a record.
      await client.query(`CREATE FUNCTION full_disk() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END $$`);
      await client.query('CREATE TRIGGER full_disk BEFORE INSERT OR UPDATE ON sandbox_records FOR EACH ROW EXECUTE FUNCTION full_disk()');
      const answer = await initiate(t, 'on-full-disk');
      expect(answer.status).toBe(503);
      expect(answer.body.detail).toMatch(/disk is full/);
      await client.query('DROP TRIGGER full_disk ON sandbox_records');
      expect(await status(t, 'on-full-disk')).toBe('NO_SUCH_TRANSACTION');
      expect((await initiate(t, 'on-full-disk')).status).toBe(201);
    } finally {
      await client.end();
      t.loggedErrors.length = 0;
      await t.close();
    }
  });
});
