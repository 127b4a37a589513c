/**
 * The sandbox's bounds on its client connections (docs/sandbox.md, "Limits"):
 * - at most `maxConnections` open at once (Node's `server.maxConnections`): a connection beyond it
 *   is closed by Node as soon as it is accepted, before any request is read, and the sandbox logs a
 *   warning naming the limit and how to raise it, at most once every 10 s;
 * - the answers to requests that were not received in time (408) are written at most
 *   {@link TIMEOUT_ANSWERS_PER_TURN} per turn of the event loop ({@link TurnBatches}): Node finds
 *   every expired connection in one check, and answering thousands of them in that one turn held
 *   up every other request for over a second.
 */
import type { Server } from 'node:http';
import Queue from 'yocto-queue';

/** Answers to expired requests written in one turn of the event loop. */
export const TIMEOUT_ANSWERS_PER_TURN = 64;
const DROP_WARNING_INTERVAL_MS = 10_000;

/** Sets the server's connection limit and logs (now and then) the connections it closes. */
export function limitConnections(
  server: Server,
  maxConnections: number,
  warn: (message: string) => void,
  how: string,
): void {
  server.maxConnections = maxConnections;
  let dropped = 0;
  let lastWarning = Number.NEGATIVE_INFINITY;
  server.on('drop', () => {
    dropped++;
    const now = Date.now();
    if (now - lastWarning < DROP_WARNING_INTERVAL_MS) return;
    lastWarning = now;
    warn(`${maxConnections} connections are open, the limit: ${dropped} new connection${dropped === 1 ? ' was' : 's were'} closed at once. ${how}`);
    dropped = 0;
  });
}

/**
 * Runs the tasks given to {@link add} a few per turn of the event loop, in order: at most
 * `perTurn` at once, the rest on the following turns (setImmediate, so that the requests waiting in
 * between are served).
 */
export class TurnBatches {
  private readonly tasks = new Queue<() => void>();
  private scheduled = false;

  constructor(private readonly perTurn: number = TIMEOUT_ANSWERS_PER_TURN) {}

  add(task: () => void): void {
    this.tasks.enqueue(task);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.run);
    }
  }

  /** Tasks not run yet. */
  get size(): number {
    return this.tasks.size;
  }

  private readonly run = (): void => {
    for (let count = 0; count < this.perTurn && this.tasks.size > 0; count++) {
      try {
        this.tasks.dequeue()!();
      } catch {
        // An answer that cannot be written any more: its connection is gone.
      }
    }
    if (this.tasks.size > 0) setImmediate(this.run);
    else this.scheduled = false;
  };
}
