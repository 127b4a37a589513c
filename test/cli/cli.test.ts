import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { afterAll, describe, it, vi, type ExpectStatic } from 'vitest';
import { buildProgram } from '../../src/cli/commands.js';
import { sdkSignature } from '../../src/signature.js';
import { verifyGatewayWebhook } from '../../src/webhooks/index.js';
import { CLI_ENTRY } from '../support/cli.js';
import { bodyBytes, vectorNamed, type SdkVector, type StatusVector, type WebVector } from '../support/signature-vectors.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const KEY = 'test-private-key-0123456789';

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `paylater` (the sources, transpiled once per run: test/support/cli.ts) with `args`, `input` on standard input and only the given
 * environment variables (besides PATH). Fails if any key of `secrets` appears in the output.
 */
function paylater(
  args: string[],
  options: { input?: string | Buffer; env?: Record<string, string>; secrets?: string[] } = {},
): Promise<Result> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', ...options.env };
  const secrets = options.secrets ?? [KEY];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_ENTRY, ...args], {
      cwd: root,
      env,
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const result = {
        code,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
      };
      for (const secret of secrets) {
        if (result.stdout.includes(secret) || result.stderr.includes(secret)) {
          reject(new Error(`the output of 'paylater ${args.join(' ')}' contains a private key`));
          return;
        }
      }
      resolve(result);
    });
    child.stdin.on('error', () => {
      // The command may exit before reading its input (e.g. on a usage error).
    });
    child.stdin.end(options.input ?? '');
  });
}

const withKey = { PAYLATER_PRIVATE_KEY: KEY };

/**
 * Each test starts several processes at once (Node with tsx, about a second each on an idle
 * machine); on a loaded one (the whole suite on two cores) that takes far longer than the default
 * limit, hence a generous one. It is not a speed requirement.
 */
const SPAWNING = { timeout: 240_000 };

/**
 * `paylater ...args` run in this process by the program the CLI runs, with what it writes on
 * standard output (commander writes help there); for help only, which starts and reads nothing.
 */
async function helpInProcess(args: string[]): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    return true;
  });
  try {
    return { code: await buildProgram().run(args), stdout };
  } finally {
    write.mockRestore();
  }
}

