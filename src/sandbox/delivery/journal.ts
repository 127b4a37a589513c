/**
 * Webhook delivery on the shared store (`--database-url`, postgres/store.ts): a durable queue of
 * events in PostgreSQL, delivered by any process.
 *
 * - Each delivery is a record of {@link DELIVERIES_COLLECTION}, keyed by its id, written in the unit
 *   of work of the state change that causes it (so in the same database transaction), and again
 *   after each attempt.
 * - The process that recorded an event delivers it: it is the event's owner. Every other process
 *   reads it (the deliveries list, the live stream and `paylater listen` show it) and does not send it.
 * - When a process dies (SIGKILL, a crash, a lost machine) its pending deliveries are taken over:
 *   every {@link TAKEOVER_INTERVAL_MS} each process looks for pending deliveries whose owner is no
 *   longer connected to the database (its `application_name` gone from `pg_stat_activity`), and
 *   takes them in one unit of work, under the sandbox's lock, so that one process takes each: it
 *   writes itself as the owner, then attempts them from where they were, on the same retry
 *   schedule, in the same order per transaction and within the same per-receiver limits. An
 *   attempt that was under way when its process died is made again, with the same event id: at
 *   least once, as with any retry.
 * - An attempt's outcome (delivered, abandoned, the next attempt due) and a delivery's removal by
 *   retention are written in a unit of work of their own, several together; when the database
 *   is away that unit fails and they are written again a second later, until it is back, so that
 *   no delivery stays `pending` in the database with no attempt due while its owner lives, and
 *   a takeover later does not send again what its receiver already acknowledged.
 *
 * Written here rather than with a job-queue library (pg-boss, graphile-worker): their jobs run at
 * real times, and the sandbox's retries fall due on its virtual clock, which an advance moves for
 * every pending retry at once; the ordering per transaction and the per-receiver limits are the
 * dispatcher's already (queue.ts). A library would be a second scheduler beside the clock, with its
 * own tables and workers, to do what the unit of work and the owner field do here.
 */
import type { Collection, Store } from '../store.js';
import { NO_URL_REASON, shared, storedDelivery, type StoredAttempt, type StoredDelivery } from './stored.js';
import { ShardedMap, ShardedSet } from '../sharded-map.js';

/** The shared store, as the journal needs it: whether a unit of work is running now. */
export interface JournalStore extends Store {
  readonly changing: boolean;
}

/** The collection of the shared store that holds the deliveries. */
const DELIVERIES_COLLECTION = 'sandbox.deliveries';
/** How often a process looks for deliveries of processes that died. */
const TAKEOVER_INTERVAL_MS = 2_000;
/** How long after a failed write of outcomes it is tried again. */
const REWRITE_DELAY_MS = 1_000;

/**
 * A delivery as the database keeps it: the dispatcher's own record (stored.ts) as JSON (a field
 * that is undefined is left out), without the sequence number each process gives it, with the ids
 * it is known by everywhere, the process that delivers it ({@link DeliveryJournal}), and the
 * virtual time its times count from. The signing key is not in it: the record names its signer.
 */
export type PersistedDelivery = Omit<StoredDelivery, 'seq' | 'id' | 'eventId' | 'url' | 'attempts' | 'nextAttemptAt' | 'completedAt'> & {
  /** The row's key; left out since this version (the row's id is the delivery's). */
  id?: string;
  /** Left out when it is the id with `evt_` for `dlv_`. */
  eventId?: string;
  /** Left out when `null` (no webhook URL). */
  url?: string | null;
  /** Left out when empty. */
  attempts?: StoredAttempt[];
  /** Left out when `null`. */
  nextAttemptAt?: number | null;
  completedAt?: number | null;
  owner: string;
  /** The writer's epoch: its record times are virtual milliseconds after it. */
  epoch: number;
};

/** What the journal needs of the dispatcher. */
export interface JournalHost {
  /** The virtual time the dispatcher's record times count from. */
  readonly epoch: number;
  get(seq: number): StoredDelivery | undefined;
  idOf(delivery: StoredDelivery): string;
  eventIdOf(delivery: StoredDelivery): string;
  /** The sequence number of a delivery this dispatcher recorded, by id. */
  localSeqOf(id: string): number | undefined;
  /** Holds a delivery another process recorded (not sending it), read with the sequence number given; answers that number. */
  adopt(read: (seq: number) => StoredDelivery): number;
  /** Replaces the record of a delivery held, after another process changed it. */
  replace(seq: number, delivery: StoredDelivery): void;
  /** Starts delivering a pending delivery taken over from a process that died. */
  takeOver(seq: number): void;
}

