/**
 * What the `paylater` commands read: a body (a file or standard input, byte for byte) and the
 * private key or password (a key file or an environment variable, never an argument).
 */
import { readFile } from 'node:fs/promises';
import { CliError, UsageError } from './command-line.js';

export const PRIVATE_KEY_VARIABLE = 'PAYLATER_PRIVATE_KEY';

/**
 * The bytes of `file`, or of standard input when `file` is `-` or undefined, exactly as read.
 * With `stripNewline`, one trailing `\n` (if any) is dropped.
 */
export async function readBody(
  file: string | undefined,
  options: { stripNewline: boolean; command: string },
): Promise<Buffer> {
  let body: Buffer;
  if (file === undefined || file === '-') {
    if (file === undefined && process.stdin.isTTY) {
      throw new UsageError(
        "no body: give a FILE, or pipe the body into standard input ('-' reads the terminal)",
        options.command,
      );
    }
    body = await readStdin();
  } else {
    body = await readFileOrFail(file, 'body file');
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
    const bytes = await readFileOrFail(keyFile, 'key file');
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

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : (chunk as Buffer));
  }
  return Buffer.concat(chunks);
}

async function readFileOrFail(file: string, what: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (error) {
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