const work = mkdtempSync(join(tmpdir(), 'paylater-cli-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function file(name: string, content: string | Buffer): string {
  const path = join(work, name);
  writeFileSync(path, content);
  return path;
}

const webJson = vectorNamed('web: percent-encoded space') as WebVector;
const webBinary = vectorNamed('web: bytes that are not UTF-8') as WebVector;
const webMiB = vectorNamed('web: body of exactly 1 MiB') as WebVector;
const webEmpty = vectorNamed('web: empty body (status check GET)') as WebVector;
const webUtf8Key = vectorNamed('web: UTF-8 key') as WebVector;
const sdkJson = vectorNamed('sdk: ASCII JSON') as SdkVector;
const sdkNewline = vectorNamed('sdk: ASCII JSON with a trailing newline') as SdkVector;
const sdkBinary = vectorNamed('sdk: bytes that are not UTF-8') as SdkVector;
const sdkEmpty = vectorNamed('sdk: empty body') as SdkVector;
const sdkMiB = vectorNamed('sdk: body of exactly 1 MiB ending inside a UTF-8 sequence') as SdkVector;
const success = vectorNamed('status: SUCCESS') as StatusVector;
const cancelled = vectorNamed('status: CANCELLED') as StatusVector;
const statusUtf8Key = vectorNamed('status: UTF-8 key') as StatusVector;

describe.concurrent('paylater sign', SPAWNING, () => {
  it('signs a web request read from standard input', async ({ expect }) => {
    for (const vector of [webJson, webBinary, webEmpty]) {
      const result = await paylater(['sign', 'web', '--path', vector.pathAndQuery], {
        input: bodyBytes(vector.body),
        env: withKey,
      });
      expect(result, vector.name).toEqual({ code: 0, stdout: `${vector.signature}\n`, stderr: '' });
    }
  });

  it("signs a web request read from standard input given as '-'", async ({ expect }) => {
    const result = await paylater(['sign', 'web', `--path=${webJson.pathAndQuery}`, '-'], {
      input: bodyBytes(webJson.body),
      env: withKey,
    });
    expect(result).toEqual({ code: 0, stdout: `${webJson.signature}\n`, stderr: '' });
  });

  it('signs a web request of 1 MiB read from a file', async ({ expect }) => {
    const body = file('web-mib.bin', bodyBytes(webMiB.body));
    const result = await paylater(['sign', 'web', body, '--path', webMiB.pathAndQuery], {
      env: withKey,
    });
    expect(result).toEqual({ code: 0, stdout: `${webMiB.signature}\n`, stderr: '' });
  });

  it('signs an SDK body from a file and from standard input', async ({ expect }) => {
    const body = file('sdk-binary.bin', bodyBytes(sdkBinary.body));
    const fromFile = await paylater(['sign', 'sdk', body], { env: withKey });
    expect(fromFile).toEqual({ code: 0, stdout: `${sdkBinary.signature}\n`, stderr: '' });
    const fromStdin = await paylater(['sign', 'sdk'], { input: bodyBytes(sdkMiB.body), env: withKey });
    expect(fromStdin).toEqual({ code: 0, stdout: `${sdkMiB.signature}\n`, stderr: '' });
    const empty = await paylater(['sign', 'sdk', '-'], { input: '', env: withKey });
    expect(empty).toEqual({ code: 0, stdout: `${sdkEmpty.signature}\n`, stderr: '' });
  });

  it('signs the bytes exactly as read, unless --strip-newline drops one newline', async ({ expect }) => {
    const withNewline = bodyBytes(sdkNewline.body);
    const kept = await paylater(['sign', 'sdk'], { input: withNewline, env: withKey });
    expect(kept.stdout).toBe(`${sdkNewline.signature}\n`);
    const stripped = await paylater(['sign', 'sdk', '--strip-newline'], {
      input: withNewline,
      env: withKey,
    });
    expect(stripped.stdout).toBe(`${sdkJson.signature}\n`);
    const onlyOne = await paylater(['sign', 'sdk', '--strip-newline'], {
      input: Buffer.concat([withNewline, Buffer.from('\n')]),
      env: withKey,
    });
    expect(onlyOne.stdout).toBe(`${sdkNewline.signature}\n`);
    const none = await paylater(['sign', 'sdk', '--strip-newline'], {
      input: bodyBytes(sdkJson.body),
      env: withKey,
    });
    expect(none.stdout).toBe(`${sdkJson.signature}\n`);
  });

  it('signs a status', async ({ expect }) => {
    for (const vector of [success, cancelled]) {
      const result = await paylater(
        ['sign', 'status', '--id', vector.transactionId, '--status', vector.status],
        { env: withKey },
      );
      expect(result).toEqual({ code: 0, stdout: `${vector.signature}\n`, stderr: '' });
    }
  });

  it('reads the key from --key-file without one trailing newline', async ({ expect }) => {
    const secrets = [statusUtf8Key.key];
    for (const [name, content] of [
      ['key-lf.txt', `${statusUtf8Key.key}\n`],
      ['key-crlf.txt', `${statusUtf8Key.key}\r\n`],
      ['key-bare.txt', statusUtf8Key.key],
    ] as const) {
      const keyFile = file(name, content);
      const args = ['sign', 'status', '--id', statusUtf8Key.transactionId, '--status', 'SUCCESS'];
      const result = await paylater([...args, '--key-file', keyFile], { secrets });
      expect(result, name).toEqual({ code: 0, stdout: `${statusUtf8Key.signature}\n`, stderr: '' });
    }
  });

  it('prefers --key-file to the environment variable', async ({ expect }) => {
    const keyFile = file('key-web.txt', `${webUtf8Key.key}\n`);
    const result = await paylater(
      ['sign', 'web', '--key-file', keyFile, '--path', webUtf8Key.pathAndQuery],
      { input: bodyBytes(webUtf8Key.body), env: withKey, secrets: [KEY, webUtf8Key.key] },
    );
    expect(result).toEqual({ code: 0, stdout: `${webUtf8Key.signature}\n`, stderr: '' });
  });

  it('takes a UTF-8 key from the environment', async ({ expect }) => {
    const result = await paylater(['sign', 'web', '--path', webUtf8Key.pathAndQuery], {
      input: bodyBytes(webUtf8Key.body),
      env: { PAYLATER_PRIVATE_KEY: webUtf8Key.key },
      secrets: [webUtf8Key.key],
    });
    expect(result).toEqual({ code: 0, stdout: `${webUtf8Key.signature}\n`, stderr: '' });
  });
});

describe.concurrent('paylater verify', SPAWNING, () => {
  it('accepts a valid web signature and rejects a wrong one', async ({ expect }) => {
    const args = ['verify', 'web', '--path', webJson.pathAndQuery, '--signature'];
    const input = bodyBytes(webJson.body);
    const valid = await paylater([...args, webJson.signature], { input, env: withKey });
    expect(valid).toEqual({ code: 0, stdout: 'valid\n', stderr: '' });

    const otherPath = await paylater(
      ['verify', 'web', '--path', '/api/transaction?a=b+c', '--signature', webJson.signature],
      { input, env: withKey },
    );
    expect(otherPath).toEqual({ code: 1, stdout: '', stderr: 'invalid\n' });

    const tampered = Buffer.concat([input, Buffer.from(' ')]);
    const wrongBody = await paylater([...args, webJson.signature], { input: tampered, env: withKey });
    expect(wrongBody).toEqual({ code: 1, stdout: '', stderr: 'invalid\n' });
  });

  it('verifies an SDK body from a file and from standard input', async ({ expect }) => {
    const body = file('sdk-json.json', bodyBytes(sdkJson.body));
    const valid = await paylater(['verify', 'sdk', '--signature', sdkJson.signature, body], {
      env: withKey,
    });
    expect(valid).toEqual({ code: 0, stdout: 'valid\n', stderr: '' });

    const fromStdin = await paylater(['verify', 'sdk', '--signature', sdkJson.signature, '-'], {
      input: bodyBytes(sdkJson.body),
      env: withKey,
    });
    expect(fromStdin).toEqual({ code: 0, stdout: 'valid\n', stderr: '' });

    const wrongKey = await paylater(['verify', 'sdk', '--signature', sdkJson.signature, body], {
      env: { PAYLATER_PRIVATE_KEY: 'another-key' },
      secrets: [KEY, 'another-key'],
    });
    expect(wrongKey).toEqual({ code: 1, stdout: '', stderr: 'invalid\n' });
  });

  it('verifies a status signature', async ({ expect }) => {
    const args = ['verify', 'status', '--id', success.transactionId, '--signature', success.signature];
    const valid = await paylater([...args, '--status', 'SUCCESS'], { env: withKey });
    expect(valid).toEqual({ code: 0, stdout: 'valid\n', stderr: '' });
    const otherStatus = await paylater([...args, '--status', 'FAILURE'], { env: withKey });
    expect(otherStatus).toEqual({ code: 1, stdout: '', stderr: 'invalid\n' });
  });

  it('rejects a signature of another form with exit code 1', async ({ expect }) => {
    const hex = Buffer.from(sdkJson.signature, 'base64').toString('hex');
    const base64url = Buffer.from(sdkJson.signature, 'base64').toString('base64url');
    const signatures = [hex, base64url, ` ${sdkJson.signature}`, sdkJson.signature.slice(0, 43), ''];
    const results = await Promise.all(
      signatures.map((signature) =>
        paylater(['verify', 'sdk', `--signature=${signature}`], {
          input: bodyBytes(sdkJson.body),
          env: withKey,
        }),
      ),
    );
    results.forEach((result, index) => {
      expect(result.code, signatures[index]).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/^invalid \(the signature is not 44 characters/);
    });
  });
});

describe.concurrent('help', SPAWNING, () => {
  it('is printed for the program', async ({ expect }) => {
    for (const flag of ['--help', '-h']) {
      const result = await paylater([flag]);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout).toMatch(/^Usage: paylater <command>/);
      expect(result.stdout).toMatch(/^ {2}sign {2,}\S/m);
      expect(result.stdout).toMatch(/^ {2}verify {2,}\S/m);
    }
  });

  it('is printed for every command and subcommand', async ({ expect }) => {
    const expected: [string[], RegExp][] = [
      [['sign'], /^Usage: paylater sign <kind>.*\n[\s\S]*^ {2}web {2,}\S[\s\S]*^ {2}status {2,}\S/m],
      [['verify'], /^Usage: paylater verify <kind>/],
      [['sign', 'web'], /^Usage: paylater sign web --path PATH_AND_QUERY[\s\S]*--strip-newline[\s\S]*PAYLATER_PRIVATE_KEY/],
      [['sign', 'sdk'], /^Usage: paylater sign sdk [\s\S]*base64\(SHA-256\(body \+ privateKey\)\)/],
      [['sign', 'status'], /^Usage: paylater sign status --id ID --status STATUS/],
      [['verify', 'web'], /^Usage: paylater verify web --path PATH_AND_QUERY --signature SIG[\s\S]*Exit status/],
      [['verify', 'sdk'], /^Usage: paylater verify sdk --signature SIG/],
      [['verify', 'status'], /^Usage: paylater verify status --id ID --status STATUS --signature SIG/],
      [['sign', 'gateway'], /^Usage: paylater sign gateway [\s\S]*transactionalApiPassword[\s\S]*PAYLATER_TRANSACTIONAL_PASSWORD/],
      [['verify', 'gateway'], /^Usage: paylater verify gateway --signature SIG/],
      [['listen'], /^Usage: paylater listen --forward-to URL [\s\S]*--sandbox <URL>[\s\S]*--family/],
      [['trigger'], /^Usage: paylater trigger <event>[\s\S]*^ {2}gateway\.refund {2,}\S/m],
      [['trigger', 'sdk.success'], /^Usage: paylater trigger sdk\.success \[options\][\s\S]*--key-file/],
      [['sandbox'], /^Usage: paylater sandbox \[options\][\s\S]*--webhook-url/],
    ];
    // In this process: help is text the program writes, with nothing to start, and a child for each
    // of these 22 would only add Node's start-up. The test above and the next run it as a process.
    for (const [index, [command, usage]] of expected.entries()) {
      // -h is the same option: checked on the first eight, once is enough for the others.
      for (const flag of index < 8 ? ['--help', '-h'] : ['--help']) {
        // The sandbox's help is its own command line's, in modules that a process loads faster than this file would.
        const result = command[0] === 'sandbox' ? await paylater([...command, flag]) : await helpInProcess([...command, flag]);
        expect(result.code, command.join(' ')).toBe(0);
        expect(result.stdout, `${command.join(' ')} ${flag}`).toMatch(usage);
      }
    }
  });

  it('wins over other arguments and needs no key', async ({ expect }) => {
    const result = await paylater(['sign', 'web', '--bogus', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: paylater sign web/);
  });
});

describe.concurrent('version, help command and suggestions', SPAWNING, () => {
  const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;

  it('prints the version of package.json', async ({ expect }) => {
    for (const flag of ['--version', '-V']) {
      expect(await paylater([flag])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    }
  });

  it("'paylater help [command...]' prints the help of the program and of a command", async ({ expect }) => {
    const [program, helpProgram, signWeb, helpSignWeb, helpTrigger] = await Promise.all([
      paylater(['--help']),
      paylater(['help']),
      paylater(['sign', 'web', '--help']),
      paylater(['help', 'sign', 'web']),
      paylater(['help', 'trigger']),
    ]);
    expect(helpProgram).toEqual(program);
    expect(helpSignWeb).toEqual(signWeb);
    expect(signWeb.stdout).toMatch(/^Usage: paylater sign web /);
    expect(helpTrigger.code).toBe(0);
    expect(helpTrigger.stdout).toMatch(/^ {2}sdk\.success {2,}\S/m);
  });

  it('suggests the closest command, kind, event or option', async ({ expect }) => {
    const cases: [string[], string, string][] = [
      [['sgin'], 'paylater', "unknown command 'sgin'. Did you mean 'sign'?"],
      [['help', 'sgin'], 'paylater', "unknown command 'sgin'. Did you mean 'sign'?"],
      [['verfy', 'sdk'], 'paylater', "unknown command 'verfy'. Did you mean 'verify'?"],
      [['sign', 'wbe'], 'paylater sign', "unknown kind 'wbe'. Did you mean 'web'?"],
      [['verify', 'gatway'], 'paylater verify', "unknown kind 'gatway'. Did you mean 'gateway'?"],
      [['trigger', 'sdk.sucess'], 'paylater trigger', "unknown event 'sdk.sucess'. Did you mean 'sdk.success'?"],
      [['sign', 'sdk', '--strip-newlin'], 'paylater sign sdk', 'unknown option --strip-newlin. Did you mean --strip-newline?'],
      [['listen', '--forward'], 'paylater listen', 'unknown option --forward. Did you mean --forward-to?'],
    ];
    const results = await Promise.all(cases.map(([args]) => paylater(args, { env: withKey })));
    cases.forEach(([args, command, message], index) => {
      expect(results[index], args.join(' ')).toEqual({
        code: 2,
        stdout: '',
        stderr: `${command}: ${message}\nRun '${command} --help' for usage.\n`,
      });
    });
  });

  it("lists the trigger events with 'paylater trigger --list'", async ({ expect }) => {
    const result = await paylater(['trigger', '--list']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const names = result.stdout.trim().split('\n').map((line) => line.split(/\s+/, 1)[0]);
    expect(names).toEqual([
      'sdk.success',
      'sdk.failure',
      'sdk.cancelled',
      'web.success',
      'web.failure',
      'web.cancelled',
      'gateway.transaction.success',
      'gateway.transaction.failure',
      'gateway.transaction.cancelled',
      'gateway.refund',
    ]);
  });

  it('ends quietly with exit code 0 when its output goes to a reader that stopped (`| head`)', async ({ expect }) => {
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [CLI_ENTRY, 'trigger', '--list'], { cwd: root, env: { PATH: process.env.PATH ?? '' } });
      // The reader goes before the command writes: its first write finds the pipe closed.
      child.stdout.destroy();
      const stderr: Buffer[] = [];
      child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stderr: Buffer.concat(stderr).toString('utf8') }));
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });
});

