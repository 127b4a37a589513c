/**
 * The guides' snippets pasted as written (the README's tour, getting started, the walkthrough, the
 * webhooks guide and the authentication guide) against a started sandbox, as a reader in a second terminal does:
 *
 * - every `sh` block of a guide, in the guide's order, into one `bash` (one terminal: a block may
 *   use what an earlier one set), each block followed by a line that prints its exit status; every
 *   status must be 0 and nothing may be printed on standard error;
 * - every TypeScript block that is a whole program: saved under its `file=` name when the guide
 *   names one (a shell block of the guide then runs it, `npx tsx walkthrough.mts`), otherwise run
 *   with tsx by the test; it must exit 0 without standard error.
 *
 * A block is left out only when its info string says why: `server` (it installs or starts a
 * long-running process, `npm start`, `npx paylater listen`: this test starts the sandbox itself),
 * `mock` (it calls `npm run mock`'s ports, not the sandbox: the README's are run in a case of their
 * own with docs/mock.md's, against `npm run mock` moved off its ports by PAYLATER_MOCK_PORT_OFFSET,
 * the one setting the snippets read too), `receiver` (a whole webhook receiver, a server or a
 * route module: the webhooks guide's are started in a case of their own, on a port moved by PORT,
 * and sent the sandbox's own signed events), `excerpt` (a part of a program, such as
 * a handler inside a reader's own server). The environment holds PATH, a HOME of its own and the
 * sandbox's address in PAYLATER_BASE_URL only: no credentials, so the snippets carry the sandbox's
 * published test values as defaults. `npx paylater` is the CLI of this repository, as in a clone.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ENTRY } from '../support/cli.js';
import { finished, freeOffset, portsAt, waitFor } from '../support/mock-processes.js';
import { freePort } from '../support/processes.js';
import { guideProject } from '../support/guide-project.js';
import { startSandbox, type TestSandbox } from '../support/sandbox.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const GUIDES = ['README.md', 'docs/getting-started.md', 'docs/walkthrough.md', 'docs/webhooks.md', 'docs/authentication.md'] as const;
/** The words of an info string that leave a block out, and why. */
const LEFT_OUT = ['server', 'mock', 'receiver', 'excerpt'] as const;

interface Block {
  guide: string;
  /** The line of the opening fence. */
  line: number;
  lang: string;
  words: string[];
  file: string | undefined;
  source: string;
}

/** Every fenced block of a guide with its language, the words after it and its `file=` name. */
function fencedBlocks(guide: string): Block[] {
  const text = readFileSync(join(ROOT, guide), 'utf8');
  return [...text.matchAll(/^```(\S*)([^\n]*)\n([\s\S]*?)^```$/gm)].map((match) => {
    const words = (match[2] ?? '').trim().split(/\s+/).filter(Boolean);
    return {
      guide,
      line: text.slice(0, match.index).split('\n').length,
      lang: match[1] ?? '',
      words,
      file: words.find((word) => word.startsWith('file='))?.slice('file='.length),
      source: match[3] ?? '',
    };
  });
}

const isLeftOut = (block: Block) => block.words.some((word) => (LEFT_OUT as readonly string[]).includes(word));
const isShell = (block: Block) => block.lang === 'sh' || block.lang === 'bash';
const isProgram = (block: Block) => ['ts', 'js', 'mts', 'mjs'].includes(block.lang);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], options: { cwd: string; env: Record<string, string>; input?: string }): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

let sandbox: TestSandbox;
let work: string;
let env: Record<string, string>;

