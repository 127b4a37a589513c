/**
 * The order and the pace of attempts:
 * - in order per ordering key: a later event waits until the earlier one was delivered or
 *   abandoned ({@link OrderingQueues});
 * - at most `webhooks.concurrency` attempts (default 8) run at once per receiver (scheme, host and
 *   port), over at most that many sockets (webhook-client.ts); the others wait in the receiver's
 *   queue, so 1,000 events never open 1,000 sockets. The queue holds sequence numbers (a
 *   yocto-queue of numbers), not a closure and a promise per waiting event as a general-purpose
 *   limiter would: a receiver slower than the load keeps up to 20,000 events waiting;
 * - a receiver has at most {@link MAX_PENDING_PER_RECEIVER} undelivered events; beyond that a new
 *   event is recorded `not_sent` with the reason, so a dead receiver cannot fill the memory.
 */
import Queue from 'yocto-queue';

/** Undelivered events one receiver may have; later ones are recorded `not_sent`. */
export const MAX_PENDING_PER_RECEIVER = 20_000;

/** Pending deliveries (sequence numbers) per ordering key; the head is the one being attempted. */
export class OrderingQueues {
  private readonly queues = new Map<string, number[]>();

  /** Adds `seq` to the queue of `key`; answers whether it is the head, to be attempted now. */
  add(key: string, seq: number): boolean {
    const queue = this.queues.get(key);
    if (queue === undefined) {
      this.queues.set(key, [seq]);
      return true;
    }
    queue.push(seq);
    return false;
  }

  /** Whether `seq` waits in (or heads) the queue of `key`. */
  includes(key: string, seq: number): boolean {
    return this.queues.get(key)?.includes(seq) ?? false;
  }

  /** Removes a completed delivery; answers the next one to attempt when it was the head. */
  remove(key: string, seq: number): number | undefined {
    const queue = this.queues.get(key);
    if (queue === undefined) return undefined;
    const index = queue.indexOf(seq);
    if (index >= 0) queue.splice(index, 1);
    const next = queue[0];
    if (next === undefined) {
      this.queues.delete(key);
      return undefined;
    }
    return index === 0 ? next : undefined;
  }
}

interface Turns {
  active: number;
  waiting: Queue<number>;
}

/** Per receiver: its undelivered events, its attempts running and the ones waiting for a turn. */
export class Receivers {
  private readonly turns = new Map<string, Turns>();
  private readonly backlogs = new Map<string, number>();
  private readonly inFlight = new Set<Promise<void>>();

  /**
   * `attempt` makes one attempt of a delivery; `stopped` says whether the dispatcher stopped (no
   * waiting attempt starts then).
   */
  constructor(
    private readonly concurrency: number,
    readonly maxPending: number,
    private readonly attempt: (seq: number) => Promise<void>,
    private readonly stopped: () => boolean,
  ) {}

  /** The undelivered events of a receiver. */
  backlog(receiver: string): number {
    return this.backlogs.get(receiver) ?? 0;
  }

  /** A pending delivery to `receiver` was recorded; `backlog` is what {@link backlog} answered. */
  added(receiver: string, backlog: number): void {
    this.backlogs.set(receiver, backlog + 1);
  }

  /** A delivery to `url` completed. */
  completed(url: string | null): void {
    if (url === null) return;
    const receiver = receiverOf(url);
    const left = (this.backlogs.get(receiver) ?? 1) - 1;
    if (left <= 0) this.backlogs.delete(receiver);
    else this.backlogs.set(receiver, left);
  }

  /** Runs the attempt of `seq` now if the receiver of `url` has a free turn, else queues it. */
  take(seq: number, url: string): void {
    const key = receiverOf(url);
    let turns = this.turns.get(key);
    if (turns === undefined) {
      turns = { active: 0, waiting: new Queue<number>() };
      this.turns.set(key, turns);
    }
    if (turns.active < this.concurrency) this.run(key, turns, seq);
    else turns.waiting.enqueue(seq);
  }

  /** Resolves when no attempt is running or queued. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Drops the attempts waiting for a turn. */
  stop(): void {
    for (const turns of this.turns.values()) turns.waiting.clear();
  }

  private run(key: string, turns: Turns, seq: number): void {
    turns.active++;
    const running: Promise<void> = this.attempt(seq).finally(() => {
      this.inFlight.delete(running);
      turns.active--;
      // The next one starts before this promise settles, so idle() sees it running.
      const next = this.stopped() ? undefined : turns.waiting.dequeue();
      if (next !== undefined) this.run(key, turns, next);
      else if (turns.active === 0 && turns.waiting.size === 0) this.turns.delete(key);
    });
    this.inFlight.add(running);
  }
}

const receiverCache = new Map<string, string>();

/** The receiver a URL names: scheme, host and port (the few URLs in use are remembered). */
export function receiverOf(url: string): string {
  let receiver = receiverCache.get(url);
  if (receiver === undefined) {
    try {
      receiver = new URL(url).origin;
    } catch {
      receiver = url;
    }
    if (receiverCache.size >= 1000) receiverCache.clear();
    receiverCache.set(url, receiver);
  }
  return receiver;
}
