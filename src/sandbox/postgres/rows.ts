/**
 * Writing records to `sandbox_records` (store.ts): one transaction for a group of changed records,
 * a statement per chunk of rows of about {@link STATEMENT_BYTES} of JSON (and at most
 * {@link STATEMENT_ROWS} rows), each sent when made, so that a unit that wrote 100,000 records (an
 * advance that expires them) never holds all their text at once.
 *
 * A record written gets a new `seq`; a record deleted loses its row and gets a row of
 * `sandbox_deletions` with a new `seq` instead, so that a writer that took the role again learns of
 * both (catch-up.ts). No index holds `seq`, so an update of a record whose page has room is a
 * heap-only one: the row rewritten in place, no index entry added (schema version 4).
 *
 * A statement's rows go as its one parameter, a JSON array, written into a buffer as they are made:
 * the statement's text never exists as a string (pg sends a `Buffer` as it is, in the binary
 * format, which for `json` is its text). Each record's JSON text goes in it as a JSON string
 * (escaped by V8's `JSON.stringify`, native). Under an advance that expires 20,000 transactions the
 * writer made each row as a string, then the statement's text by joining them, then pg copied that
 * into its message; the buffer saves the row and the joined text (D514). Measured alone (20,000
 * rows of 700 bytes, PostgreSQL 15), the database reads this array of arrays with `->>` in 260 to
 * 290 ms of its CPU; `json_to_recordset` over objects took 410 to 540 ms, and the record's JSON put
 * in as it is (not as a string) 360 to 580 ms either way. Never an escaped literal (pg's
 * `escapeLiteral` builds its answer a character at a time; an array parameter for `unnest` is
 * escaped the same way, by regular expressions). One parameter rather than three a row in a VALUES
 * list: the statement is the same text every time, prepared once per connection, and the database
 * reads the array in less time than it parsed the list (D511). A group that fits one statement is
 * one statement, atomic by itself (no BEGIN/COMMIT round trips); a larger one is a transaction
 * over its statements. A record's JSON is the kept text where it holds one (raw-json.ts), never
 * made from its object again.
 */
import type { QueryClient } from './lease.js';
import { stringifyJson } from '../../http/raw-json.js';

/** The JSON of one statement, about, at most (bytes): a statement is sent once past it. */
const STATEMENT_BYTES = 64 * 1024;
/** Rows of one statement, at most. */
const STATEMENT_ROWS = 4_096;

/** A record as a group of units left it: `value` undefined when it was deleted. */
export interface RecordRow {
  collection: string;
  id: string;
  value: unknown;
}

/**
 * The rows of a statement: its one parameter, a JSON array of `[collection, id, data]` (`[collection,
 * id]`: deleted), each a JSON string. The record's JSON text goes as a string, not as JSON within
 * the array: PostgreSQL's JSON functions refuse a `\u0000` or a lone surrogate's escape, which a
 * record's text may hold (a request's string), and as a string's characters they are plain text.
 */
const ROWS = 'SELECT r->>0 AS c, r->>1 AS i, r->>2 AS d FROM json_array_elements($1::json) AS e (r)';
/** Writes the records (none deleted), answering the last `seq` given. */
const WRITE =
  `WITH written AS (INSERT INTO sandbox_records (collection, id, data, seq) SELECT c, i, d, nextval('sandbox_seq') FROM (${ROWS}) AS v ` +
  'ON CONFLICT (collection, id) DO UPDATE SET data = EXCLUDED.data, seq = EXCLUDED.seq RETURNING seq) SELECT max(seq)::text AS seq FROM written';
/** Writes and deletes records, answering the last `seq` given. */
const WRITE_AND_DELETE =
  `WITH v AS MATERIALIZED (${ROWS}), ` +
  "written AS (INSERT INTO sandbox_records (collection, id, data, seq) SELECT c, i, d, nextval('sandbox_seq') FROM v WHERE d IS NOT NULL " +
  'ON CONFLICT (collection, id) DO UPDATE SET data = EXCLUDED.data, seq = EXCLUDED.seq RETURNING seq), ' +
  'removed AS (DELETE FROM sandbox_records r USING v WHERE v.d IS NULL AND r.collection = v.c AND r.id = v.i), ' +
  "logged AS (INSERT INTO sandbox_deletions (seq, collection, id) SELECT nextval('sandbox_seq'), c, i FROM v WHERE d IS NULL RETURNING seq) " +
  'SELECT max(seq)::text AS seq FROM (SELECT seq FROM written UNION ALL SELECT seq FROM logged) AS s';

/** A statement's buffer at first, bytes: a commit under load holds a few kilobytes; an advance's grows it to the budget. */
const FIRST_BYTES = 16 * 1024;

/** The bytes a statement is written into (a `Buffer` per statement: pg may send it after a later one is begun). */
class StatementBuffer {
  bytes = Buffer.allocUnsafe(FIRST_BYTES);
  length = 1;
  rows = 0;
  deletions = false;

  constructor() {
    this.bytes[0] = 0x5b; // [
  }

  /** Adds a row: `head` is `[collection,id` as JSON, `data` the record's JSON text as a JSON string (undefined: deleted). */
  add(head: string, data: string | undefined): void {
    // At most 3 bytes a UTF-16 unit, and the separators.
    this.reserve(3 * (head.length + (data?.length ?? 0)) + 8);
    if (this.rows > 0) this.bytes[this.length++] = 0x2c; // ,
    this.length += this.bytes.write(head, this.length);
    if (data === undefined) this.deletions = true;
    else {
      this.bytes[this.length++] = 0x2c;
      this.length += this.bytes.write(data, this.length);
    }
    this.bytes[this.length++] = 0x5d; // ]
    this.rows++;
  }

  /** The parameter: the array closed. */
  parameter(): Buffer {
    this.reserve(1);
    this.bytes[this.length++] = 0x5d;
    return this.bytes.subarray(0, this.length);
  }

  private reserve(more: number): void {
    if (this.length + more <= this.bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.length + more));
    this.bytes.copy(grown, 0, 0, this.length);
    this.bytes = grown;
  }
}

/** Writes `rows` in one transaction; answers the last `seq` written. */
export async function writeRecords(client: QueryClient, rows: readonly RecordRow[]): Promise<string | undefined> {
  let statement: StatementBuffer | undefined;
  let began = false;
  let seq: string | undefined;
  const send = async (full: StatementBuffer) => {
    const { deletions } = full;
    const values = [full.parameter()];
    statement = undefined;
    // Named: prepared once per connection, planned once (pg keeps it while the connection lasts).
    const text = deletions ? WRITE_AND_DELETE : WRITE;
    const result = await client.query<{ seq: string | null }>({ name: deletions ? 'sandbox-write-delete' : 'sandbox-write', text, values });
    seq = result.rows[0]?.seq ?? seq;
  };
  for (let index = 0; index < rows.length; index++) {
    const { collection, id, value } = rows[index]!;
    const data = value === undefined ? undefined : JSON.stringify(stringifyJson(value));
    statement ??= new StatementBuffer();
    statement.add(`[${JSON.stringify(collection)},${JSON.stringify(id)}`, data);
    if (statement.length >= STATEMENT_BYTES || statement.rows === STATEMENT_ROWS) {
      if (!began && index < rows.length - 1) {
        await client.query('BEGIN');
        began = true;
      }
      await send(statement);
    }
  }
  if (statement !== undefined) await send(statement);
  if (began) await client.query('COMMIT');
  return seq;
}