describe.concurrent('the gateway kind', SPAWNING, () => {
  const PASSWORD = 'merchant-transactional-password-5d1e';
  const withPassword = { PAYLATER_TRANSACTIONAL_PASSWORD: PASSWORD };
  const gateway = JSON.parse(readFileSync(join(root, 'generated/openapi/gateway.json'), 'utf8')) as {
    webhooks: { transactionUpdated: { post: { requestBody: { content: { 'application/json': { examples: Record<string, { value: unknown }> } } } } } };
  };
  const example = Object.values(gateway.webhooks.transactionUpdated.post.requestBody.content['application/json'].examples)[0];
  const body = JSON.stringify(example?.value);

  it('signs a gateway webhook with the Transactional API password, as verifyGatewayWebhook expects', async ({ expect }) => {
    const fromEnv = await paylater(['sign', 'gateway'], { input: body, env: withPassword, secrets: [PASSWORD] });
    expect(fromEnv.code).toBe(0);
    expect(fromEnv.stderr).toBe('');
    const signature = fromEnv.stdout.trim();
    const event = verifyGatewayWebhook(body, { 'X-Signature': signature, 'Content-Type': 'application/json' }, PASSWORD);
    expect(event.kind).toBe('transaction');

    const keyFile = file('gateway.password', `${PASSWORD}\n`);
    const fromFile = await paylater(['sign', 'gateway', '--key-file', keyFile, '-'], { input: body, secrets: [PASSWORD] });
    expect(fromFile).toEqual({ code: 0, stdout: `${signature}\n`, stderr: '' });
  });

  it('verifies a gateway webhook, and never takes the partner key for the password', async ({ expect }) => {
    const signature = sdkSignature(body, PASSWORD);
    const valid = await paylater(['verify', 'gateway', '--signature', signature], { input: body, env: withPassword, secrets: [PASSWORD] });
    expect(valid).toEqual({ code: 0, stdout: 'valid\n', stderr: '' });
    const other = await paylater(['verify', 'gateway', '--signature', sdkSignature(body, KEY)], {
      input: body,
      env: withPassword,
      secrets: [PASSWORD, KEY],
    });
    expect(other).toEqual({ code: 1, stdout: '', stderr: 'invalid\n' });
    const noPassword = await paylater(['verify', 'gateway', '--signature', signature], { input: body, env: withKey });
    expect(noPassword.code).toBe(2);
    expect(noPassword.stderr).toBe(
      'paylater: no Transactional API password: set the PAYLATER_TRANSACTIONAL_PASSWORD environment variable or pass --key-file FILE\n',
    );
  });
});

