/**
 * Sending answers (src/http/send.ts): a small answer is written at once; a large one from the next
 * turn on, in pieces of at most 64 KiB, one per turn (or per `drain` when the socket is full), so
 * that other requests are answered between them. Not timed: the test counts the pieces written
 * after each turn.
 */
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { sendBody, TextParts } from '../../src/http/send.js';

const PIECE = 64 * 1024;

/** A stand-in for a response that records what was written; `full` makes `write` report a full socket. */
function response(full = false) {
  const drains: (() => void)[] = [];
  const fake = {
    headersSent: false,
    destroyed: false,
    writableEnded: false,
    status: undefined as number | undefined,
    headers: {} as Record<string, string>,
    pieces: [] as (string | Buffer)[],
    writeHead(status: number, headers: Record<string, string>) {
      fake.status = status;
      fake.headers = headers;
      fake.headersSent = true;
    },
    write(piece: string | Buffer) {
      fake.pieces.push(piece);
      return !full;
    },
    end(piece: string | Buffer) {
      fake.pieces.push(piece);
      fake.writableEnded = true;
    },
    once(event: string, listener: () => void) {
      if (event === 'drain') drains.push(listener);
    },
    drain() {
      drains.splice(0).forEach((listener) => listener());
    },
    get text() {
      return fake.pieces.map(String).join('');
    },
  };
  return fake;
}
const asResponse = (fake: ReturnType<typeof response>) => fake as unknown as ServerResponse;

const turn = () => new Promise((resolve) => setImmediate(resolve));

async function turnsUntilEnded(fakes: ReturnType<typeof response>[], most: number): Promise<number> {
  let turns = 0;
  while (fakes.some((fake) => !fake.writableEnded) && turns < most) {
    await turn();
    turns++;
  }
  return turns;
}

