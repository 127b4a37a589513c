/**
 * The shared virtual clock's offset as a record of the shared store (store.ts), so that a writer
 * that takes over goes on from the offset its predecessor reached: written with the units that
 * moved the clock, read with the other records, and applied (the clock moved on to it, firing the
 * timers due on the way) once every record is read.
 */

/** The collection of the shared virtual clock: one record, `clock`, `{ offsetMs }`. */
export const CLOCK_COLLECTION = 'sandbox.clock';

/** What the shared store needs of the virtual clock. */
export interface SharedClock {
  readonly offsetMs: number;
  /** Moves the clock forward by `ms`, firing the timers due on the way. */
  advance(ms: number): void;
}

export class ClockOffset {
  private clock: SharedClock | undefined;
  /** The offset last handed to be written (NaN: to be written again). */
  private written = 0;
  /** The offset read from the database, applied once the records are read. */
  private stored: number | undefined;

  attach(clock: SharedClock): void {
    this.clock = clock;
    this.written = clock.offsetMs;
  }

  /** The offset to write with the units that just ran, when they moved the clock (else undefined). */
  takeMoved(): number | undefined {
    if (this.clock === undefined || this.clock.offsetMs === this.written) return undefined;
    this.written = this.clock.offsetMs;
    return this.written;
  }

  /** A commit failed and its record was put back: the offset is written again with the next unit. */
  forget(): void {
    this.written = Number.NaN;
  }

  /** The record read from the database (undefined: deleted, which is never written for it). */
  read(record: unknown): void {
    if (record !== undefined) this.stored = (record as { offsetMs: number }).offsetMs;
  }

  /**
   * Moves the clock on to the offset read, running `advance` around the clock's advance (the
   * store's unit of work). Answers whether the clock moved (what its timers changed is to be
   * written by the next unit).
   */
  apply(advance: (move: () => void) => void): boolean {
    const clock = this.clock;
    if (clock === undefined || this.stored === undefined) return false;
    const ahead = this.stored - clock.offsetMs;
    this.stored = undefined;
    if (ahead > 0) advance(() => clock.advance(ahead));
    this.written = clock.offsetMs;
    return ahead > 0;
  }
}
