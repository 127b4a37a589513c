/**
 * What a writer reads back (catch-up.ts, seq-order.ts, rows.ts) on a real PostgreSQL: the changes
 * after a `seq` it saw (writes, deletions, a record deleted and written again), everything at a
 * store's opening, in the order written; a database of schema version 3 migrated with its
 * deletions kept; and the records' updates written in place (no index on `seq`).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readChanges, type ChangedRow } from '../../src/sandbox/postgres/catch-up.js';
import { writeRecords, type RecordRow } from '../../src/sandbox/postgres/rows.js';
import { migrateDatabase } from '../../src/sandbox/postgres/schema.js';
import { SeqOrder } from '../../src/sandbox/postgres/seq-order.js';
import { postgresUnavailable, startPostgres, type PostgresCluster } from '../support/postgres.js';

const unavailable = postgresUnavailable();
if (unavailable !== undefined) console.warn(`shared-store catch-up tests skipped: ${unavailable}`);

const write = (collection: string, id: string, value?: unknown): RecordRow => ({ collection, id, value });

/** The rows read after `seen`, replayed in seq order into `state` (collection/id -> JSON). */
async function catchUp(client: pg.Client, seen: string, full: boolean, state: Map<string, unknown>): Promise<{ last: string; order: string[] }> {
  const newest = (await client.query<{ seq: string }>('SELECT last_value::text AS seq FROM sandbox_seq')).rows[0]!.seq;
  const order = new SeqOrder<Omit<ChangedRow, 'seq'> & { seq: number }>(seen, newest);
  const last = await readChanges(client, seen, full, (rows) => {
    for (const row of rows) order.add({ ...row, seq: Number(row.seq) });
  });
  const replayed: string[] = [];
  await order.replay((row) => {
    const key = `${row.collection}/${row.id}`;
    replayed.push(`${key}:${row.data === null ? 'deleted' : 'written'}`);
    if (row.data === null) state.delete(key);
    else state.set(key, JSON.parse(row.data));
  });
  return { last, order: replayed };
}

describe('SeqOrder', () => {
  it('replays rows in seq order whatever order they came in, and yields to the event loop on the way', async () => {
    const order = new SeqOrder<{ seq: number }>('100', '600100');
    const seqs = Array.from({ length: 300_000 }, (_, index) => 101 + ((index * 7_919) % 600_000));
    for (const seq of seqs) order.add({ seq });
    let turns = 0;
    let counting = true;
    const count = () => {
      if (!counting) return;
      turns += 1;
      setImmediate(count);
    };
    setImmediate(count);
    const replayed: number[] = [];
    await order.replay(({ seq }) => replayed.push(seq));
    counting = false;
    expect(replayed).toEqual([...seqs].sort((a, b) => a - b));
    expect(turns).toBeGreaterThan(1);
  });
});

