/**
 * Reading what changed in `sandbox_records` (store.ts): every record when a writer opens the store,
 * and the changes since the last `seq` it saw when it took the role again after losing its
 * connection. Read a page of {@link CATCH_UP_PAGE} rows at a time, in `seq` order, so that a store of
 * a million records is never held as one result.
 */
import type { QueryClient } from './lease.js';

/** Changes read per query. */
const CATCH_UP_PAGE = 5_000;

/** A row of `sandbox_records` as read: `data` NULL for a deleted record (a tombstone). */
export interface ChangedRow {
  seq: string;
  collection: string;
  id: string;
  data: string | null;
}

/**
 * Reads the rows written after `seen` (a decimal `seq`), a page at a time, handing each page to
 * `apply`; `full` (a store opening) skips the tombstones. Answers the last `seq` read (`seen` when
 * nothing changed).
 */
export async function readChanges(client: QueryClient, seen: string, full: boolean, apply: (rows: ChangedRow[]) => void): Promise<string> {
  // Ordered by the column (`seq` alone would name the text output), so that the index on it is
  // read in order; a page at a time, so that the plan is always that index's, whatever the
  // table's statistics say.
  const columns = 'SELECT seq::text AS seq, collection, id, data FROM sandbox_records';
  const live = full ? 'data IS NOT NULL AND ' : '';
  let last = seen;
  for (;;) {
    if (!/^[0-9]+$/.test(last)) throw new Error(`a sequence number read is not a number: ${last}`);
    const select = `${columns} WHERE ${live}sandbox_records.seq > ${last} ORDER BY sandbox_records.seq LIMIT ${CATCH_UP_PAGE}`;
    const rows = (await client.query<ChangedRow>(select)).rows;
    if (rows.length > 0) {
      apply(rows);
      last = rows[rows.length - 1]!.seq;
    }
    if (rows.length < CATCH_UP_PAGE) return last;
  }
}
