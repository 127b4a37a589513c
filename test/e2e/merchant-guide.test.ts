/**
 * The merchant guide (docs/web-checkout.md) followed literally. Every fenced block of the guide
 * marked `file=<name>` is written, byte for byte, into an empty project, which installs the
 * package from the tarball `npm pack` makes of a fresh copy of this repository. The project's
 * three servers (`node server.mjs`, `php -S ... shop.php`, `python3 shop.py`) run against the
 * installed package's sandbox (`paylater sandbox`, as the guide starts it, on a free port), and
 * headless Chromium buys with each of them in the popup
 * flow, and with the guide's redirect-flow call; the shell scripts (`initiate.sh`, `status.sh`)
 * initiate and check a purchase completed on the hosted page. Each server names its own
 * `notes.webhook_url` in the initiate and answers the sandbox's call to it with the status check,
 * as the guide starts with; the partner-level JSON webhooks (the guide's extra) go to every server
 * at once (a small fan-out here), and each must verify them.
 *
 * Each server fills the page's `{{PAYLATER_BASE_URL}}` with the address it calls, so the page loads
 * sdk.js from the sandbox's free port as written. A last case follows the guide's own commands
 * with every port moved by its one setting (the `export` line of step 1) and buys through them.
 * The screenshots the guide shows are written to docs/images/web-checkout-*.png.
 *
 * Needs Chromium at /usr/bin/chromium (or CHROMIUM_PATH), php (with curl) and python3.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sdkSignature, statusSignature, webSignature } from '../../src/signature.js';
import { holdClose, launchChromium } from './browser.js';

const root = resolve(import.meta.dirname, '..', '..');
const GUIDE = join(root, 'docs', 'web-checkout.md');
const imagesDir = join(root, 'docs', 'images');
const KEY = 'test_private_key';
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const NOT_IN_A_CLONE = new Set(['node_modules', 'dist', 'site', 'artifacts', 'coverage', '.git', '.vite']);

/** The blocks of a Markdown text whose info string names a file: ```lang file=name. */
export function fileBlocks(markdown: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const match of markdown.matchAll(/^```[\w-]+ file=(\S+)\n([\s\S]*?)^```$/gm)) {
    const [, name, text] = match as unknown as [string, string, string];
    if (files.has(name)) throw new Error(`the guide has two blocks for ${name}`);
    files.set(name, text);
  }
  return files;
}

const files = fileBlocks(readFileSync(GUIDE, 'utf8'));

type Backend = 'node' | 'php' | 'python';
const BACKENDS: Backend[] = ['node', 'php', 'python'];

interface Running {
  child: ChildProcess;
  url: string;
  output: () => string;
}

let work: string;
let project: string;
/** The installed package's sandbox, `paylater sandbox`, in its own process. */
let sandbox: { url: string; child: ChildProcess; output: () => string } | undefined;
let fanout: Server | undefined;
let browser: Browser | undefined;
const servers = new Map<Backend, Running>();
/** Every webhook the sandbox sent, with each server's answer. */
const webhooks: { transactionId: string; status: string; answers: Partial<Record<Backend, number>> }[] = [];

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/** Sends one request and answers its status (the raw body as given; no client reformats it). */
function post(url: string, body: Buffer, headers: Record<string, string>): Promise<number> {
  return new Promise((done, fail) => {
    const req = httpRequest(url, { method: 'POST', headers: { ...headers, 'Content-Length': String(body.length) } }, (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode ?? 0));
    });
    req.on('error', fail);
    req.end(body);
  });
}

