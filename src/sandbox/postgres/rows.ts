/**
 * Writing records to `sandbox_records` (store.ts): one transaction for a group of changed records,
 * a statement per chunk of rows of about {@link STATEMENT_BYTES}, each sent when made, so that a
 * unit that wrote 100,000 records (an advance that expires them) never holds all their SQL at once.
 * A record's JSON is the kept text where it holds one (raw-json.ts), never serialised again.
 */
import type { QueryClient } from './lease.js';
import { stringifyJson } from '../../http/raw-json.js';

/** The SQL text of one INSERT statement, about, at most (characters). */
const STATEMENT_BYTES = 512 * 1024;

/** A record as a group of units left it: `value` undefined when it was deleted. */
export interface RecordRow {
  collection: string;
  id: string;
  value: unknown;
}

/** Writes `rows` in one transaction (BEGIN to COMMIT); answers the last `seq` written. */
export async function writeRecords(client: QueryClient, rows: readonly RecordRow[]): Promise<string | undefined> {
  let values: string[] = [];
  let bytes = 0;
  let begin = 'BEGIN; ';
  const insert = () =>
    `INSERT INTO sandbox_records (collection, id, data, seq, deleted_at) VALUES ${values.join(', ')} ` +
    'ON CONFLICT (collection, id) DO UPDATE SET data = EXCLUDED.data, seq = EXCLUDED.seq, deleted_at = EXCLUDED.deleted_at';
  for (const { collection, id, value } of rows) {
    const data = value === undefined ? 'NULL' : client.escapeLiteral(stringifyJson(value));
    const deletedAt = value === undefined ? 'now()' : 'NULL';
    const row = `(${client.escapeLiteral(collection)}, ${client.escapeLiteral(id)}, ${data}, nextval('sandbox_seq'), ${deletedAt})`;
    if (values.length > 0 && bytes + row.length > STATEMENT_BYTES) {
      await client.query(`${begin}${insert()}`);
      begin = '';
      values = [];
      bytes = 0;
    }
    values.push(row);
    bytes += row.length;
  }
  const last = [`${begin}${insert()}`, `SELECT currval('sandbox_seq')::text AS seq`, 'COMMIT'];
  const results = (await client.query(last.join('; '))) as unknown as { rows: { seq: string }[] }[];
  return results[results.length - 2]?.rows[0]?.seq;
}