beforeAll(async () => {
  sandbox = await startSandbox();
  const exports = {
    '.': './src/index.js',
    './webhooks': './src/webhooks/index.js',
    './clients/sdk': './src/clients/sdk.js',
    './clients/web': './src/clients/web.js',
    './clients/gateway': './src/clients/gateway.js',
    './signature': './src/signature.js',
  };
  work = guideProject('paylater-guide-snippets-', exports, {});
  // The reader's folder: `npx paylater` runs the project's own command, as in a clone after `npm start`
  // (here the sources transpiled for this run); `npx tsx` finds tsx installed.
  writeFileSync(join(work, 'paylater.mjs'), `#!/usr/bin/env node\nawait import(${JSON.stringify(pathToFileURL(CLI_ENTRY).href)});\n`);
  chmodSync(join(work, 'paylater.mjs'), 0o755);
  writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'guide-reader', private: true, type: 'module', bin: { paylater: 'paylater.mjs' } }));
  mkdirSync(join(work, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules', 'tsx'), join(work, 'node_modules', 'tsx'), 'junction');
  symlinkSync(join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(work, 'node_modules', '.bin', 'tsx'));
  mkdirSync(join(work, 'home'));
  env = {
    PATH: process.env.PATH ?? '',
    HOME: join(work, 'home'),
    PAYLATER_BASE_URL: sandbox.url,
    // npm's own notices ("a new npm is available") would land on standard error.
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
  };
});