/** Passes each webhook, unchanged, to every running server; 200 only when all of them took it. */
function startFanout(): Promise<string> {
  fanout = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const headers: Record<string, string> = { 'Content-Type': String(req.headers['content-type'] ?? '') };
      for (const name of ['x-signature', 'x-event-id']) if (typeof req.headers[name] === 'string') headers[name] = req.headers[name];
      let payload: { transactionId?: string; status?: string } = {};
      try {
        payload = JSON.parse(body.toString('utf8')) as typeof payload;
      } catch {
        // recorded with empty fields; the servers answer it
      }
      const record = { transactionId: payload.transactionId ?? '', status: payload.status ?? '', answers: {} as Partial<Record<Backend, number>> };
      webhooks.push(record);
      void Promise.all(
        [...servers].map(async ([name, server]) => {
          record.answers[name] = await post(`${server.url}/paylater/webhook`, body, headers).catch(() => 0);
        }),
      ).then(() => {
        const ok = Object.values(record.answers).every((status) => status === 200);
        res.writeHead(ok ? 200 : 502).end();
      });
    });
  });
  return new Promise((done) => fanout?.listen(0, '127.0.0.1', () => done(`http://127.0.0.1:${(fanout?.address() as AddressInfo).port}`)));
}

/** The environment of the project's programs: the test's own, without any sandbox setting. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PAYLATER_')));
  return { ...env, ...extra };
}

/** `npx paylater sandbox ...` in the project; answers once its banner names the address. */
async function startSandbox(args: string[]): Promise<NonNullable<typeof sandbox>> {
  const child = spawn(join(project, 'node_modules', '.bin', 'paylater'), ['sandbox', ...args], { cwd: project, env: cleanEnv({}), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = await new Promise<string>((done, fail) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const found = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (found?.[1] !== undefined) done(found[1]);
    });
    child.once('exit', (code) => fail(new Error(`paylater sandbox exited (${code}):\n${output}`)));
  });
  return { url, child, output: () => output };
}

/** Starts a process in the project and waits until `url` answers its page. */
async function startServer(name: Backend, command: string, args: string[], port: number): Promise<void> {
  const env = cleanEnv({ PORT: String(port), PAYLATER_BASE_URL: sandbox?.url ?? '' });
  const child = spawn(command, args, { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  servers.set(name, { child, url, output: () => output });
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null) throw new Error(`${name} server exited (${child.exitCode}):\n${output}`);
    const answer = await fetch(`${url}/`).catch(() => undefined);
    if (answer?.status === 200) return;
    if (attempt > 150) throw new Error(`${name} server did not answer on ${url}:\n${output}`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

beforeAll(async () => {
  mkdirSync(imagesDir, { recursive: true });
  work = mkdtempSync(join(tmpdir(), 'paylater-guide-'));

  // The package as a merchant installs it: packed from a fresh copy, installed into an empty project.
  const clone = join(work, 'clone');
  cpSync(root, clone, {
    recursive: true,
    filter: (source) => {
      const path = relative(root, source);
      return path === '' || (!NOT_IN_A_CLONE.has(path.split(sep)[0] as string) && !path.endsWith('.tgz'));
    },
  });
  symlinkSync(join(root, 'node_modules'), join(clone, 'node_modules'), 'junction');
  execFileSync(npm, ['pack', '--silent', '--pack-destination', work], { cwd: clone, stdio: 'pipe' });
  rmSync(clone, { recursive: true, force: true });
  const tarball = readdirSync(work).find((name) => name.endsWith('.tgz'));
  if (tarball === undefined) throw new Error('npm pack produced no tarball');
  project = join(work, 'shop');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'shop', private: true, type: 'module' }));
  execFileSync(npm, ['install', '--no-audit', '--no-fund', '--prefer-offline', join(work, tarball)], { cwd: project, stdio: 'pipe' });
  for (const [name, text] of files) writeFileSync(join(project, name), text);

  const hook = await startFanout();
  sandbox = await startSandbox(['--port', '0', '--web-webhook-url', `${hook}/paylater/webhook`]);
  await startServer('node', process.execPath, ['server.mjs'], await freePort());
  const phpPort = await freePort();
  await startServer('php', 'php', ['-S', `127.0.0.1:${phpPort}`, 'shop.php'], phpPort);
  await startServer('python', 'python3', ['shop.py'], await freePort());
  browser = await launchChromium();
}, 300_000);

