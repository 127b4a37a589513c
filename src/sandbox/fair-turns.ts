/**
 * Requests taken in turns across connections, a slice of time per turn of the event loop.
 *
 * Node's HTTP server hands the sandbox every request it parsed from what a socket's read brought,
 * in that one turn: a client pipelining 32 requests on each of 4 connections, or 32 clients at once,
 * had 100 and more requests handled back to back, 60 to 200 ms in which a request on any other
 * connection waited (the attack suite's `slow-streams`, `webhook-pool` and `first-page`, whose
 * probe waited behind the attacker's requests). Here a request is started at once while the turn's
 * work stays under {@link SLICE_MS} and nothing waits; otherwise it waits in its connection's queue,
 * and the queues are served round robin, one request per connection in each round, a slice per
 * turn (from `setImmediate`, after the turn's input is read). A connection's requests keep their
 * order (a pipelined read after a write sees the write); a request whose connection is gone is
 * dropped, nobody being left to answer it.
 *
 * A connection's waiting requests are bounded by {@link MAX_WAITING}. Node's server stops reading
 * a pipelining socket once the answers it holds back pass the socket's high-water mark; a request
 * that waits here has written no answer yet, so that brake never comes. At the bound, the
 * connection's waiting requests run at once, in order, before the new one: its answers are written,
 * and Node's brake applies again, as it did before the turns.
 *
 * What is sliced is the start of a request's handling: its synchronous part (parsing a small body,
 * validating, the handler, the answer) and what it chains in the same turn. A handler that waits for
 * something (a body still arriving, the large-body worker, a database) goes on when that comes.
 *
 * Hand-written: Node's HTTP server has no option to take fewer requests per read, and a general
 * task scheduler (p-queue and the like) orders tasks by priority or concurrency, not round robin
 * across the sockets they came from.
 */
import type { Socket } from 'node:net';
import Queue from 'yocto-queue';

/** The work started in one turn of the event loop before the next request waits for the next turn, ms. */
const SLICE_MS = 8;

/** Requests of one connection that may wait for their turn; at this many they run at once. */
const MAX_WAITING = 64;

/** One connection's waiting requests. */
interface Waiting {
  readonly tasks: Queue<() => void>;
  readonly socket: Socket;
}

const WAITING = Symbol('paylater.waiting');
type WithWaiting = Socket & { [WAITING]?: Waiting };

/** Runs each connection's requests in order, round robin across connections, {@link SLICE_MS} a turn. */
export class FairTurns {
  /** Connections with requests waiting, in the order they are served. */
  private readonly ring = new Queue<Waiting>();
  /** When the current turn's first request started (`undefined` between turns). */
  private turnStarted: number | undefined;
  private scheduled = false;

  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly slice = SLICE_MS,
    private readonly later: (run: () => void) => void = setImmediate,
  ) {}

  /** Requests waiting, over all connections. */
  get size(): number {
    let size = 0;
    for (const waiting of this.ring) size += waiting.tasks.size;
    return size;
  }

  /** Runs `task` (a request of `socket`) now when the turn has room and nothing waits, else in its turn. */
  run(socket: Socket, task: () => void): void {
    const own = (socket as WithWaiting)[WAITING];
    if (own === undefined && this.ring.size === 0 && this.hasRoom()) {
      task();
      return;
    }
    if (own !== undefined && own.tasks.size >= MAX_WAITING) {
      // Its entry in the ring stays, empty, and is skipped when its round comes.
      delete (socket as WithWaiting)[WAITING];
      for (let waiting = own.tasks.dequeue(); waiting !== undefined; waiting = own.tasks.dequeue()) runTask(waiting);
      runTask(task);
      return;
    }
    if (own !== undefined) {
      own.tasks.enqueue(task);
    } else {
      const waiting: Waiting = { tasks: new Queue(), socket };
      waiting.tasks.enqueue(task);
      (socket as WithWaiting)[WAITING] = waiting;
      this.ring.enqueue(waiting);
    }
    this.schedule();
  }

  /** Whether the current turn may start one more request; the first of a turn marks its start. */
  private hasRoom(): boolean {
    const now = this.now();
    if (this.turnStarted === undefined) {
      this.turnStarted = now;
      // The turn ends when the loop reaches its check phase: the next one starts afresh.
      this.later(this.endTurn);
      return true;
    }
    return now - this.turnStarted < this.slice;
  }

  private readonly endTurn = (): void => {
    this.turnStarted = undefined;
  };

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    this.later(this.serve);
  }

  /** One slice: a request from each connection in turn while the slice lasts (at least one). */
  private readonly serve = (): void => {
    this.scheduled = false;
    const started = this.now();
    do {
      const waiting = this.ring.dequeue();
      if (waiting === undefined) break;
      const task = waiting.tasks.dequeue();
      // An entry emptied at the bound (run) is no longer the socket's: nothing to do or undo.
      if (task === undefined) continue;
      if (waiting.tasks.size > 0 && !waiting.socket.destroyed) this.ring.enqueue(waiting);
      else delete (waiting.socket as WithWaiting)[WAITING];
      if (waiting.socket.destroyed) continue;
      runTask(task);
    } while (this.ring.size > 0 && this.now() - started < this.slice);
    if (this.ring.size > 0) this.schedule();
  };
}

/** Runs a request's task; a task answers its own errors (the router's), one that throws still leaves the others served. */
function runTask(task: () => void): void {
  try {
    task();
  } catch {
    // See above: nothing to answer here.
  }
}