describe('sendBody', () => {
  it('writes a small answer at once, with its Content-Length', () => {
    const small = response();
    sendBody(asResponse(small), 200, { ok: true });
    expect(small.text).toBe('{"ok":true}');
    expect(small.headers['Content-Length']).toBe('11');
    expect(small.writableEnded).toBe(true);
  });

  it('writes large answers side by side, one piece of at most 64 KiB each per turn, from the next turn', async () => {
    const text = 'x'.repeat(300 * 1024);
    const bigs = [response(), response()];
    bigs.forEach((big, index) => sendBody(asResponse(big), 200, `${index}${text}`, { 'Content-Type': 'text/plain' }));
    // The head is set (the answer counts as sent); no byte of the body yet.
    expect(bigs.map((big) => [big.headersSent, big.pieces.length])).toEqual([
      [true, 0],
      [true, 0],
    ]);
    await turn();
    expect(bigs.map((big) => big.pieces.length)).toEqual([1, 1]);
    const turns = await turnsUntilEnded(bigs, 100);
    expect(turns).toBe(Math.ceil((text.length + 1) / PIECE) - 1);
    for (const [index, big] of bigs.entries()) {
      expect(big.pieces.every((piece) => piece.length <= PIECE)).toBe(true);
      expect(big.text).toBe(`${index}${text}`);
      expect(big.headers['Content-Length']).toBe(String(text.length + 1));
    }
  });

  it('never splits a surrogate pair between two pieces, and counts the answer in UTF-8 bytes', async () => {
    // The pair straddles the first piece's end: U+1F600 at characters PIECE-1 and PIECE.
    const payload = `${'a'.repeat(PIECE - 1)}\u{1F600}${'é'.repeat(PIECE * 4)}`;
    const big = response();
    sendBody(asResponse(big), 200, payload, { 'Content-Type': 'text/plain; charset=utf-8' });
    await turnsUntilEnded([big], 100);
    expect(big.pieces[0]).toBe('a'.repeat(PIECE - 1));
    const bytes = Buffer.concat(big.pieces.map((piece) => Buffer.from(piece as string, 'utf8')));
    expect(bytes.equals(Buffer.from(payload, 'utf8'))).toBe(true);
    expect(big.headers['Content-Length']).toBe(String(Buffer.byteLength(payload)));
  });

  it('writes large bytes in pieces too', async () => {
    const payload = Buffer.alloc(PIECE * 5, 7);
    const big = response();
    sendBody(asResponse(big), 200, payload, { 'Content-Type': 'application/octet-stream' });
    await turnsUntilEnded([big], 100);
    expect(big.pieces.length).toBe(5);
    expect(Buffer.concat(big.pieces as Buffer[]).equals(payload)).toBe(true);
  });

  it('waits for the socket to drain before the next piece, and stops when the connection is gone', async () => {
    const slow = response(true);
    sendBody(asResponse(slow), 200, 'y'.repeat(PIECE * 6), { 'Content-Type': 'text/plain' });
    for (let index = 0; index < 5; index++) await turn();
    expect(slow.pieces.length).toBe(1);
    slow.drain();
    // The next piece in the next turn of writing after the drain.
    await turn();
    expect(slow.pieces.length).toBe(2);
    for (let index = 0; index < 5; index++) await turn();
    expect(slow.pieces.length).toBe(2);
    slow.destroyed = true;
    slow.drain();
    await turn();
    expect(slow.pieces.length).toBe(2);
    expect(slow.writableEnded).toBe(false);
  });

  it('writes a body given as parts in pieces of at most 64 KiB, small parts together, the parts never joined whole', async () => {
    // A page as the extras read builds it: a head, then per push a prefix, the kept text and a suffix.
    const kept = ['[' + '{},'.repeat(150_000) + '{}]', '["\u{1F600}"]', `"${'é'.repeat(PIECE + 3)}"`];
    const parts = ['{"n":3,"items":[', ...kept.flatMap((text, index) => [`${index === 0 ? '' : ','}{"data":`, text, '}']), ']}'];
    const body = new TextParts(parts);
    const big = response();
    sendBody(asResponse(big), 200, body, { 'Content-Type': 'application/json; charset=utf-8' });
    await turnsUntilEnded([big], 100);
    const whole = parts.join('');
    expect(body.length).toBe(whole.length);
    expect(big.headers['Content-Length']).toBe(String(Buffer.byteLength(whole)));
    expect(big.pieces.every((piece) => piece.length <= PIECE)).toBe(true);
    // As many pieces as the characters need: small parts share a piece with the large ones.
    expect(big.pieces.length).toBeLessThanOrEqual(Math.ceil(whole.length / PIECE) + 1);
    expect(Buffer.concat(big.pieces.map((piece) => Buffer.from(piece as string, 'utf8'))).equals(Buffer.from(whole, 'utf8'))).toBe(true);
    expect(JSON.parse(big.text)).toEqual(JSON.parse(whole));
  });

  it('never splits a surrogate pair at the end of a piece made of several parts', async () => {
    const parts = ['a'.repeat(PIECE - 10), 'b'.repeat(9), `\u{1F600}${'c'.repeat(PIECE * 4)}`];
    const big = response();
    sendBody(asResponse(big), 200, new TextParts(parts), { 'Content-Type': 'text/plain; charset=utf-8' });
    await turnsUntilEnded([big], 100);
    expect(big.pieces[0]).toBe(`${'a'.repeat(PIECE - 10)}${'b'.repeat(9)}`);
    expect(big.text).toBe(parts.join(''));
  });

  it('writes small parts at once, joined', () => {
    const small = response();
    sendBody(asResponse(small), 200, new TextParts(['{"a":', '[1,2]', '}']), { 'Content-Type': 'application/json' });
    expect(small.pieces).toEqual(['{"a":[1,2]}']);
    expect(small.headers['Content-Length']).toBe('11');
  });

  it('writes at most four pieces a turn over all the large answers under way, round robin', async () => {
    const bigs = Array.from({ length: 10 }, () => response());
    bigs.forEach((big, index) => sendBody(asResponse(big), 200, `${index}`.repeat(PIECE * 5), { 'Content-Type': 'text/plain' }));
    const written = () => bigs.reduce((sum, big) => sum + big.pieces.length, 0);
    const perTurn: number[] = [];
    // Round robin: after the first three turns of writing, every answer had its first piece before any had a third.
    const firstRound: number[][] = [];
    for (let turn = 0; turn < 100 && written() < 50; turn++) {
      const before = written();
      await new Promise((resolve) => setImmediate(resolve));
      perTurn.push(written() - before);
      if (perTurn.filter((count) => count > 0).length === 3 && firstRound.length === 0) firstRound.push(bigs.map((big) => big.pieces.length));
    }
    // Twelve pieces: every answer's first, then the first two answers' second.
    expect(firstRound[0]).toEqual([2, 2, 1, 1, 1, 1, 1, 1, 1, 1]);
    expect(written()).toBe(50);
    expect(Math.max(...perTurn)).toBe(4);
    expect(perTurn.filter((count) => count > 0).length).toBeGreaterThanOrEqual(50 / 4);
    expect(bigs.every((big) => big.writableEnded && big.text === big.text[0]!.repeat(PIECE * 5))).toBe(true);
  });
});