afterAll(async () => {
  try {
    await browser?.close();
  } finally {
    const children = [...[...servers.values()].map((server) => server.child), ...(sandbox ? [sandbox.child] : [])];
    await Promise.all(
      children.map((child) => (child.exitCode !== null ? undefined : new Promise((done) => child.once('exit', done).kill()))),
    );
    await new Promise<void>((done) => (fanout ? fanout.close(() => done()) : done()));
    if (work) rmSync(work, { recursive: true, force: true });
  }
});

function server(name: Backend): Running {
  const running = servers.get(name);
  if (running === undefined || !browser || !sandbox) throw new Error(`the ${name} server, the sandbox or the browser did not start`);
  return running;
}

interface Visit {
  context: BrowserContext;
  page: Page;
  problems: string[];
}

/** A fresh browser context, with everything that goes wrong on its pages. */
async function visit(url: string): Promise<Visit> {
  if (!browser || !sandbox) throw new Error('the browser or the sandbox did not start');
  const context = await browser.newContext({ viewport: { width: 760, height: 400 } });
  const result: Visit = { context, page: undefined as unknown as Page, problems: [] };
  context.on('page', (page) => {
    page.on('console', (message) => {
      // The browser's own request for /favicon.ico, which the guide's servers answer 404, is not the page's.
      if (message.type() === 'error' && !message.location().url.endsWith('/favicon.ico')) {
        result.problems.push(`console error on ${page.url()}: ${message.text()} (${message.location().url})`);
      }
    });
    page.on('pageerror', (error) => result.problems.push(`page error on ${page.url()}: ${error.message}`));
  });
  context.on('requestfailed', (request) => result.problems.push(`failed request: ${request.url()} (${request.failure()?.errorText})`));
  context.on('response', (response) => {
    if (response.status() >= 400) result.problems.push(`HTTP ${response.status()} for ${response.url()}`);
  });
  context.on('request', (request) => {
    if (!/^http:\/\/127\.0\.0\.1:\d+\//.test(request.url()) && request.url() !== 'about:blank') {
      result.problems.push(`request to another host: ${request.url()}`);
    }
  });
  result.page = await context.newPage();
  await result.page.goto(url, { waitUntil: 'load' });
  return result;
}

async function shot(page: Page, name: string | undefined): Promise<void> {
  if (name !== undefined) await page.screenshot({ path: join(imagesDir, `web-checkout-${name}.png`) });
}

/** The one-time password and the down payment on the hosted page; answers when it shows the result. */
async function payOnHostedPage(page: Page, shots: boolean): Promise<void> {
  await page.waitForSelector('#otp');
  await shot(page, shots ? 'otp' : undefined);
  await page.fill('#otp', '123456');
  await page.press('#otp', 'Enter');
  await page.waitForSelector('#step-pay:not([hidden])');
  await shot(page, shots ? 'down-payment' : undefined);
  // In a popup the page closes its window after the result; on the page itself it moves on.
  const held = (await page.opener()) === null ? undefined : await holdClose(page);
  await page.click('#pay-submit');
  await page.waitForSelector('#step-result:not([hidden])');
  expect(await page.locator('#result-title').innerText()).toBe('Payment confirmed');
  await shot(page, shots ? 'success' : undefined);
  await held?.closes();
}

function webhookAnswers(id: string) {
  return webhooks.find((event) => event.transactionId === id);
}

describe('the guide', () => {
  it('gives every file of the project as a fenced block', () => {
    expect([...files.keys()].sort()).toEqual(['checkout.html', 'initiate.sh', 'redirect-flow.js', 'refund.mjs', 'server.mjs', 'shop.php', 'shop.py', 'status.sh']);
    const markdown = readFileSync(GUIDE, 'utf8');
    for (const image of ['shop', 'otp', 'down-payment', 'success', 'confirmed']) {
      expect(markdown).toContain(`](images/web-checkout-${image}.png)`);
    }
    // Every parameter of the browser script has its row in the guide's table, and the page uses it.
    const parameters = ['btnSelector', 'type', 'getTransactionId', 'partnerId', 'amount', 'phoneNumber', 'successCallback', 'failureCallback', 'redirectUrl', 'redirectFailureCallback'];
    for (const name of parameters) {
      expect(markdown).toContain(`| \`${name}\` |`);
      expect(`${files.get('checkout.html')}${files.get('redirect-flow.js')}`).toContain(`${name}`);
    }
  });
});