describe.concurrent('statuses and trailing newlines', SPAWNING, () => {
  const statuses = (
    JSON.parse(readFileSync(join(root, 'generated/openapi/web.json'), 'utf8')) as {
      components: { schemas: { WebTransactionStatus: { enum: string[] } } };
    }
  ).components.schemas.WebTransactionStatus.enum;

  it("signs every status of the contract and refuses any other, naming the contract's values", async ({ expect }) => {
    expect(statuses.length).toBeGreaterThan(0);
    const signed = await Promise.all(statuses.map((status) => paylater(['sign', 'status', '--id', 'txn_1', '--status', status], { env: withKey })));
    signed.forEach((result, index) => expect(result.code, statuses[index]).toBe(0));

    for (const [status, suggestion] of [
      ['success', `did you mean SUCCESS?`],
      ['FAILED', undefined],
    ] as const) {
      const result = await paylater(['sign', 'status', '--id', 'txn_1', '--status', status], { env: withKey });
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      const [line] = result.stderr.split('\n');
      expect(line).toContain(`paylater sign status: --status must be one of the contract's statuses ${statuses.join(', ')}`);
      if (suggestion === undefined) expect(line).not.toMatch(/did you mean/);
      else expect(line).toContain(suggestion);
    }
    const verify = await paylater(['verify', 'status', '--id', 'a', '--status', 'paid', '--signature', success.signature], { env: withKey });
    expect(verify.code).toBe(2);
  });

  it('explains a failed verification of a body that ends with a newline', async ({ expect }) => {
    const json = bodyBytes(sdkJson.body);
    const withNewline = Buffer.concat([json, Buffer.from('\n')]);
    expect(json.at(-1)).not.toBe(0x0a);

    // Signed without the newline, checked with it: the hint says so.
    const added = await paylater(['verify', 'sdk', '--signature', sdkJson.signature], { input: withNewline, env: withKey });
    expect(added.code).toBe(1);
    expect(added.stdout).toBe('');
    expect(added.stderr).toMatch(/^invalid\nhint: the body ends with a newline, and the signature matches the body without it/);
    expect(added.stderr).toMatch(/--strip-newline/);

    const stripped = await paylater(['verify', 'sdk', '--strip-newline', '--signature', sdkJson.signature], { input: withNewline, env: withKey });
    expect(stripped).toEqual({ code: 0, stdout: 'valid\n', stderr: '' });

    // Another signature altogether: the hint only says that the newline counts.
    const wrong = await paylater(['verify', 'sdk', '--signature', sdkNewline.signature], {
      input: Buffer.concat([withNewline, Buffer.from('x\n')]),
      env: withKey,
    });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^invalid\nhint: the body ends with a newline, which is part of the signed bytes/);

    // The web kind too; a status has no body, so no hint.
    const web = await paylater(['verify', 'web', '--path', webJson.pathAndQuery, '--signature', webJson.signature], {
      input: Buffer.concat([bodyBytes(webJson.body), Buffer.from('\n')]),
      env: withKey,
    });
    expect(web.stderr).toMatch(/^invalid\nhint: the body ends with a newline, and the signature matches/);
  });
});

