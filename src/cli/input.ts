/**
 * What the `paylater` commands read: a body (a file or standard input, byte for byte) and the
 * private key or password (a key file or an environment variable, never an argument).
 *
 * Both are read as a stream with a byte cap ({@link MAX_BODY_BYTES}, {@link MAX_KEY_BYTES}): the
 * read stops at the first byte over the limit, so `--key-file /dev/zero` or an endless pipe ends
 * with an error naming the limit instead of filling the memory.
 */
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { BODY_LIMIT } from '../sandbox/config.js';
import { CliError, UsageError } from './command-line.js';

export const PRIVATE_KEY_VARIABLE = 'PAYLATER_PRIVATE_KEY';

/** The largest body read from a file or standard input: the sandbox's request body limit, 1 MiB. */
export const MAX_BODY_BYTES = BODY_LIMIT;
/** The largest key file: 64 KiB (a private key or password is a few hundred bytes). */
export const MAX_KEY_BYTES = 64 * 1024;
const BODY_HINT = "of a body (the sandbox's request body limit)";
const KEY_HINT = 'of a key file (a private key or password is far smaller: is it the right file?)';

/**
 * The bytes of `file`, or of standard input when `file` is `-` or undefined, exactly as read.
 * With `stripNewline`, one trailing `\n` (if any) is dropped. At most {@link MAX_BODY_BYTES}.
 */
export async function readBody(
  file: string | undefined,
  options: { stripNewline: boolean; command: string; stdin?: Readable & { isTTY?: boolean } },
): Promise<Buffer> {
  const stdin = options.stdin ?? process.stdin;
  let body: Buffer;
  if (file === undefined || file === '-') {
    if (file === undefined && stdin.isTTY === true) {
      throw new UsageError(
        "no body: give a FILE, or pipe the body into standard input ('-' reads the terminal)",
        options.command,
      );
    }
    body = await readCapped(stdin, MAX_BODY_BYTES, 'the body on standard input', BODY_HINT);
  } else {
    body = await readFileOrFail(file, 'body file', MAX_BODY_BYTES, BODY_HINT);
  }
  if (options.stripNewline && body.at(-1) === 0x0a) {
    return body.subarray(0, -1);
  }
  return body;
}

/** Where a secret comes from when no --key-file is given, and what it is called in messages. */
export interface SecretSource {
  /** The environment variable, e.g. PAYLATER_PRIVATE_KEY. */
  variable: string;
  /** What the secret is, e.g. `private key`. */
  what: string;
}

export const PRIVATE_KEY: SecretSource = { variable: PRIVATE_KEY_VARIABLE, what: 'private key' };

/**
 * The private key (or another secret, see {@link SecretSource}): the content of `keyFile` as UTF-8
 * without one trailing newline (`\n` or `\r\n`), else the environment variable. The error messages
 * never contain the secret.
 */
export async function readPrivateKey(keyFile: string | undefined, source: SecretSource = PRIVATE_KEY): Promise<string> {
  if (keyFile !== undefined) {
    const bytes = await readFileOrFail(keyFile, 'key file', MAX_KEY_BYTES, KEY_HINT);
    let key: string;
    try {
      key = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new CliError(`the key file '${keyFile}' is not valid UTF-8`);
    }
    key = key.replace(/\r?\n$/, '');
    if (key === '') {
      throw new CliError(`the key file '${keyFile}' is empty`);
    }
    return key;
  }
  const key = process.env[source.variable];
  if (key === undefined || key === '') {
    throw new CliError(
      `no ${source.what}: set the ${source.variable} environment variable or pass --key-file FILE`,
    );
  }
  return key;
}

/** `1 MiB`, `64 KiB`, `100 bytes`. */
function size(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** What was read past a limit: the CLI's message names what and the limit. */
class TooLarge extends Error {}

/**
 * Reads `stream` to its end, at most `limit` bytes: past that it stops reading, destroys the stream
 * and throws a {@link CliError} naming `what`, the limit and `hint` (what the limit is).
 */
async function readCapped(stream: Readable, limit: number, what: string, hint: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of stream) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : (chunk as Buffer);
      total += bytes.length;
      if (total > limit) throw new TooLarge();
      chunks.push(bytes);
    }
  } catch (error) {
    if (error instanceof TooLarge) {
      stream.destroy();
      throw new CliError(`${what} is larger than ${size(limit)}, the limit ${hint}; reading stopped there`);
    }
    throw error;
  }
  return Buffer.concat(chunks, total);
}

async function readFileOrFail(file: string, what: string, limit: number, hint: string): Promise<Buffer> {
  try {
    // Chunks no larger than the limit plus one byte: a small limit reads little past it.
    return await readCapped(createReadStream(file, { highWaterMark: Math.min(64 * 1024, limit + 1) }), limit, `the ${what} '${file}'`, hint);
  } catch (error) {
    if (error instanceof CliError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'it is a directory'
          : code === 'EACCES' || code === 'EPERM'
            ? 'permission denied'
            : (code ?? 'read failed');
    throw new CliError(`cannot read the ${what} '${file}': ${reason}`);
  }
}
