/**
 * Reading what changed in the shared store's tables (store.ts): every record when a writer opens
 * the store, and the changes since the last `seq` it saw when it took the role again after losing
 * its connection. Read a page of {@link CATCH_UP_PAGE} rows at a time, so that a store of a million
 * records is never held as one result.
 *
 * No index holds the records' `seq` (so that their updates can be heap-only, rows.ts). An opening
 * reads the whole table in its own order through a cursor. A catch-up reads it in key order, a
 * page at a time from the last key read, those changed since `seen` picked out by the scan: one
 * pass over the table however few changed (it follows a lost connection: rare). The deletions
 * since `seen` are read first, in `seq` order through their key. In what order the rows come does
 * not matter here: the store replays them in `seq` order (seq-order.ts).
 */
import type { QueryClient } from './lease.js';

/** Rows read per query. */
const CATCH_UP_PAGE = 5_000;

/** A change read: `data` NULL for a deleted record. */
export interface ChangedRow {
  seq: string;
  collection: string;
  id: string;
  data: string | null;
}

const DECIMAL = /^[0-9]+$/;

/** The larger of two decimal `seq`s (bigint in the database: text here). */
function later(a: string, b: string): string {
  if (!DECIMAL.test(b)) throw new Error(`a sequence number read is not a number: ${b}`);
  return a.length !== b.length ? (a.length > b.length ? a : b) : a > b ? a : b;
}

/**
 * Reads the changes after `seen` (a decimal `seq`), a page at a time, handing each page to
 * `apply`: the deletions (none when `full`, a store opening with nothing to delete from), then the
 * records. Answers the last `seq` read (`seen` when nothing changed).
 */
export async function readChanges(client: QueryClient, seen: string, full: boolean, apply: (rows: ChangedRow[]) => void): Promise<string> {
  if (!DECIMAL.test(seen)) throw new Error(`a sequence number seen is not a number: ${seen}`);
  let last = seen;
  if (full) {
    // Nothing to delete, but a deletion's seq is one seen: the next catch-up starts after it.
    const newest = (await client.query<{ seq: string | null }>('SELECT max(seq)::text AS seq FROM sandbox_deletions')).rows[0]?.seq;
    if (newest !== null && newest !== undefined) last = later(last, newest);
  } else {
    let after = seen;
    for (;;) {
      // Ordered by the column: `seq` alone would name the text output, in text order.
      const rows = (
        await client.query<ChangedRow>(
          `SELECT seq::text AS seq, collection, id, NULL AS data FROM sandbox_deletions WHERE sandbox_deletions.seq > ${after} ORDER BY sandbox_deletions.seq LIMIT ${CATCH_UP_PAGE}`,
        )
      ).rows;
      if (rows.length > 0) {
        apply(rows);
        after = later(after, rows[rows.length - 1]!.seq);
      }
      if (rows.length < CATCH_UP_PAGE) break;
    }
    last = after;
  }
  if (full) {
    // Everything, in the table's own order: one scan of it through a cursor, a page a fetch (a
    // read of the key's order visits the pages at random, half as fast again for a million rows).
    await client.query('BEGIN READ ONLY');
    try {
      await client.query('DECLARE sandbox_opening NO SCROLL CURSOR FOR SELECT seq::text AS seq, collection, id, data FROM sandbox_records');
      for (;;) {
        const rows = (await client.query<ChangedRow>(`FETCH ${CATCH_UP_PAGE} FROM sandbox_opening`)).rows;
        for (const row of rows) last = later(last, row.seq);
        if (rows.length > 0) apply(rows);
        if (rows.length < CATCH_UP_PAGE) break;
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
    return last;
  }
  let key: [string, string] | undefined;
  for (;;) {
    // In key order through the primary key, from the last key read: the rows changed since `seen`
    // picked out by the scan itself, which goes on where the last page stopped.
    const from = key === undefined ? 'true' : '(collection, id) > ($1, $2)';
    const rows = (
      await client.query<ChangedRow>(
        `SELECT seq::text AS seq, collection, id, data FROM sandbox_records WHERE ${from} AND seq > ${seen} ORDER BY collection, id LIMIT ${CATCH_UP_PAGE}`,
        key ?? [],
      )
    ).rows;
    for (const row of rows) last = later(last, row.seq);
    if (rows.length > 0) apply(rows);
    if (rows.length < CATCH_UP_PAGE) return last;
    const end = rows[rows.length - 1]!;
    key = [end.collection, end.id];
  }
}
