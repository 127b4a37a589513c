/**
 * The shared store's units of work on a real PostgreSQL: a unit that throws writes nothing, in the
 * cache or in the database, whether it ran alone, in a batch beside units that succeed, or inline
 * inside another unit; the units around it keep what they wrote.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupsForCommit } from '../../src/sandbox/postgres/commit-groups.js';
import { PostgresStore } from '../../src/sandbox/postgres/store.js';
import { postgresUnavailable, startPostgres, type PostgresCluster } from '../support/postgres.js';

const unavailable = postgresUnavailable();
if (unavailable !== undefined) console.warn(`shared-store unit tests skipped: ${unavailable}`);

const quiet = { warn: () => undefined, error: () => undefined };

describe('the groups one commit takes', () => {
  // Groups of the given numbers of rows.
  const of = (sizes: number[]) => sizes.map((size) => ({ rows: { length: size } }));
  it('are the oldest that fit in 8,192 rows, at least one however large, never all of a pile', () => {
    expect(groupsForCommit(of([100, 200, 300]))).toBe(3);
    expect(groupsForCommit(of([4_000, 4_000, 4_000]))).toBe(2);
    expect(groupsForCommit(of([4_096, 4_096, 1]))).toBe(2);
    expect(groupsForCommit(of([199_000, 10]))).toBe(1);
    expect(groupsForCommit(of([10, 199_000]))).toBe(1);
    expect(groupsForCommit(of(Array.from({ length: 1_000 }, () => 200)))).toBe(40);
  });
});

describe.skipIf(unavailable !== undefined)('a unit of work of the shared store', () => {
  let cluster: PostgresCluster;
  let databaseUrl: string;
  let store: PostgresStore;

  beforeAll(async () => {
    cluster = (await startPostgres())!;
    databaseUrl = await cluster.createDatabase();
    store = new PostgresStore({ url: databaseUrl, log: quiet });
    await store.open();
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    await cluster?.stop();
  });

  const rows = async (): Promise<Record<string, unknown>> => {
    const client = new pg.Client(databaseUrl);
    await client.connect();
    try {
      const result = await client.query<{ id: string; data: string }>(
        "SELECT id, data FROM sandbox_records WHERE collection = 'units' AND data IS NOT NULL ORDER BY id",
      );
      return Object.fromEntries(result.rows.map((row) => [row.id, JSON.parse(row.data)]));
    } finally {
      await client.end();
    }
  };

  it('that throws writes nothing, in the cache or the database; its neighbours in the batch keep theirs', async () => {
    const records = store.collection<{ n: number }>('units');
    await store.unit(() => records.set('kept', { n: 1 }));
    const failure = new Error('the handler failed');
    // Queued together: the first runs alone, the next three in one batch (one transaction).
    const first = store.unit(() => records.set('first', { n: 1 }));
    const before = store.unit(() => {
      records.set('kept', { n: 2 });
      records.set('before', { n: 1 });
    });
    const throwing = store.unit(() => {
      records.set('kept', { n: 3 });
      records.set('before', { n: 2 });
      records.set('thrown', { n: 1 });
      records.delete('first');
      throw failure;
    });
    // A unit that wrote nothing (this one, put back) settles as soon as its batch ran: handled here.
    throwing.catch(() => undefined);
    const after = store.unit(() => records.set('after', { n: records.get('kept')!.n }));
    await Promise.all([first, before, after]);
    await expect(throwing).rejects.toBe(failure);
    expect(records.get('kept')).toEqual({ n: 2 });
    expect(records.get('before')).toEqual({ n: 1 });
    expect(records.get('thrown')).toBeUndefined();
    expect(records.get('first')).toEqual({ n: 1 });
    expect(records.get('after')).toEqual({ n: 2 });
    expect(await rows()).toEqual({ after: { n: 2 }, before: { n: 1 }, first: { n: 1 }, kept: { n: 2 } });
  });

  it('started inline inside another and throwing: put back, while the outer unit keeps what it wrote', async () => {
    const records = store.collection<{ n: number }>('units');
    let inner: Promise<unknown> | undefined;
    await store.unit(() => {
      records.set('outer', { n: 1 });
      inner = store.unit(() => {
        records.set('outer', { n: 2 });
        records.set('inner', { n: 1 });
        throw new Error('inline failure');
      });
      // Rejected at once: handled here, checked below.
      inner.catch(() => undefined);
      records.set('outer-after', { n: records.get('outer')!.n });
    });
    await expect(inner).rejects.toThrow('inline failure');
    expect(records.get('inner')).toBeUndefined();
    expect(records.get('outer-after')).toEqual({ n: 1 });
    const stored = await rows();
    expect(stored).toMatchObject({ outer: { n: 1 }, 'outer-after': { n: 1 } });
    expect(stored).not.toHaveProperty('inner');
  });
});
