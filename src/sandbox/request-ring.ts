/**
 * The request log's storage (request-log.ts): its entries kept as bytes and numbers, not as objects.
 *
 * Why not a list of records: every entry of the log outlives the young generation (the log keeps
 * the latest 16 MiB of requests), so each record and its strings (the target, the raw headers, the
 * request id, the answer's text) were copied by two scavenges and then promoted, and every full
 * collection (`npm start` compacts on each) traced and moved the tens of thousands held. Measured
 * (bench/results/pipeline.md, run 8): the log made the clock's scavenges half as long again and
 * its full collections 90 to 250 ms long. Here an entry is a row of typed arrays (its numbers and
 * where its texts are) and its texts are UTF-8 bytes in one buffer used as a ring: the collector
 * sees a few objects whatever the log holds, and an entry allocates nothing that survives.
 *
 * The texts of an entry are written one after another (the {@link Part}s, in order) into a scratch
 * buffer, then copied into the ring at the write position, or at its start when they do not fit
 * before its end; the oldest entries whose bytes that space held are forgotten first. The ring
 * grows by doubling up to the log's budget (its memory is the budget, not more) and once
 * beyond it only for a single entry larger than the whole budget, which is then the one entry kept.
 * The rows grow by doubling too, up to the number of entries the budget can hold. Each entry is
 * charged {@link ENTRY_OVERHEAD} bytes besides its texts, and the oldest go first once the total is
 * over the budget (the newest is always kept).
 */
import type { RouteInfo } from './pipeline.js';

/** An entry's texts, in the order they are written. */
export const Part = {
  /** The method, a space and the target as received. */
  Target: 0,
  Headers: 1,
  RequestId: 2,
  Principal: 3,
  TransactionId: 4,
  Reason: 5,
  ResponseHeaders: 6,
  ResponseBody: 7,
  RequestBody: 8,
} as const;
export type Part = (typeof Part)[keyof typeof Part];
const PARTS = 9;
/** Between the names and values of a header list: never in a parsed header (Node refuses CR and LF). */
const SEPARATOR = '\n';
const INITIAL_ROWS = 256;
const INITIAL_BYTES = 64 * 1024;
/** Bytes charged to every entry besides its texts: its row of numbers and lengths. */
const ENTRY_OVERHEAD = 128;

/** The numbers of one entry, as {@link EntryRing.commit} takes them. */
export interface EntryNumbers {
  at: number;
  durationMs: number;
  status: number;
  requestBytes: number;
  responseBytes: number;
  route: RouteInfo | undefined;
}

export class EntryRing {
  private ring: Buffer;
  private scratch = Buffer.allocUnsafe(INITIAL_BYTES);
  /** Bytes written into the scratch for the entry under way, and where each part ends. */
  private written = 0;
  private readonly partEnds = new Uint32Array(PARTS);
  private rows = INITIAL_ROWS;
  private at = new Float64Array(INITIAL_ROWS);
  private duration = new Float64Array(INITIAL_ROWS);
  private status = new Uint16Array(INITIAL_ROWS);
  private requestBytes = new Float64Array(INITIAL_ROWS);
  private responseBytes = new Float64Array(INITIAL_ROWS);
  /** Where the entry's texts start in the ring. */
  private start = new Float64Array(INITIAL_ROWS);
  /** Each part's length, PARTS a row. */
  private lengths = new Uint32Array(INITIAL_ROWS * PARTS);
  private routes: (RouteInfo | undefined)[] = new Array<RouteInfo | undefined>(INITIAL_ROWS).fill(undefined);
  /** The oldest entry's row, and the number of entries. */
  private front = 0;
  private count = 0;
  /** Where the next entry's texts go in the ring. */
  private head = 0;
  /** Bytes charged to the entries held. */
  private used = 0;

  constructor(private readonly byteLimit: number) {
    this.ring = Buffer.allocUnsafe(Math.min(byteLimit, INITIAL_BYTES));
  }

  /** Entries held. */
  get length(): number {
    return this.count;
  }

  /** Bytes charged to the entries held. */
  get bytes(): number {
    return this.used;
  }

  /** Adds `text` (its first `maxBytes` bytes at most, whole characters) to the part under way. */
  text(text: string, maxBytes = Number.MAX_SAFE_INTEGER): void {
    const room = Math.min(maxBytes, text.length * 3);
    this.reserve(room);
    this.written += this.scratch.write(text, this.written, room, 'utf8');
  }

  /** Adds the first `maxBytes` bytes of `bytes` to the part under way. */
  raw(bytes: Uint8Array, maxBytes: number): void {
    const length = Math.min(maxBytes, bytes.length);
    this.reserve(length);
    this.scratch.set(length === bytes.length ? bytes : bytes.subarray(0, length), this.written);
    this.written += length;
  }

  /**
   * Adds a header list (`[name, value, ...]`) to the part under way: joined, then written once (a
   * `write` per name, value and separator was a sixth of the cheapest request's own work).
   */
  headerList(list: readonly string[]): void {
    if (list.length > 0) this.text(list.join(SEPARATOR));
  }

  /** Adds a header record to the part under way, as a list (one write, as {@link headerList}). */
  headerRecord(record: Record<string, string> | undefined): void {
    if (record === undefined) return;
    let joined: string | undefined;
    for (const name in record) {
      const line = name + SEPARATOR + record[name]!;
      joined = joined === undefined ? line : joined + SEPARATOR + line;
    }
    if (joined !== undefined) this.text(joined);
  }

  /** Ends the part `part`: what was added since the previous part's end is its text. */
  end(part: Part): void {
    this.partEnds[part] = this.written;
  }