describe.each(BACKENDS.map((name) => [name] as const))('the %s server of the guide', (name) => {
  it('takes a purchase in the popup flow: callback and status signatures verified, notes.webhook_url answered by the status check, webhook taken', async () => {
    const shop = server(name);
    const shots = name === 'node';
    const v = await visit(`${shop.url}/`);
    try {
      await shot(v.page, shots ? 'shop' : undefined);
      const opened = v.page.waitForEvent('popup');
      await v.page.click('#pay-later');
      const popup = await opened;
      await popup.setViewportSize({ width: 460, height: 760 });
      await popup.waitForURL(/\/checkout\/order_/);
      const closed = popup.waitForEvent('close');
      await payOnHostedPage(popup, shots);
      await closed;
      await expect.poll(() => v.page.locator('#result').innerText()).toBe('Thank you! Your order is confirmed.');
      await shot(v.page, shots ? 'confirmed' : undefined);
      const id = (await v.page.evaluate('transactionId')) as string;
      expect(id).toMatch(/^order_[0-9a-f]{32}$/);
      expect(shop.output()).toContain(`order ${id}: SUCCESS, callback signature true, status signature true`);
      await expect.poll(() => shop.output()).toContain(`notes ${id}: SUCCESS, status signature true`);
      await expect.poll(() => webhookAnswers(id)?.answers[name]).toBe(200);
      expect(webhookAnswers(id)?.status).toBe('SUCCESS');
      await expect.poll(() => shop.output()).toMatch(new RegExp(`webhook evt_\\w+: ${id} SUCCESS`));
      expect(v.problems).toEqual([]);
    } finally {
      await v.context.close();
    }
  });

  it('refuses a forged callback signature and a forged webhook', async () => {
    const shop = server(name);
    const id = `order_forged_${name}`;
    // An initiated transaction, still pending, and a callback claiming SUCCESS signed with another key.
    const body = JSON.stringify({ id, amount: 150000, user: { name: 'Asha Rao', phoneNumber: '+919000000001' } });
    const initiated = await fetch(`${sandbox?.url}/api/transaction`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Partner-Id': 'partner_test', 'X-Signature': webSignature(body, '/api/transaction', KEY) },
      body,
    });
    expect(initiated.status).toBe(200);
    const forged = statusSignature(id, 'SUCCESS', 'not_the_key');
    const order = await fetch(`${shop.url}/api/orders/${id}?status=SUCCESS&signature=${encodeURIComponent(forged)}`);
    expect(order.status).toBe(200);
    expect(await order.json()).toEqual({ transactionId: id, status: 'PENDING', paid: false, callbackVerified: false });

    const event = Buffer.from(JSON.stringify({ transactionId: id, status: 'SUCCESS', signature: statusSignature(id, 'SUCCESS', KEY) }));
    const headers = { 'Content-Type': 'application/json', 'X-Event-Id': `evt_${'0'.repeat(31)}1` };
    // Signed with another key; then the right X-Signature over a body whose status signature is wrong.
    expect(await post(`${shop.url}/paylater/webhook`, event, { ...headers, 'X-Signature': sdkSignature(event, 'not_the_key') })).toBe(401);
    const wrongInside = Buffer.from(JSON.stringify({ transactionId: id, status: 'SUCCESS', signature: forged }));
    expect(await post(`${shop.url}/paylater/webhook`, wrongInside, { ...headers, 'X-Signature': sdkSignature(wrongInside, KEY) })).toBe(401);
    // A call to notes.webhook_url signed with another key.
    const form = Buffer.from(`txnId=${id}&txnStatus=SUCCESS`);
    const notesHeaders = { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Signature': sdkSignature(form, 'not_the_key') };
    expect(await post(`${shop.url}/paylater/notes?txnId=${id}&txnStatus=SUCCESS`, form, notesHeaders)).toBe(401);
    expect(shop.output()).not.toContain(`${id} SUCCESS`);
    expect(shop.output()).not.toContain(`notes ${id}`);
  });
});

