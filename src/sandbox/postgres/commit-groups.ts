/**
 * The groups of changes the shared store (store.ts) commits: what a batch of units changed, and
 * which of the waiting groups one transaction takes (D513).
 */
import type { Touched } from './collection.js';
import type { RecordRow } from './rows.js';

/** Rows of one commit, at most, unless one group holds more (the groups waiting share a commit up to it). */
const COMMIT_ROWS = 8_192;

/** What a batch of units changed, committed in one transaction; its units settle with it. */
export interface CommitGroup {
  /** The records as the batch left them (a later batch may change them before this one commits). */
  rows: RecordRow[];
  /** What they were before, to put back. */
  touched: Touched[];
  settle(): void;
  fail(failure: unknown): void;
}

/**
 * How many of the oldest `groups` one commit takes: as many as fit in {@link COMMIT_ROWS} rows, and
 * at least one. Reads only the groups it takes and the next (a pile of thousands is not walked).
 */
export function groupsForCommit(groups: readonly { rows: { length: number } }[]): number {
  let taken = 0;
  let count = 0;
  while (taken < groups.length && (taken === 0 || count + groups[taken]!.rows.length <= COMMIT_ROWS)) {
    count += groups[taken]!.rows.length;
    taken++;
  }
  return taken;
}

/** The records of the oldest `taken` groups, each once, as the newest of them left it. */
export function newestRows(groups: readonly CommitGroup[], taken: number): RecordRow[] {
  const rows = new Map<string, RecordRow>();
  for (let index = 0; index < taken; index++) {
    for (const row of groups[index]!.rows) {
      const key = `${row.collection}\0${row.id}`;
      rows.delete(key);
      rows.set(key, row);
    }
  }
  return [...rows.values()];
}
