/**
 * The CLI reads key files and bodies with a byte cap: past it, it stops reading (an endless
 * source such as /dev/zero or a pipe ends at once) and says which limit was passed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/cli/command-line.js';
import { MAX_BODY_BYTES, MAX_KEY_BYTES, readBody, readPrivateKey } from '../../src/cli/input.js';

const work = mkdtempSync(join(tmpdir(), 'paylater-input-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** An endless stream of 64 KiB chunks that counts the chunks taken from it. */
function endless() {
  const taken = { chunks: 0 };
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  const stream = new Readable({
    read() {
      taken.chunks++;
      this.push(chunk);
    },
  });
  return { stream, taken };
}

async function failure(promise: Promise<unknown>): Promise<CliError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(CliError);
  return error as CliError;
}

describe('readPrivateKey', () => {
  it('stops reading /dev/zero at 64 KiB and names the limit', async () => {
    const error = await failure(readPrivateKey('/dev/zero'));
    expect(error.message).toBe(
      "the key file '/dev/zero' is larger than 64 KiB, the limit of a key file (a private key or password is far smaller: is it the right file?); reading stopped there",
    );
  });

  it('takes a key file of exactly 64 KiB and refuses one byte more', async () => {
    const exact = join(work, 'exact.key');
    writeFileSync(exact, 'k'.repeat(MAX_KEY_BYTES));
    expect(await readPrivateKey(exact)).toHaveLength(MAX_KEY_BYTES);
    const over = join(work, 'over.key');
    writeFileSync(over, 'k'.repeat(MAX_KEY_BYTES + 1));
    expect((await failure(readPrivateKey(over))).message).toMatch(/is larger than 64 KiB/);
  });
});

describe('readBody', () => {
  const options = { stripNewline: false, command: 'paylater sign sdk' };

  it('stops reading an endless standard input just past 1 MiB and names the limit', async () => {
    const { stream, taken } = endless();
    const error = await failure(readBody('-', { ...options, stdin: stream }));
    expect(error.message).toBe(
      "the body on standard input is larger than 1 MiB, the limit of a body (the sandbox's request body limit); reading stopped there",
    );
    // 1 MiB is 16 chunks; the stream is not read much further.
    expect(taken.chunks).toBeLessThan(24);
    expect(stream.destroyed).toBe(true);
  });

  it('stops reading /dev/zero as a body file', async () => {
    expect((await failure(readBody('/dev/zero', options))).message).toMatch(/^the body file '\/dev\/zero' is larger than 1 MiB/);
  });

  it('takes a body of exactly the limit, byte for byte', async () => {
    const file = join(work, 'limit.json');
    writeFileSync(file, Buffer.alloc(MAX_BODY_BYTES, 0x20));
    expect((await readBody(file, options)).length).toBe(MAX_BODY_BYTES);
    const piped = Readable.from([Buffer.from('{"a":'), Buffer.from('1}\n')]);
    expect((await readBody(undefined, { ...options, stripNewline: true, stdin: piped })).toString()).toBe('{"a":1}');
  });
});