describe('the failures the guide\'s page handles', () => {
  it('Cancel on the hosted page: the order is not paid, the callback signature verified, the webhook CANCELLED', async () => {
    const shop = server('node');
    const v = await visit(`${shop.url}/`);
    try {
      const opened = v.page.waitForEvent('popup');
      await v.page.click('#pay-later');
      const popup = await opened;
      await popup.waitForSelector('#otp');
      const closed = popup.waitForEvent('close');
      await popup.click('#cancel');
      await closed;
      await expect.poll(() => v.page.locator('#result').innerText()).toBe('Your order was not paid (CANCELLED).');
      const id = (await v.page.evaluate('transactionId')) as string;
      expect(shop.output()).toContain(`order ${id}: CANCELLED, callback signature true, status signature true`);
      await expect.poll(() => shop.output()).toContain(`notes ${id}: CANCELLED, status signature true`);
      await expect.poll(() => webhookAnswers(id)?.status).toBe('CANCELLED');
      expect(v.problems).toEqual([]);
    } finally {
      await v.context.close();
    }
  });

  it('no transaction id from the server: GET_TXN_ID_FAILED, and the page asks to try again', async () => {
    const shop = server('node');
    const v = await visit(`${shop.url}/`);
    try {
      await v.page.route('**/api/checkout', (route) => route.fulfill({ status: 502, contentType: 'application/json', body: '{"error":"initiate failed"}' }));
      const opened = v.page.waitForEvent('popup');
      await v.page.click('#pay-later');
      const popup = await opened;
      if (!popup.isClosed()) await popup.waitForEvent('close');
      await expect.poll(() => v.page.locator('#result').innerText()).toBe('We could not start the payment. Please try again.');
      // The refused /api/checkout is the one failed request (the console names its status only).
      expect(v.problems.filter((problem) => !/\/api\/checkout|status of 502/.test(problem))).toEqual([]);
    } finally {
      await v.context.close();
    }
  });
});

describe('the redirect flow of the guide', () => {
  it('redirect-flow.js replaces the popup call: the shopper pays on the hosted page and comes back with tid', async () => {
    const shop = server('node');
    const v = await visit(`${shop.url}/`);
    try {
      await v.page.addScriptTag({ content: files.get('redirect-flow.js') ?? '' });
      await v.page.click('#pay-later');
      await v.page.waitForURL(/\/checkout\/order_/);
      const id = decodeURIComponent(new URL(v.page.url()).pathname.split('/').pop() ?? '');
      expect(new URL(v.page.url()).origin).toBe(sandbox?.url);
      await payOnHostedPage(v.page, false);
      await v.page.waitForURL(`${shop.url}/?tid=${id}`);
      await expect.poll(() => v.page.locator('#result').innerText()).toBe('Thank you! Your order is confirmed.');
      expect(shop.output()).toContain(`order ${id}: SUCCESS, callback signature null, status signature true`);
      expect(v.problems).toEqual([]);
    } finally {
      await v.context.close();
    }
  });
});

