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
 * A request is under way until its task's promise settles: waiting for its body, the large-body
 * worker or the database. Meanwhile its connection's next requests wait, so that a pipelined read
 * after a write sees the write (Node's server hands over a pipelined GET before the POST before it
 * has its body). What a request does when its body is in is taken in turns too ({@link
 * FairTurns.resume}): without it, the bodies of 128 pipelined requests, arriving in one read, had
 * their work done back to back in one turn (55 of a 108 ms turn in the attack suite's profile), the
 * slice bounding only their start.
 *
 * A connection's waiting requests are bounded by {@link MAX_WAITING}. Node's server stops reading
 * a pipelining socket once the answers it holds back pass the socket's high-water mark; a request
 * that waits here has written no answer yet, so that brake never comes. At the bound, the
 * connection's waiting requests run at once, in order, before the new one: its answers are written,
 * and Node's brake applies again, as it did before the turns.
 *
 * What is sliced is a request's start (routing, reading the head) and, through `resume`, its work
 * once its body is in (parsing a small body, validating, the handler, the answer). What follows the
 * worker or the database (sending the answer) goes on when that comes.
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

/** A request's task: a promise when it goes on later (its connection's next request waits for it). */
type Task = () => unknown;

/** One connection's state while it has a request waiting or under way. */
interface Connection {
  readonly socket: Socket;
  /** Requests not started yet, in order. */
  readonly tasks: Queue<Task>;
  /** Continuations of requests under way ({@link FairTurns.resume}), waiting for a turn. */
  readonly resumed: Queue<() => void>;
  /** Requests started and not settled (more than one only past {@link MAX_WAITING}). */
  underWay: number;
  /** Whether the connection is in the ring now. */
  queued: boolean;
}

const CONNECTION = Symbol('paylater.turns');
type WithConnection = Socket & { [CONNECTION]?: Connection };

/** Runs each connection's requests in order, round robin across connections, {@link SLICE_MS} a turn. */
export class FairTurns {
  /** Connections with something to run, in the order they are served. */
  private readonly ring = new Queue<Connection>();
  /** When the current turn's first request started (`undefined` between turns). */
  private turnStarted: number | undefined;
  private scheduled = false;

  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly slice = SLICE_MS,
    private readonly later: (run: () => void) => void = setImmediate,
  ) {}

  /** Requests waiting to start, over all connections. */
  private waiting = 0;

  get size(): number {
    return this.waiting;
  }

  /**
   * Runs `task` (a request of `socket`) now when the turn has room, nothing waits and the connection
   * has no request under way; else in its turn. A task that returns a promise is under way until it
   * settles.
   */
  run(socket: Socket, task: Task): void {
    const own = (socket as WithConnection)[CONNECTION];
    if (own === undefined && this.ring.size === 0 && this.hasRoom()) {
      this.start(socket, undefined, task);
      return;
    }
    const connection = own ?? this.attach(socket);
    if (connection.tasks.size >= MAX_WAITING) {
      // Past the bound, in order and at once: their answers are written, and Node's brake applies.
      // The connection starts afresh at the back of the ring; its entry there is skipped.
      this.waiting -= connection.tasks.size;
      this.attach(socket);
      for (let waiting = connection.tasks.dequeue(); waiting !== undefined; waiting = connection.tasks.dequeue()) {
        this.start(socket, connection, waiting);
      }
      this.start(socket, connection, task);
      return;
    }
    connection.tasks.enqueue(task);
    this.waiting += 1;
    this.enlist(connection);
  }

  /**
   * Runs `work`, the rest of a request under way on `socket` (once its body is in), now when the
   * turn has room and nothing waits, else in its connection's turn, before its next request.
   */
  resume<T>(socket: Socket, work: () => T): T | Promise<Awaited<T>> {
    if (this.ring.size === 0 && this.hasRoom()) return work();
    const connection = (socket as WithConnection)[CONNECTION] ?? this.attach(socket);
    return new Promise<Awaited<T>>((resolve, reject) => {
      connection.resumed.enqueue(() => {
        try {
          resolve(work() as Awaited<T> | PromiseLike<Awaited<T>>);
        } catch (error) {
          reject(error);
        }
      });
      this.enlist(connection);
    });
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

  private attach(socket: Socket): Connection {
    const connection: Connection = { socket, tasks: new Queue(), resumed: new Queue(), underWay: 0, queued: false };
    (socket as WithConnection)[CONNECTION] = connection;
    return connection;
  }

  /** Starts a task; one that goes on later keeps its connection's next requests waiting. */
  private start(socket: Socket, connection: Connection | undefined, task: Task): void {
    let result: unknown;
    try {
      result = task();
    } catch {
      // A task answers its own errors (the router's); one that throws still leaves the others served.
      return;
    }
    if (!(result instanceof Promise)) return;
    const own = connection ?? (socket as WithConnection)[CONNECTION] ?? this.attach(socket);
    own.underWay += 1;
    const settled = (): void => {
      own.underWay -= 1;
      this.tidy(own);
    };
    result.then(settled, settled);
  }

  /** Puts a connection in the ring when it has something to run now. */
  private enlist(connection: Connection): void {
    if (connection.queued) return;
    if (connection.resumed.size === 0 && (connection.underWay > 0 || connection.tasks.size === 0)) return;
    connection.queued = true;
    this.ring.enqueue(connection);
    if (this.scheduled) return;
    this.scheduled = true;
    this.later(this.serve);
  }

  /** After a change: in the ring when it has something to run, forgotten when it has nothing left. */
  private tidy(connection: Connection): void {
    if (connection.underWay === 0 && connection.tasks.size === 0 && connection.resumed.size === 0 && !connection.queued) {
      this.forget(connection);
      return;
    }
    this.enlist(connection);
  }

  /** Drops a connection's state (and what still waits in it) unless the socket has a newer one. */
  private forget(connection: Connection): void {
    this.waiting -= connection.tasks.size;
    connection.tasks.clear();
    const socket = connection.socket as WithConnection;
    if (socket[CONNECTION] === connection) delete socket[CONNECTION];
  }

  /** One slice: one step from each connection in turn while the slice lasts (at least one). */
  private readonly serve = (): void => {
    this.scheduled = false;
    const started = this.now();
    do {
      const connection = this.ring.dequeue();
      if (connection === undefined) break;
      connection.queued = false;
      // A connection that is gone: nobody is left to answer, its requests are dropped.
      if (connection.socket.destroyed) {
        this.forget(connection);
        continue;
      }
      const resumed = connection.resumed.dequeue();
      if (resumed !== undefined) resumed();
      else if (connection.underWay === 0) {
        const task = connection.tasks.dequeue();
        if (task !== undefined) {
          this.waiting -= 1;
          this.start(connection.socket, connection, task);
        }
      }
      this.tidy(connection);
    } while (this.ring.size > 0 && this.now() - started < this.slice);
    if (this.ring.size > 0 && !this.scheduled) {
      this.scheduled = true;
      this.later(this.serve);
    }
  };
}