  /**
   * Stores the entry under way (its parts ended in order) with its numbers, and forgets the
   * oldest entries while the total is over the budget.
   */
  commit(numbers: EntryNumbers): void {
    const size = this.written;
    const position = this.place(size);
    this.scratch.copy(this.ring, position, 0, size);
    if (this.count === this.rows) this.growRows();
    const row = (this.front + this.count) % this.rows;
    this.at[row] = numbers.at;
    this.duration[row] = numbers.durationMs;
    this.status[row] = numbers.status;
    this.requestBytes[row] = numbers.requestBytes;
    this.responseBytes[row] = numbers.responseBytes;
    this.routes[row] = numbers.route;
    this.start[row] = position;
    let previous = 0;
    for (let part = 0; part < PARTS; part++) {
      const ended = this.partEnds[part]!;
      this.lengths[row * PARTS + part] = ended - previous;
      previous = ended;
    }
    this.count++;
    this.head = position + size;
    this.used += ENTRY_OVERHEAD + size;
    this.written = 0;
    while (this.used > this.byteLimit && this.count > 1) this.shift();
  }

  /** The row of the entry `index` places after the oldest. */
  row(index: number): number {
    return (this.front + index) % this.rows;
  }

  numbers(row: number): EntryNumbers {
    return {
      at: this.at[row]!,
      durationMs: this.duration[row]!,
      status: this.status[row]!,
      requestBytes: this.requestBytes[row]!,
      responseBytes: this.responseBytes[row]!,
      route: this.routes[row],
    };
  }

  /** A part's length in bytes. */
  partBytes(row: number, part: Part): number {
    return this.lengths[row * PARTS + part]!;
  }

  /** A part as text. */
  part(row: number, part: Part): string {
    const from = this.partStart(row, part);
    return this.ring.toString('utf8', from, from + this.partBytes(row, part));
  }

  /** A part's bytes (a copy). */
  partBuffer(row: number, part: Part): Buffer {
    const from = this.partStart(row, part);
    return Buffer.from(this.ring.subarray(from, from + this.partBytes(row, part)));
  }

  /** A header part as its list `[name, value, ...]`. */
  partHeaders(row: number, part: Part): string[] {
    return this.partBytes(row, part) === 0 ? [] : this.part(row, part).split(SEPARATOR);
  }

  private partStart(row: number, part: Part): number {
    let from = this.start[row]!;
    for (let index = 0; index < part; index++) from += this.lengths[row * PARTS + index]!;
    return from;
  }

  /** Forgets the oldest entry. */
  private shift(): void {
    const row = this.front;
    let size = 0;
    for (let part = 0; part < PARTS; part++) size += this.lengths[row * PARTS + part]!;
    this.used -= ENTRY_OVERHEAD + size;
    this.routes[row] = undefined;
    this.front = (this.front + 1) % this.rows;
    this.count--;
    if (this.count === 0) this.head = 0;
  }

  /** Room for `more` bytes in the scratch. */
  private reserve(more: number): void {
    if (this.written + more <= this.scratch.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.scratch.length * 2, this.written + more));
    this.scratch.copy(grown, 0, 0, this.written);
    this.scratch = grown;
  }

  /**
   * Where `size` bytes go: at the write position, or at the ring's start when they do not fit
   * before its end (the ring grown first while it is under the budget and its bytes are one run);
   * the oldest entries whose bytes start in that space are forgotten.
   */
  private place(size: number): number {
    // An entry larger than the whole ring at its full size is the one entry kept.
    if (size > this.ring.length && this.ring.length >= this.byteLimit) while (this.count > 0) this.shift();
    // Unwrapped, the entries' bytes are one run, from the oldest's start to the write position.
    const wrapped = this.count > 0 && this.start[this.front]! >= this.head;
    if (this.head + size > this.ring.length && !wrapped && (this.ring.length < this.byteLimit || this.count === 0)) {
      const grown = Buffer.allocUnsafe(Math.max(this.head + size, Math.min(this.byteLimit, this.ring.length * 2)));
      const from = this.count === 0 ? 0 : this.start[this.front]!;
      this.ring.copy(grown, from, from, this.head);
      this.ring = grown;
    }
    const position = this.head + size > this.ring.length ? 0 : this.head;
    // Starting again at 0, the entries from the write position to the ring's end are the oldest.
    while (this.count > 0) {
      const oldest = this.start[this.front]!;
      const inSpace = position === this.head ? oldest >= position && oldest < position + size : oldest >= this.head || oldest < size;
      if (!inSpace) break;
      this.shift();
    }
    return position;
  }

  /** Twice the rows, the entries in order from row 0. */
  private growRows(): void {
    const rows = this.rows * 2;
    // The rows are full: the oldest at `front` to the end, then from 0 up to `front`, two runs.
    const reordered = <T extends Float64Array | Uint16Array | Uint32Array>(from: T, to: T, width = 1): T => {
      to.set(from.subarray(this.front * width), 0);
      to.set(from.subarray(0, this.front * width), (this.rows - this.front) * width);
      return to;
    };
    this.at = reordered(this.at, new Float64Array(rows));
    this.duration = reordered(this.duration, new Float64Array(rows));
    this.status = reordered(this.status, new Uint16Array(rows));
    this.requestBytes = reordered(this.requestBytes, new Float64Array(rows));
    this.responseBytes = reordered(this.responseBytes, new Float64Array(rows));
    this.start = reordered(this.start, new Float64Array(rows));
    this.lengths = reordered(this.lengths, new Uint32Array(rows * PARTS), PARTS);
    const routes = new Array<RouteInfo | undefined>(rows).fill(undefined);
    for (let index = 0; index < this.rows; index++) routes[index] = this.routes[(this.front + index) % this.rows];
    this.routes = routes;
    this.rows = rows;
    this.front = 0;
  }
}
