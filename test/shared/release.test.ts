/**
 * A writer deposed (another process took the role while its connection was away) forwards from
 * then on and holds no records: the shared store drops its cache, the families' observers are told
 * of every record that goes, and when it takes the role again it reads every record anew, so a
 * record deleted meanwhile (its row gone) is not kept from before.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WriterLease } from '../../src/sandbox/postgres/lease.js';
import { migrateDatabase } from '../../src/sandbox/postgres/schema.js';
import { PostgresStore } from '../../src/sandbox/postgres/store.js';
import { postgresUnavailable, startPostgres, type PostgresCluster } from '../support/postgres.js';

const unavailable = postgresUnavailable();
if (unavailable !== undefined) console.warn(`shared-store release tests skipped: ${unavailable}`);

describe.skipIf(unavailable !== undefined)('a shared store released by a deposed writer', () => {
  let cluster: PostgresCluster;
  let databaseUrl: string;

  beforeAll(async () => {
    cluster = (await startPostgres())!;
    databaseUrl = await cluster.createDatabase();
    await migrateDatabase(databaseUrl);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('drops every record, tells the observers, and reads every record again when opened again', async () => {
    const store = new PostgresStore({ url: databaseUrl, log: { warn: () => undefined, error: () => undefined } });
    const lease = new WriterLease(databaseUrl, store.processId, () => undefined);
    expect(await lease.tryTake()).toBe(true);
    try {
      await store.open(lease);
      const records = store.collection<{ n: number }>('release');
      const gone: string[] = [];
      store.observe<{ n: number }>('release', (id, value) => {
        if (value === undefined) gone.push(id);
      });
      await store.unit(() => {
        records.set('kept', { n: 1 });
        records.set('deleted-meanwhile', { n: 2 });
      });

      store.release();
      expect(records.size).toBe(0);
      expect(gone.sort()).toEqual(['deleted-meanwhile', 'kept']);

      // Meanwhile another writer changed one record and deleted the other, its tombstone purged.
      const client = new pg.Client(databaseUrl);
      await client.connect();
      try {
        await client.query("DELETE FROM sandbox_records WHERE collection = 'release' AND id = 'deleted-meanwhile'");
        await client.query(`UPDATE sandbox_records SET data = '{"n":3}', seq = nextval('sandbox_seq') WHERE collection = 'release' AND id = 'kept'`);
      } finally {
        await client.end();
      }
      await store.open(lease);
      expect(records.get('kept')).toEqual({ n: 3 });
      expect(records.has('deleted-meanwhile')).toBe(false);
      expect(records.size).toBe(1);
    } finally {
      await store.close();
      await lease.close();
    }
  }, 60_000);
});
