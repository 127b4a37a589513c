/**
 * Sending answers (src/http/send.ts): a small answer is written at once; large ones wait for
 * their turn, one per turn of the event loop, so that other requests are answered between them.
 * Not timed: the test counts the answers written after each turn.
 */
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { sendBody } from '../../src/http/send.js';

/** A stand-in for a response that records what was written. */
function response(): ServerResponse & { written: string | undefined; status: number | undefined } {
  const fake = {
    headersSent: false,
    destroyed: false,
    written: undefined as string | undefined,
    status: undefined as number | undefined,
    writeHead(status: number) {
      fake.status = status;
      fake.headersSent = true;
    },
    end(payload: string) {
      fake.written = payload;
    },
  };
  return fake as unknown as ServerResponse & typeof fake;
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('sendBody', () => {
  it('writes a small answer at once, and large ones one per turn, in order', async () => {
    const small = response();
    sendBody(small, 200, { ok: true });
    expect(small.written).toBe('{"ok":true}');
    const bigs = [response(), response(), response()];
    const text = 'x'.repeat(300 * 1024);
    bigs.forEach((big, index) => sendBody(big, 200, `${index}${text}`, { 'Content-Type': 'text/plain' }));
    expect(bigs.map((big) => big.written === undefined)).toEqual([true, true, true]);
    const writtenAfter: number[] = [];
    for (let index = 0; index < 3; index++) {
      await turn();
      writtenAfter.push(bigs.filter((big) => big.written !== undefined).length);
    }
    expect(writtenAfter).toEqual([1, 2, 3]);
    expect(bigs.map((big) => big.written?.[0])).toEqual(['0', '1', '2']);
  });
});