describe.skipIf(unavailable !== undefined)('a writer reading back what changed', () => {
  let cluster: PostgresCluster;
  let client: pg.Client;

  beforeAll(async () => {
    cluster = (await startPostgres())!;
    const databaseUrl = await cluster.createDatabase();
    await migrateDatabase(databaseUrl);
    client = new pg.Client(databaseUrl);
    await client.connect();
  }, 60_000);
  afterAll(async () => {
    await client?.end();
    await cluster?.stop();
  });

  it('reads the writes and deletions after a seq, in the order written, and everything live at an opening', async () => {
    const seen = await writeRecords(client, [write('c', 'kept', { n: 1 }), write('c', 'updated', { n: 1 }), write('c', 'deleted', { n: 1 }), write('c', 'again', { n: 1 })]);
    expect(seen).toMatch(/^[0-9]+$/);
    await writeRecords(client, [write('c', 'updated', { n: 2 }), write('c', 'deleted'), write('c', 'again'), write('c', 'new', { n: 1 })]);
    await writeRecords(client, [write('c', 'again', { n: 3 }), write('c', 'brief', { n: 1 })]);
    await writeRecords(client, [write('c', 'brief')]);

    const state = new Map<string, unknown>([['c/kept', { n: 1 }], ['c/updated', { n: 1 }], ['c/deleted', { n: 1 }], ['c/again', { n: 1 }]]);
    const { last, order } = await catchUp(client, seen!, false, state);
    expect(Object.fromEntries(state)).toEqual({ 'c/kept': { n: 1 }, 'c/updated': { n: 2 }, 'c/again': { n: 3 }, 'c/new': { n: 1 } });
    // In the order written: the deletion of `again` before its new row, `brief` deleted last.
    expect(order.indexOf('c/again:deleted')).toBeLessThan(order.indexOf('c/again:written'));
    expect(order.at(-1)).toBe('c/brief:deleted');
    expect(order).not.toContain('c/kept:written');

    const nothing = await catchUp(client, last, false, state);
    expect(nothing).toEqual({ last, order: [] });

    const opened = new Map<string, unknown>();
    const full = await catchUp(client, '0', true, opened);
    expect(Object.fromEntries(opened)).toEqual(Object.fromEntries(state));
    // In the order of their last writes (not their keys' order).
    expect(full.order).toEqual(['c/kept:written', 'c/updated:written', 'c/new:written', 'c/again:written']);
    expect(full.last).toBe(last);
  });

  it('keeps any string a record holds, a NUL and a lone surrogate included, and any id', async () => {
    const odd = { text: 'nul \u0000, lone \ud800, pair \ud83d\ude00, quote " and backslash \\', nested: [{ '\u0000key': null }] };
    const seen = await writeRecords(client, [write('odd', 'marker', {})]);
    await writeRecords(client, [write('odd', 'strings', odd), write('odd', 'id "with" quotes \\ and ☃', { n: 1 })]);
    const state = new Map<string, unknown>();
    await catchUp(client, seen!, false, state);
    expect(state.get('odd/strings')).toEqual(odd);
    expect(state.get('odd/id "with" quotes \\ and ☃')).toEqual({ n: 1 });
  });

  it('writes a record larger than a statement, and text of every width, beside small ones', async () => {
    const wide = 'é☃😀'.repeat(100_000); // 2, 3 and 4 bytes a character: 900,000 bytes
    const seen = await writeRecords(client, [write('wide', 'marker', {})]);
    await writeRecords(client, [write('wide', 'before', { n: 1 }), write('wide', 'big', { wide }), write('wide', 'after', { n: 2 })]);
    const state = new Map<string, unknown>();
    await catchUp(client, seen!, false, state);
    expect(state.get('wide/big')).toEqual({ wide });
    expect(state.get('wide/before')).toEqual({ n: 1 });
    expect(state.get('wide/after')).toEqual({ n: 2 });
  });

  it('pages through more changes than one read holds, in key order, picking only those after the seq', async () => {
    const rows = Array.from({ length: 12_000 }, (_, index) => write('paged', `r${String(index).padStart(5, '0')}`, { index }));
    await writeRecords(client, rows);
    const seen = await writeRecords(client, [write('paged', 'marker', { index: -1 })]);
    const changed = rows.filter((_, index) => index % 3 === 0).map((row) => ({ ...row, value: { changed: true } }));
    const deleted = rows.filter((_, index) => index % 3 === 1).map((row) => ({ ...row, value: undefined }));
    await writeRecords(client, [...changed, ...deleted]);
    const state = new Map<string, unknown>();
    const { order } = await catchUp(client, seen!, false, state);
    expect(order.filter((entry) => entry.endsWith(':written'))).toHaveLength(4_000);
    expect(order.filter((entry) => entry.endsWith(':deleted'))).toHaveLength(4_000);
    expect([...state.values()].every((value) => (value as { changed?: boolean }).changed === true)).toBe(true);
  });

  it('has no index on the records but their key, so that an update is written in place', async () => {
    const indexes = await client.query<{ indexname: string }>("SELECT indexname FROM pg_indexes WHERE tablename = 'sandbox_records'");
    expect(indexes.rows.map((row) => row.indexname)).toEqual(['sandbox_records_pkey']);
    const ids = Array.from({ length: 200 }, (_, index) => `h${index}`);
    await writeRecords(client, ids.map((id) => write('hot', id, { v: 0, text: 'x'.repeat(500) })));
    for (let round = 1; round <= 3; round++) await writeRecords(client, ids.map((id) => write('hot', id, { v: round, text: 'x'.repeat(500) })));
    // The statistics reach the view once the writing session reports them (within a second).
    let hot = 0;
    for (let tries = 0; tries < 40 && hot < 300; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const stats = await client.query<{ hot: string }>(
        "SELECT n_tup_hot_upd::text AS hot FROM pg_stat_user_tables WHERE relname = 'sandbox_records'",
      );
      hot = Number(stats.rows[0]?.hot ?? 0);
    }
    expect(hot).toBeGreaterThanOrEqual(300);
  });

  it('migrates a database of schema version 3 with its deleted records moved to the deletions, each with its seq and time, and its records kept', async () => {
    const databaseUrl = await cluster.createDatabase();
    await migrateDatabase(databaseUrl, 3);
    const client = new pg.Client(databaseUrl);
    await client.connect();
    try {
      await client.query(
        `INSERT INTO sandbox_records (collection, id, data, seq, deleted_at) VALUES
           ('c', 'live', '{"n":1}', nextval('sandbox_seq'), NULL),
           ('c', 'gone', NULL, nextval('sandbox_seq'), now() - interval '1 minute')`,
      );
      await migrateDatabase(databaseUrl);
      const records = await client.query('SELECT collection, id, data, seq::text AS seq FROM sandbox_records');
      expect(records.rows).toEqual([{ collection: 'c', id: 'live', data: '{"n":1}', seq: '1' }]);
      const deletions = await client.query<{ seq: string; id: string; old: boolean }>(
        "SELECT seq::text AS seq, id, deleted_at < now() - interval '30 seconds' AS old FROM sandbox_deletions",
      );
      expect(deletions.rows).toEqual([{ seq: '2', id: 'gone', old: true }]);
      const versions = await client.query<{ version: number }>('SELECT version FROM sandbox_schema_migrations ORDER BY version');
      expect(versions.rows.map((row) => row.version)).toEqual([1, 2, 3, 4]);
    } finally {
      await client.end();
    }
  });
});
