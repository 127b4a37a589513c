/**
 * The shared sandbox's schema in PostgreSQL, versioned here: numbered migrations, each applied once
 * in order, recorded in `sandbox_schema_migrations`. Applied when a sandbox starts, inside one
 * transaction under an advisory lock, so processes starting together apply each migration once.
 * A database migrated further than this version knows is refused with what to do.
 *
 * Hand-written rather than a migration tool: the schema is four tables and a sequence, applied by
 * the sandbox itself at start (no separate command to run), and a tool would bring its own CLI,
 * configuration and lock table for that. Add a migration by appending to {@link MIGRATIONS}; never
 * change one that was released.
 */
import pg, { type ClientBase } from 'pg';
import { StoreUnavailableError } from '../store.js';
import { describeDatabase } from './database-url.js';
import { describeFailure } from './failures.js';

interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

const MIGRATIONS: readonly Migration[] = Object.freeze([
  {
    version: 1,
    name: 'records',
    sql: `
      -- Every record of every collection (store.ts): one row per record, its JSON text in data.
      -- A deleted record keeps its row a while with data NULL, so that other processes learn of it.
      CREATE SEQUENCE sandbox_seq;
      CREATE TABLE sandbox_records (
        collection text NOT NULL,
        id text NOT NULL,
        data text,
        seq bigint NOT NULL,
        deleted_at timestamptz,
        PRIMARY KEY (collection, id)
      );
      -- Each process reads what changed after the last change it saw: WHERE seq > $seen.
      CREATE INDEX sandbox_records_seq ON sandbox_records (seq);
    `,
  },
  {
    version: 2,
    name: 'processes',
    sql: `
      -- The live sandbox processes and where they listen (store.ts, announce): each renews its row
      -- every few seconds; a row whose expires_at passed is a process that is gone.
      CREATE TABLE sandbox_processes (
        id text PRIMARY KEY,
        address text NOT NULL,
        expires_at timestamptz NOT NULL
      );
    `,
  },
  {
    version: 3,
    name: 'compact deliveries',
    sql: `
      -- No change of tables: a delivery's row (delivery/journal.ts) leaves out what follows from the
      -- row's id and its other fields (its id, event id, a receiver-less event's reason, empty
      -- attempts, null times). This version reads rows of both forms; an earlier sandbox would read
      -- the short ones wrongly, and this version number makes it refuse the database instead.
      COMMENT ON TABLE sandbox_records IS 'paylater sandbox records; deliveries in the short form since schema version 3';
    `,
  },
  {
    version: 4,
    name: 'deletions apart',
    sql: `
      -- A record's update rewrites its row in place where the page has room (a heap-only update:
      -- no new index entry): no index holds seq any more, and the pages keep half their room for
      -- the new versions. A writer that took the role again reads the rows changed since the seq it
      -- saw by scanning the records once, in key order (rows.ts, catch-up.ts).
      DROP INDEX sandbox_records_seq;
      ALTER TABLE sandbox_records SET (fillfactor = 50);
      -- A deleted record's row goes at once; the deletion is kept here a while instead, so that a
      -- writer that lost its connection and took the role again learns of it (seq > seen).
      CREATE TABLE sandbox_deletions (
        seq bigint PRIMARY KEY,
        collection text NOT NULL,
        id text NOT NULL,
        deleted_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX sandbox_deletions_deleted_at ON sandbox_deletions (deleted_at);
      INSERT INTO sandbox_deletions (seq, collection, id, deleted_at)
        SELECT seq, collection, id, coalesce(deleted_at, now()) FROM sandbox_records WHERE data IS NULL;
      DELETE FROM sandbox_records WHERE data IS NULL;
      ALTER TABLE sandbox_records DROP COLUMN deleted_at;
      ALTER TABLE sandbox_records ALTER COLUMN data SET NOT NULL;
    `,
  },
]);

/** The newest schema version this sandbox knows. */
const SCHEMA_VERSION: number = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** The advisory lock taken while migrating (any number, the same in every process). */
const MIGRATION_LOCK = 7_207_001;

class SchemaTooNewError extends Error {
  constructor(
    readonly found: number,
    readonly known: number,
    where: string,
  ) {
    super(
      `The database ${where} has the sandbox schema version ${found}, newer than this paylater-api knows (${known}): ` +
        'a newer version of the sandbox migrated it. Upgrade paylater-api to that version, or give --database-url another database.',
    );
    this.name = 'SchemaTooNewError';
  }
}

/** Applies the migrations this database lacks, up to `target`; answers the versions applied now. */
async function migrate(client: ClientBase, where: string, target: number): Promise<number[]> {
  await client.query('BEGIN');
  try {
    await client.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS sandbox_schema_migrations (
         version integer PRIMARY KEY,
         name text NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const result = await client.query<{ version: number | null }>('SELECT max(version) AS version FROM sandbox_schema_migrations');
    const current = result.rows[0]?.version ?? 0;
    if (current > SCHEMA_VERSION) throw new SchemaTooNewError(current, SCHEMA_VERSION, where);
    const applied: number[] = [];
    for (const migration of MIGRATIONS) {
      if (migration.version <= current || migration.version > target) continue;
      await client.query(migration.sql);
      await client.query('INSERT INTO sandbox_schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
      applied.push(migration.version);
    }
    await client.query('COMMIT');
    return applied;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * Applies the schema's migrations this database lacks (any process, before it takes a role); up to
 * `target` (a database of an earlier version, for the migrations' own tests), else all.
 */
export async function migrateDatabase(url: string, target = SCHEMA_VERSION): Promise<void> {
  const where = describeDatabase(url);
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    throw new StoreUnavailableError(`cannot connect to ${where}: ${describeFailure(error)}`);
  }
  try {
    await migrate(client, where, target);
  } catch (error) {
    if (error instanceof Error && error.name === 'SchemaTooNewError') throw error;
    throw new StoreUnavailableError(`cannot read ${where}: ${describeFailure(error)}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}