export class DeliveryJournal {
  private readonly records: Collection<PersistedDelivery>;
  /** Deliveries recorded by other processes: id to this dispatcher's sequence number. */
  private readonly foreign = new Map<string, number>();
  /** Pending deliveries another process delivers: sequence number to its owner. */
  private readonly owners = new ShardedMap<number, string>();
  private readonly timer: NodeJS.Timeout;
  private looking = false;
  /** Deliveries whose outcome is not written yet (their current state is written). */
  private readonly outcomes = new ShardedSet<number>();
  /** Records of deliveries retention forgot, not deleted yet. */
  private readonly removals = new Set<string>();
  private writeTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly host: JournalHost,
    private readonly store: JournalStore,
    /** This process's name as an owner. */
    private readonly owner: string,
    /** The owners whose processes are connected to the database now. */
    private readonly liveOwners: () => Promise<Set<string>>,
  ) {
    this.records = store.collection<PersistedDelivery>(DELIVERIES_COLLECTION);
    store.observe<PersistedDelivery>(DELIVERIES_COLLECTION, (id, value) => this.external(id, value));
    this.timer = setInterval(() => void this.takeOverOrphans(), TAKEOVER_INTERVAL_MS);
    this.timer.unref();
  }

  /** Whether this process delivers the delivery `seq` (false once another process took it over). */
  owns(seq: number): boolean {
    return !this.owners.has(seq);
  }

  /** The sequence number of a delivery another process recorded, by id. */
  seqOf(id: string): number | undefined {
    return this.foreign.get(id);
  }

  /** A delivery this process delivers was recorded or changed: written (with the running unit of work). */
  write(delivery: StoredDelivery): void {
    if (!this.owns(delivery.seq)) return;
    this.records.set(this.host.idOf(delivery), this.persisted(delivery));
  }

  /** {@link write} of the delivery `seq`, as the history holds it. */
  written(seq: number): void {
    const delivery = this.host.get(seq);
    if (delivery !== undefined) this.write(delivery);
  }

  /**
   * An attempt of a delivery this process delivers ended (outside any request's unit of work):
   * its outcome is written in a unit of its own, soon, and again until the database takes it.
   */
  attempted(seq: number): void {
    this.outcomes.add(seq);
    this.writeSoon(0);
  }

  /** A completed delivery left the history (retention): its record goes (written as {@link attempted}). */
  forgotten(delivery: StoredDelivery): void {
    const id = this.host.idOf(delivery);
    this.foreign.delete(id);
    this.owners.delete(delivery.seq);
    this.outcomes.delete(delivery.seq);
    // Forgotten while a unit runs (retention trimming as a record is added): deleted with it.
    if (this.store.changing) {
      this.records.delete(id);
      return;
    }
    this.removals.add(id);
    this.writeSoon(0);
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    if (this.writeTimer !== undefined) clearTimeout(this.writeTimer);
  }

  private writeSoon(delayMs: number): void {
    if (this.writeTimer !== undefined || this.stopped) return;
    this.writeTimer = setTimeout(() => void this.writeOutcomes(), delayMs);
  }

  /** Writes the outcomes and removals waiting, in one unit; on a failure, again a second later. */
  private async writeOutcomes(): Promise<void> {
    this.writeTimer = undefined;
    const seqs = [...this.outcomes];
    const ids = [...this.removals];
    this.outcomes.clear();
    this.removals.clear();
    try {
      await this.store.unit(() => {
        for (const seq of seqs) this.written(seq);
        for (const id of ids) this.records.delete(id);
      });
    } catch {
      // The database is away (the unit put the cache back): the current state is written later.
      for (const seq of seqs) this.outcomes.add(seq);
      for (const id of ids) this.removals.add(id);
      this.writeSoon(REWRITE_DELAY_MS);
    }
  }

  /**
   * The record as written: the fields that do not follow from the others or from the row's id
   * (JSON leaves out the undefined ones). An expiry's `not_sent` event, most of a long advance's
   * writes, keeps its family, event, transaction, body and times; its id, event id, reason,
   * receiver, attempts and due times follow.
   */
  private persisted(delivery: StoredDelivery): PersistedDelivery {
    const id = this.host.idOf(delivery);
    const eventId = this.host.eventIdOf(delivery);
    const noUrl = delivery.url === null;
    return {
      family: delivery.family,
      event: delivery.event,
      transactionId: delivery.transactionId,
      url: noUrl ? undefined : delivery.url,
      body: delivery.body,
      template: delivery.template,
      data: delivery.data,
      signer: delivery.signer,
      headers: delivery.headers,
      orderingScope: delivery.orderingScope,
      orderingKey: delivery.orderingKey,
      successStatus: delivery.successStatus,
      status: delivery.status,
      reason: noUrl && delivery.status === 'not_sent' && delivery.reason === NO_URL_REASON ? undefined : delivery.reason,
      attempts: delivery.attempts.length === 0 ? undefined : delivery.attempts,
      createdAt: delivery.createdAt,
      nextAttemptAt: delivery.nextAttemptAt ?? undefined,
      completedAt: delivery.completedAt ?? undefined,
      eventId: eventId === `evt_${id.slice(4)}` ? undefined : eventId,
      owner: this.owner,
      epoch: this.host.epoch,
    };
  }

  /**
   * The record of a persisted delivery, as this process numbers it and counts its times. Read
   * field by field: the record is a frozen snapshot of the store, never spread (store.ts).
   */
  private restored(record: PersistedDelivery, seq: number, id: string | undefined, rowId: string): StoredDelivery {
    const shift = record.epoch - this.host.epoch;
    const url = record.url ?? null;
    const at = (time: number | null) => (time === null ? null : time + shift);
    return storedDelivery({
      seq,
      id,
      eventId: record.eventId ?? `evt_${(record.id ?? rowId).slice(4)}`,
      family: record.family,
      event: record.event,
      transactionId: record.transactionId,
      url,
      body: record.body,
      template: record.template,
      data: record.data,
      signer: record.signer,
      headers: record.headers,
      orderingScope: record.orderingScope === undefined ? undefined : shared(record.orderingScope),
      orderingKey: record.orderingKey,
      successStatus: record.successStatus,
      status: record.status,
      reason: record.reason ?? (url === null && record.status === 'not_sent' ? NO_URL_REASON : undefined),
      attempts: record.attempts ?? [],
      createdAt: record.createdAt + shift,
      nextAttemptAt: at(record.nextAttemptAt ?? null),
      completedAt: at(record.completedAt ?? null),
    });
  }

  /** A delivery written by another process (or read at start). */
  private external(id: string, record: PersistedDelivery | undefined): void {
    // Deleted there by its retention: this process forgets it by its own. A record without an
    // epoch was written by an earlier version of the sandbox, which kept the signing key itself.
    if (record === undefined || typeof record.epoch !== 'number') return;
    // This process's own delivery (the store tells every change, its own writes and a write put
    // back included): its history holds it already, and an outcome put back is written again
    // (D101), so the history is not moved back.
    if (record.owner === this.owner && !this.foreign.has(id) && this.host.localSeqOf(id) !== undefined) return;
    const seq = this.foreign.get(id) ?? this.host.localSeqOf(id);
    if (seq === undefined) {
      const adopted = this.host.adopt((next) => this.restored(record, next, id, id));
      this.foreign.set(id, adopted);
      if (record.status === 'pending') this.owners.set(adopted, record.owner);
      return;
    }
    this.host.replace(seq, this.restored(record, seq, this.foreign.has(id) ? id : undefined, id));
    if (record.status === 'pending' && record.owner !== this.owner) this.owners.set(seq, record.owner);
    else this.owners.delete(seq);
  }

  /** Takes over the pending deliveries of processes that are gone. */
  private async takeOverOrphans(): Promise<void> {
    if (this.looking || this.owners.size === 0) return;
    this.looking = true;
    try {
      const live = await this.liveOwners();
      if ([...this.owners.values()].every((owner) => live.has(owner))) return;
      const taken = new Map<number, string>();
      // One unit of work: what other processes changed is read first, and the lock makes this
      // process the only one to take these deliveries.
      try {
        await this.store.unit(() => {
          for (const [seq, owner] of [...this.owners]) {
            if (live.has(owner)) continue;
            this.owners.delete(seq);
            if (this.host.get(seq)?.status !== 'pending') continue;
            taken.set(seq, owner);
            this.written(seq);
          }
        });
      } catch {
        // The database is away: nothing was taken; looked at again at the next interval.
        for (const [seq, owner] of taken) if (!this.owners.has(seq)) this.owners.set(seq, owner);
        return;
      }
      for (const seq of taken.keys()) this.host.takeOver(seq);
    } catch {
      // The owners could not be read (the database is away): looked at again at the next interval.
    } finally {
      this.looking = false;
    }
  }
}