afterAll(async () => {
  await sandbox?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The blocks pasted in order into one `bash`: each exits 0, and nothing is printed on standard error; what they printed. */
async function expectShellSession(shell: Block[], environment: Record<string, string>): Promise<string> {
  const session = shell.map((block) => `${block.source}\nprintf '\\n::block %s %s\\n' ${block.line} "$?"\n`).join('');
  const result = await run('bash', ['-s'], { cwd: work, env: environment, input: session });
  expect(result.stderr, result.stdout).toBe('');
  expect(result.code, result.stdout).toBe(0);
  const statuses = [...result.stdout.matchAll(/^::block (\d+) (\d+)$/gm)].map((match) => `line ${match[1]}: ${match[2]}`);
  expect(statuses, result.stdout).toEqual(shell.map((block) => `line ${block.line}: 0`));
  return result.stdout;
}

describe("the guides' snippets, pasted as written", () => {
  it('every shell and TypeScript block is run, or says why not', () => {
    for (const guide of GUIDES) {
      const blocks = fencedBlocks(guide).filter((block) => isShell(block) || isProgram(block));
      expect(blocks.length, guide).toBeGreaterThan(0);
      expect(blocks.filter((block) => !isLeftOut(block)).length, `${guide} runs no block`).toBeGreaterThan(0);
    }
  });

  it.each(GUIDES.map((guide) => [guide]))('%s: each shell block exits 0, and each program', async (guide) => {
    const blocks = fencedBlocks(guide).filter((block) => !isLeftOut(block));
    for (const block of blocks.filter((b) => isProgram(b) && b.file !== undefined)) writeFileSync(join(work, block.file!), block.source);

    const shell = blocks.filter(isShell);
    if (shell.length > 0) await expectShellSession(shell, env);

    for (const block of blocks.filter((b) => isProgram(b) && b.file === undefined)) {
      const file = join(work, `snippet-${block.line}.${block.lang.startsWith('m') ? block.lang : `m${block.lang}`}`);
      writeFileSync(file, block.source);
      const loader = pathToFileURL(join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
      const result = await run(process.execPath, ['--import', loader, file], { cwd: work, env });
      expect(result.stderr, `${guide} line ${block.line}: ${result.stdout}`).toBe('');
      expect(result.code, `${guide} line ${block.line}`).toBe(0);
    }
  }, 300_000);

  it("README and docs/mock.md: the mock's blocks, against npm run mock moved off its ports by PAYLATER_MOCK_PORT_OFFSET alone", async () => {
    const offset = await freeOffset();
    const ports = portsAt(offset);
    const moved = { PAYLATER_MOCK_PORT_OFFSET: String(offset) };
    const mock = spawn(process.execPath, ['--import', 'tsx', 'scripts/mock.ts', '--quiet'], {
      cwd: ROOT,
      env: { ...process.env, ...moved },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // a process group of its own: the finally below ends whatever is left
    });
    let output = '';
    mock.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    mock.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const ended = finished(mock, 150_000);
    try {
      await waitFor(() => output.includes('Ctrl-C stops.'), 90_000, () => output);
      for (const port of Object.values(ports)) expect(output).toContain(`http://127.0.0.1:${port} `);

      // The README's tour of the mock, and the mock's guide, each pasted into a terminal of its own.
      for (const guide of ['README.md', 'docs/mock.md']) {
        const blocks = fencedBlocks(guide).filter((block) => isShell(block) && block.words.includes('mock'));
        expect(blocks.length, guide).toBeGreaterThanOrEqual(12);
        const printed = await expectShellSession(blocks, { ...env, ...moved });
        // Each family answered (curl exits 0 on any HTTP status, so the answers are checked too).
        for (const answer of ['"id":"merchant_acme_01"', 'HTTP/1.1 401', '"registrationStatus":"registered"', 'TRANSACTION_INITIATED', '{"message":"ok"}', '{"message":"CANCELLED"}', 'HTTP/1.1 201']) {
          expect(printed, `${guide}: ${answer}`).toContain(answer);
        }
      }
    } finally {
      try {
        process.kill(-mock.pid!, 'SIGTERM');
      } catch {
        // Already gone.
      }
      await ended;
    }
  }, 300_000);
  it("docs/webhooks.md: the receivers as pasted, the server on a port moved by PORT, answer the sandbox's own events", async () => {
    const receivers = fencedBlocks('docs/webhooks.md').filter((block) => block.words.includes('receiver'));
    expect(receivers.map((block) => block.file)).toEqual(['webhook-server.mts', 'webhook-route.mts']);
    for (const block of receivers) writeFileSync(join(work, block.file!), block.source);
    const made = await run('bash', ['-c', 'npx paylater trigger sdk.success && npx paylater trigger web.success'], { cwd: work, env });
    expect(made.code, made.stderr).toBe(0);
    const page = (await (await fetch(`${sandbox.url}/sandbox/webhooks/deliveries?order=newest&limit=10`)).json()) as {
      deliveries: { family: string; event: string; body: string; headers: Record<string, string> }[];
    };
    const sdkEvent = page.deliveries.find((delivery) => delivery.family === 'sdk')!;
    const webEvent = page.deliveries.find((delivery) => delivery.family === 'web' && delivery.event === 'transactionStatus')!;
    expect([sdkEvent.body, webEvent.body]).toEqual([expect.stringContaining('"SUCCESS"'), expect.stringContaining('"SUCCESS"')]);
    const loader = pathToFileURL(join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;

    const port = await freePort();
    const server = spawn(process.execPath, ['--import', loader, 'webhook-server.mts'], { cwd: work, env: { ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    server.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    server.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const ended = finished(server, 60_000);
    try {
      await waitFor(() => output.includes(`Receiving webhooks on http://127.0.0.1:${port}/`), 30_000, () => output);
      const post = async (path: string, event: { body: string; headers: Record<string, string> }) => {
        const response = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: event.headers, body: event.body });
        return `${response.status} ${(await response.json() as { error?: string }).error ?? 'received'}`;
      };
      expect(await post('/paylater/sdk-webhook', sdkEvent)).toBe('200 received');
      expect(await post('/paylater/webhook', webEvent)).toBe('200 received');
      expect(await post('/paylater/webhook', { ...webEvent, body: webEvent.body.replace('SUCCESS', 'FAILURE') })).toBe('401 bad_signature');
      expect(await post('/paylater/webhook', sdkEvent)).toBe('400 invalid_payload');
      expect(output.match(/^recorded .*"status":"SUCCESS"/gm)).toHaveLength(2);
    } finally {
      server.kill('SIGTERM');
      await ended;
    }

    // The route module: its POST called with the web event as a fetch Request, and with a forgery.
    writeFileSync(
      join(work, 'route-driver.mts'),
      [
        "import { POST } from './webhook-route.mts';",
        'const event = JSON.parse(process.argv[2]);',
        "for (const body of [event.body, event.body.replace('SUCCESS', 'FAILURE')]) {",
        "  const response = await POST(new Request('http://shop.test/paylater/webhook', { method: 'POST', headers: event.headers, body }));",
        '  console.log(response.status, await response.text());',
        '}',
      ].join('\n'),
    );
    const routed = await run(process.execPath, ['--import', loader, 'route-driver.mts', JSON.stringify(webEvent)], { cwd: work, env });
    expect(routed.stderr).toBe('');
    expect(routed.stdout).toMatch(/^recorded evt_\w+ \S+ SUCCESS\n200 \{"received":true\}\n401 \{"error":"bad_signature"\}\n$/);
  }, 120_000);
});