describe('the shell scripts of the guide', () => {
  /** Runs a script of the project with sh (without blocking: the webhooks' fan-out answers in this process). */
  async function sh(script: string, args: string[] = []): Promise<string[]> {
    const child = spawn('sh', [script, ...args], { cwd: project, env: cleanEnv({ PAYLATER_BASE_URL: sandbox?.url ?? '' }) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const status = await new Promise<number | null>((done) => child.once('close', done));
    expect(stderr).toBe('');
    expect(status).toBe(0);
    return stdout.trim().split('\n');
  }

  it('initiate.sh starts a transaction; after the hosted page, status.sh reads SUCCESS and checks both signatures', async () => {
    server('node');
    const [id, answer] = (await sh('initiate.sh')) as [string, string];
    expect(id).toMatch(/^order_[0-9a-f]{32}$/);
    const initiated = JSON.parse(answer) as { message: string; redirectUrl: string };
    expect(initiated).toEqual({ message: 'TRANSACTION_INITIATED', redirectUrl: `${sandbox?.url}/checkout/${id}` });

    expect((await sh('status.sh', [id])).slice(1)).toEqual(['status PENDING, signature verified']);

    const v = await visit(initiated.redirectUrl);
    try {
      await payOnHostedPage(v.page, false);
    } finally {
      await v.context.close();
    }
    const [json, ...lines] = await sh('status.sh', [id, statusSignature(id, 'SUCCESS', KEY)]);
    expect(JSON.parse(json as string)).toEqual({ transactionId: id, status: 'SUCCESS', signature: statusSignature(id, 'SUCCESS', KEY) });
    expect(lines).toEqual(['status SUCCESS, signature verified', 'callback signature verified']);
    expect((await sh('status.sh', [id, statusSignature(id, 'FAILURE', KEY)])).slice(1)).toEqual(['status SUCCESS, signature verified', 'callback signature NOT verified']);
    // Every server of the guide took this purchase's webhook too.
    await expect.poll(() => webhookAnswers(id)?.answers).toEqual({ node: 200, php: 200, python: 200 });
  });
});

describe('the guide with every port moved', () => {
  /** The guide's step 1 from its `export` lines: the settings and the command that starts the sandbox. */
  const steps = (/^```sh\n[\s\S]*?(^export PAYLATER_PORT=[\s\S]*?)^```$/m.exec(readFileSync(GUIDE, 'utf8'))?.[1] ?? '').trimEnd();

  /** Runs lines of the guide's shell with bash in the project; answers once `ready` answers 200. */
  async function run(script: string, ready: string): Promise<{ child: ChildProcess; output: () => string }> {
    const child = spawn('bash', ['-c', script], { cwd: project, env: cleanEnv({}), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    for (let attempt = 0; (await fetch(ready).catch(() => undefined))?.status !== 200; attempt++) {
      if (child.exitCode !== null || attempt > 300) throw new Error(`${script} did not start:\n${output}`);
      await new Promise((done) => setTimeout(done, 100));
    }
    return { child, output: () => output };
  }

  it('one edit, the export line, moves the sandbox and the shop: the page, the calls and the webhook follow', async () => {
    const [sandboxPort, shopPort] = [await freePort(), await freePort()];
    const moved = steps.replace(/^export PAYLATER_PORT=4000 PORT=3000\b/m, `export PAYLATER_PORT=${sandboxPort} PORT=${shopPort}`);
    expect(moved).not.toBe(steps);
    const settings = moved.split('\n').filter((line) => line.startsWith('export ')).join('\n');
    const started: { child: ChildProcess }[] = [];
    try {
      started.push(await run(moved, `http://127.0.0.1:${sandboxPort}/sdk.js`));
      const shop = await run(`${settings}\nexec node server.mjs`, `http://127.0.0.1:${shopPort}/`);
      started.push(shop);
      const page = await (await fetch(`http://127.0.0.1:${shopPort}/`)).text();
      expect(page).toContain(`<script src="http://127.0.0.1:${sandboxPort}/sdk.js"></script>`);
      const v = await visit(`http://127.0.0.1:${shopPort}/`);
      try {
        const opened = v.page.waitForEvent('popup');
        await v.page.click('#pay-later');
        const popup = await opened;
        await popup.waitForURL(`http://127.0.0.1:${sandboxPort}/checkout/**`);
        const closed = popup.waitForEvent('close');
        await payOnHostedPage(popup, false);
        await closed;
        await expect.poll(() => v.page.locator('#result').innerText()).toBe('Thank you! Your order is confirmed.');
        const id = (await v.page.evaluate('transactionId')) as string;
        // The sandbox's call to notes.webhook_url reached the shop on its moved port, checked by the status.
        await expect.poll(() => shop.output()).toContain(`notes ${id}: SUCCESS, status signature true`);
        expect(v.problems).toEqual([]);
      } finally {
        await v.context.close();
      }
    } finally {
      for (const { child } of started) if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGTERM');
    }
  });
});
