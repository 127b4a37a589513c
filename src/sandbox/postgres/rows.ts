/**
 * Writing records to `sandbox_records` (store.ts): one transaction for a group of changed records,
 * a statement per chunk of rows of about {@link STATEMENT_BYTES} of JSON (and at most
 * {@link STATEMENT_ROWS} rows), each sent when made, so that a unit that wrote 100,000 records (an
 * advance that expires them) never holds all their text at once.
 *
 * The values go as the statement's parameters, not as SQL literals: each JSON text is sent as it
 * is, never copied into an escaped literal (pg's `escapeLiteral` builds its answer a character at a
 * time: under an advance that expires 20,000 transactions that copying, and the garbage it left,
 * was most of the writer's time). A group that fits one statement is one statement, atomic by
 * itself (no BEGIN/COMMIT round trips); a larger one is a transaction over its statements. A
 * record's JSON is the kept text where it holds one (raw-json.ts), never serialised again.
 */
import type { QueryClient } from './lease.js';
import { stringifyJson } from '../../http/raw-json.js';

/** The JSON of one statement, about, at most (characters). */
const STATEMENT_BYTES = 256 * 1024;
/** Rows of one statement, at most (three parameters each; PostgreSQL takes 65,535 parameters). */
const STATEMENT_ROWS = 4_096;

/** A record as a group of units left it: `value` undefined when it was deleted. */
export interface RecordRow {
  collection: string;
  id: string;
  value: unknown;
}

/** The statement that writes `count` rows (parameters collection, id, data for each) and answers the last `seq`. */
function upsert(count: number): string {
  const tuples: string[] = ['($1::text, $2::text, $3::text)'];
  for (let index = 1; index < count; index++) tuples.push(`($${3 * index + 1}, $${3 * index + 2}, $${3 * index + 3})`);
  return (
    'WITH written AS (INSERT INTO sandbox_records (collection, id, data, seq, deleted_at) ' +
    `SELECT c, i, d, nextval('sandbox_seq'), CASE WHEN d IS NULL THEN now() END FROM (VALUES ${tuples.join(', ')}) AS v (c, i, d) ` +
    'ON CONFLICT (collection, id) DO UPDATE SET data = EXCLUDED.data, seq = EXCLUDED.seq, deleted_at = EXCLUDED.deleted_at ' +
    'RETURNING seq) SELECT max(seq)::text AS seq FROM written'
  );
}

/** Writes `rows` in one transaction; answers the last `seq` written. */
export async function writeRecords(client: QueryClient, rows: readonly RecordRow[]): Promise<string | undefined> {
  let values: (string | null)[] = [];
  let bytes = 0;
  let began = false;
  let seq: string | undefined;
  const send = async () => {
    const result = await client.query<{ seq: string | null }>(upsert(values.length / 3), values);
    seq = result.rows[0]?.seq ?? seq;
    values = [];
    bytes = 0;
  };
  for (let index = 0; index < rows.length; index++) {
    const { collection, id, value } = rows[index]!;
    const data = value === undefined ? null : stringifyJson(value);
    const size = collection.length + id.length + (data?.length ?? 0);
    if (values.length > 0 && (bytes + size > STATEMENT_BYTES || values.length === 3 * STATEMENT_ROWS)) {
      if (!began) {
        await client.query('BEGIN');
        began = true;
      }
      await send();
    }
    values.push(collection, id, data);
    bytes += size;
  }
  if (values.length > 0) await send();
  if (began) await client.query('COMMIT');
  return seq;
}
