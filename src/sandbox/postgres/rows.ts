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
 * A statement's rows go as its one parameter, a JSON array, each record's JSON text in it as a JSON
 * string (escaped by V8's `JSON.stringify`, native): never copied into an escaped literal (pg's
 * `escapeLiteral` builds its answer a character at a time: under an advance that expires 20,000
 * transactions that copying, and the garbage it left, was most of the writer's time; an array
 * parameter for `unnest` is escaped the same way, by regular expressions). One parameter rather
 * than three a row in a VALUES list: the statement is the same text every time, prepared once per
 * connection, and the database reads the array in less time than it parsed the list (D511). A
 * group that fits one statement is one statement, atomic by itself (no BEGIN/COMMIT round trips); a
 * larger one is a transaction over its statements. A record's JSON is the kept text where it holds
 * one (raw-json.ts), never made from its object again.
 */
import type { QueryClient } from './lease.js';
import { stringifyJson } from '../../http/raw-json.js';

/** The JSON of one statement, about, at most (characters). */
const STATEMENT_BYTES = 256 * 1024;
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

/** Writes `rows` in one transaction; answers the last `seq` written. */
export async function writeRecords(client: QueryClient, rows: readonly RecordRow[]): Promise<string | undefined> {
  let parts: string[] = [];
  let bytes = 0;
  let deletions = false;
  let began = false;
  let seq: string | undefined;
  const send = async () => {
    // Named: prepared once per connection, planned once (pg keeps it while the connection lasts).
    const text = deletions ? WRITE_AND_DELETE : WRITE;
    const result = await client.query<{ seq: string | null }>({ name: deletions ? 'sandbox-write-delete' : 'sandbox-write', text, values: [`[${parts.join(',')}]`] });
    seq = result.rows[0]?.seq ?? seq;
    parts = [];
    bytes = 0;
    deletions = false;
  };
  for (let index = 0; index < rows.length; index++) {
    const { collection, id, value } = rows[index]!;
    const head = `[${JSON.stringify(collection)},${JSON.stringify(id)}`;
    const part = value === undefined ? `${head}]` : `${head},${JSON.stringify(stringifyJson(value))}]`;
    if (parts.length > 0 && (bytes + part.length > STATEMENT_BYTES || parts.length === STATEMENT_ROWS)) {
      if (!began) {
        await client.query('BEGIN');
        began = true;
      }
      await send();
    }
    parts.push(part);
    bytes += part.length;
    if (value === undefined) deletions = true;
  }
  if (parts.length > 0) await send();
  if (began) await client.query('COMMIT');
  return seq;
}