describe.concurrent('errors', SPAWNING, () => {
  /** Exit code 2, nothing on standard output, one line of error then the hint, no stack. */
  function expectUsageError(
    expect: ExpectStatic,
    result: Result,
    command: string,
    message: RegExp,
  ): void {
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    const lines = result.stderr.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(new RegExp(`^${command}: `));
    expect(lines[0]).toMatch(message);
    expect(lines[1]).toBe(`Run '${command} --help' for usage.`);
    expect(result.stderr).not.toMatch(/^\s+at /m);
  }

  it('reports a missing key with exit code 2', async ({ expect }) => {
    for (const env of [{}, { PAYLATER_PRIVATE_KEY: '' }] as Record<string, string>[]) {
      const result = await paylater(['sign', 'sdk'], { input: '{}', env });
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/^paylater: no private key: .*PAYLATER_PRIVATE_KEY.*--key-file/);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    }
    const verify = await paylater(
      ['verify', 'status', '--id', 'a', '--status', 'SUCCESS', '--signature', success.signature],
    );
    expect(verify.code).toBe(2);
    expect(verify.stderr).toMatch(/no private key/);
  });

  it('reports an unreadable or empty key file with exit code 2', async ({ expect }) => {
    const missing = await paylater(['sign', 'sdk', '--key-file', join(work, 'absent.key')], {
      input: '{}',
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^paylater: cannot read the key file '.*absent\.key': no such file\n$/);
    const empty = await paylater(['sign', 'sdk', '--key-file', file('empty.key', '\n')], {
      input: '{}',
    });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/^paylater: the key file '.*empty\.key' is empty\n$/);
  });

  it('reports an unreadable body file with exit code 2', async ({ expect }) => {
    const result = await paylater(['sign', 'sdk', join(work, 'absent.json')], { env: withKey });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^paylater: cannot read the body file '.*absent\.json': no such file\n$/);
  });

  it('never takes the key from the command line, nor echoes it', async ({ expect }) => {
    const secret = 'typed-on-the-command-line-7f3a';
    for (const args of [
      ['sign', 'sdk', '--key', secret],
      ['sign', 'sdk', `--key=${secret}`],
      ['sign', 'sdk', `--private-key=${secret}`],
      ['verify', 'sdk', '--signature', success.signature, `--key=${secret}`],
    ]) {
      const result = await paylater(args, { input: '{}', env: withKey, secrets: [KEY, secret] });
      const command = `paylater ${args[0]} ${args[1]}`;
      expectUsageError(expect, result, command, /unknown option --(private-)?key: .*PAYLATER_PRIVATE_KEY/);
    }
    const asCommand = await paylater([`--key=${secret}`], { secrets: [secret] });
    expectUsageError(expect, asCommand, 'paylater', /unknown option --key/);
  });

  it('reports unknown options, commands and kinds', async ({ expect }) => {
    expectUsageError(
      expect,
      await paylater(['sign', 'web', '--path', '/api', '--bogus'], { env: withKey }),
      'paylater sign web',
      /unknown option --bogus$/,
    );
    expectUsageError(
      expect,
      await paylater(['verify', 'status', '-x'], { env: withKey }),
      'paylater verify status',
      /unknown option -x$/,
    );
    expectUsageError(expect, await paylater(['bogus']), 'paylater', /unknown command 'bogus'/);
    expectUsageError(expect, await paylater(['--bogus']), 'paylater', /unknown option --bogus/);
    expectUsageError(expect, await paylater([]), 'paylater', /missing command \(one of: sign, verify, sandbox, listen, trigger, help\)/);
    expectUsageError(expect, await paylater(['sign', 'hex']), 'paylater sign', /unknown kind 'hex'/);
    expectUsageError(expect, await paylater(['verify']), 'paylater verify', /missing kind/);
  });

  it('reports missing and malformed options', async ({ expect }) => {
    const cases: [string[], string, RegExp][] = [
      [['sign', 'web'], 'paylater sign web', /missing option --path/],
      [['sign', 'web', '--path'], 'paylater sign web', /option --path needs a value/],
      [['sign', 'web', '--path', '--strip-newline'], 'paylater sign web', /option --path needs a value/],
      [['sign', 'web', '--path', 'https://pay.example/api/transaction'], 'paylater sign web', /starting with '\/'/],
      [['sign', 'web', '--path', '/a', '--path', '/b'], 'paylater sign web', /--path is given more than once/],
      [['sign', 'web', '--path', '/a', 'one', 'two'], 'paylater sign web', /too many arguments/],
      [['sign', 'sdk', '--strip-newline=yes'], 'paylater sign sdk', /--strip-newline takes no value/],
      [['sign', 'status', '--id', 'txn_001'], 'paylater sign status', /missing option --status/],
      [['sign', 'status', '--id', '', '--status', 'SUCCESS'], 'paylater sign status', /--id must not be empty/],
      [['sign', 'status', '--id', 'a', '--status', 'SUCCESS', 'extra'], 'paylater sign status', /takes no arguments/],
      [['verify', 'web', '--path', '/api'], 'paylater verify web', /missing option --signature/],
      [['verify', 'sdk'], 'paylater verify sdk', /missing option --signature/],
      [['verify', 'status', '--id', 'a', '--status', 'SUCCESS'], 'paylater verify status', /missing option --signature/],
    ];
    const results = await Promise.all(
      cases.map(([args]) => paylater(args, { input: '{}', env: withKey })),
    );
    cases.forEach(([, command, message], index) => {
      const result = results[index];
      expect(result).toBeDefined();
      if (result !== undefined) expectUsageError(expect, result, command, message);
    });
  });
});
