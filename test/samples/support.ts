/**
 * Helpers of the code-sample tests: the samples as the bundles carry them (`x-codeSamples`), what
 * each program must print, an in-process sandbox on a free port, a runner for one program, and real
 * webhooks made by the sandbox to feed the receivers. Each language has its own test file, which
 * runs every sample of that language against its own sandbox.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'vitest';
import { FAMILIES, type Family } from '../../scripts/families.js';
import { trigger } from '../../src/cli/trigger.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { startOnFreePort, stopChild } from '../support/processes.js';

export const ROOT = resolve(import.meta.dirname, '..', '..');

/** The tabs every operation and webhook must have, in order. */
export const LABELS = ['curl', 'Node', 'PHP', 'Python'] as const;
export type Label = (typeof LABELS)[number];

export interface Sample {
  family: Family;
  kind: 'operation' | 'webhook';
  /** The operationId (operations and webhooks alike). */
  operationId: string;
  /** The webhook's name (webhooks only). */
  webhook?: string;
  label: string;
  lang: string;
  source: string;
}

/** Every `x-codeSamples` entry of the four bundles, and the operations and webhooks without any. */
export function bundledSamples(): { samples: Sample[]; entries: { family: Family; kind: 'operation' | 'webhook'; operationId: string; webhook?: string; labels: string[] }[] } {
  const samples: Sample[] = [];
  const entries: { family: Family; kind: 'operation' | 'webhook'; operationId: string; webhook?: string; labels: string[] }[] = [];
  for (const family of FAMILIES) {
    const document = JSON.parse(readFileSync(join(ROOT, 'generated', 'openapi', `${family}.json`), 'utf8'));
    const visit = (kind: 'operation' | 'webhook', operation: any, webhook?: string) => {
      const list: any[] = operation['x-codeSamples'] ?? [];
      entries.push({ family, kind, operationId: operation.operationId, ...(webhook ? { webhook } : {}), labels: list.map((sample) => sample.label) });
      for (const sample of list) {
        samples.push({ family, kind, operationId: operation.operationId, ...(webhook ? { webhook } : {}), label: sample.label, lang: sample.lang, source: sample.source });
      }
    };
    for (const item of Object.values<any>(document.paths)) {
      for (const operation of Object.values<any>(item)) {
        if (operation && typeof operation === 'object' && typeof operation.operationId === 'string') visit('operation', operation);
      }
    }
    for (const [name, item] of Object.entries<any>(document.webhooks ?? {})) visit('webhook', item.post, name);
  }
  return { samples, entries };
}

export function samplesOf(label: Label): Sample[] {
  return bundledSamples().samples.filter((sample) => sample.label === label);
}

// ---------------------------------------------------------------------------------------------
// What each operation's program prints: `HTTP <status>`, then these fields in this order.

const ID = (prefix: string) => new RegExp(`^${prefix}_[0-9a-f]{8}$`);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SIGNATURE = /^[A-Za-z0-9+/]{43}=$/;

export const EXPECTED: Record<string, { status: number; fields: [string, string | RegExp][] }> = {
  createMerchant: { status: 201, fields: [['merchant.id', ID('merchant_acme_01')], ['merchant.stage', 'documentsPending']] },
  getMerchantConfiguration: { status: 200, fields: [['version', '2'], ['maxOrderAmount', '10000000']] },
  getMerchant: { status: 200, fields: [['merchant.id', ID('merchant_acme_01')], ['merchant.stage', 'documentsPending']] },
  uploadMerchantDocument: {
    status: 200,
    fields: [['merchant.stage', 'documentsPending'], ['merchant.documents.0.documentType', 'PAN'], ['merchant.documents.0.status', 'uploaded']],
  },
  disableMerchant: { status: 200, fields: [['merchant.id', ID('merchant_acme_01')], ['merchant.stage', 'disabled']] },
  createDashboardAccess: {
    status: 201,
    fields: [['dashboardAccess.email', 'priya.shah@acme.example.in'], ['dashboardAccess.loginUrl', /\/sandbox\/gateway\/dashboard\/invitations\/[0-9a-f]+$/]],
  },
  checkPreEligibility: { status: 200, fields: [['preEligibilityCheck.id', UUID], ['preEligibilityCheck.eligible', 'true']] },
  createTransaction: { status: 200, fields: [['transaction.id', ID('txn_20261122_0001')], ['transaction.status', 'PENDING']] },
  listTransactions: {
    status: 200,
    fields: [['transactions.0.id', ID('txn_20261122_0001')], ['transactions.0.status', 'PENDING'], ['nextCursor', 'null']],
  },
  getTransaction: {
    status: 200,
    fields: [['transaction.id', ID('txn_20261122_0001')], ['transaction.status', 'PENDING'], ['transactionStage.nextStep.step', 'authenticate']],
  },
  submitUserInput: {
    status: 200,
    fields: [['transaction.status', 'PENDING'], ['transactionStage.nextStep.step', 'payment'], ['transactionStage.nextStep.options.paymentOptions.amount', '37500']],
  },
  registerExternalPayment: {
    status: 200,
    fields: [['transaction.status', 'PENDING'], ['transaction.downPayment.amount', '37500'], ['transactionStage.nextStep.step', 'wait']],
  },
  refundTransaction: { status: 200, fields: [['refund.id', ID('rfnd_0001')], ['refund.amount', '50000'], ['refund.status', 'PENDING']] },
  cancelTransaction: {
    status: 200,
    fields: [['transaction.id', ID('txn_20261122_0001')], ['transaction.status', 'CANCELLED'], ['transaction.failureReason', 'CANCELLED_BY_MERCHANT']],
  },
  getSettlement: {
    status: 200,
    fields: [['settlements.0.settlementDate', /^\d{4}-\d{2}-\d{2}$/], ['settlements.0.grossAmount', /^[1-9]\d*$/], ['settlements.0.status', 'PENDING']],
  },
  getCreditInfo: {
    status: 200,
    fields: [['registrationStatus', 'registered'], ['creditLimit', '5000000'], ['creditTaken', '1250000'], ['upcomingDueDate', /^05\/\d{2}\/\d{4}$/]],
  },
  pushIdentification: { status: 200, fields: [['message', 'ok']] },
  pushMerchantData: { status: 200, fields: [['message', 'ok']] },
  initiateWebTransaction: { status: 200, fields: [['message', 'TRANSACTION_INITIATED'], ['redirectUrl', /\/checkout\/web_20261122_0007_[0-9a-f]{8}$/]] },
  getWebTransactionStatus: {
    status: 200,
    fields: [['transactionId', ID('web_20261122_0007')], ['status', 'PENDING'], ['signature', SIGNATURE], ['signature valid', 'true']],
  },
  refundWebTransaction: { status: 200, fields: [['message', 'ok']] },
  downloadBrowserScript: { status: 200, fields: [['content-type', /^application\/javascript/]] },
  initiateSdkTransaction: { status: 201, fields: [['message', 'TRANSACTION_INITIATED']] },
  checkSdkTransactionStatus: { status: 200, fields: [['message', 'PENDING']] },
  refundSdkTransaction: { status: 200, fields: [['message', 'ok']] },
};

/** Checks a program's output: `HTTP <status>` first, then exactly the expected fields in order. */
export function expectOutput(operationId: string, output: string): void {
  const expected = EXPECTED[operationId];
  expect(expected, `no expectation for ${operationId}`).toBeDefined();
  const lines = output.trimEnd().split('\n');
  expect(lines[0], output).toBe(`HTTP ${expected!.status}`);
  const fields = lines.slice(1).map((line) => {
    const at = line.indexOf(': ');
    return [line.slice(0, at), line.slice(at + 2)] as const;
  });
  expect(fields.map(([name]) => name), output).toEqual(expected!.fields.map(([name]) => name));
  expected!.fields.forEach(([name, value], index) => {
    const printed = fields[index]![1];
    if (typeof value === 'string') expect(printed, `${operationId} ${name}`).toBe(value);
    else expect(printed, `${operationId} ${name}`).toMatch(value);
  });
}

// ---------------------------------------------------------------------------------------------
// Running the programs.

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a program to its end (at most `timeoutMs`); its environment is the test's plus `env`, or
 * `env` alone with `clean` (nothing of the test's own settings leaks into it).
 */
export function runProgram(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string>; clean?: boolean; input?: string; timeoutMs?: number },
): Promise<Run> {
  return new Promise((done, fail) => {
    const env = options.clean ? { ...options.env } : { ...process.env, ...options.env };
    const child = spawn(command, args, { cwd: options.cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
    child.stdin.on('error', () => {}); // a program that stops early does not read its input
    child.stdin.end(options.input ?? '');
  });
}

/** A temporary folder for the programs, removed by `cleanup`. */
export function workFolder(label: string): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), `paylater-samples-${label.toLowerCase()}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A folder where `import ... from 'paylater-api'` finds this repository's sources, run through tsx:
 * the Node samples import the package as an integrator does, without a build.
 */
export function nodeProject(dir: string): { command: string; args: (file: string) => string[] } {
  const pkg = join(dir, 'node_modules', 'paylater-api');
  mkdirSync(pkg, { recursive: true });
  symlinkSync(join(ROOT, 'src'), join(pkg, 'src'), 'junction');
  symlinkSync(join(ROOT, 'generated'), join(pkg, 'generated'), 'junction');
  writeFileSync(
    join(pkg, 'package.json'),
    JSON.stringify({ name: 'paylater-api', type: 'module', exports: { '.': { types: './src/index.ts', default: './src/index.ts' } } }),
  );
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'samples', private: true, type: 'module' }));
  // For `tsc -p`: the programs checked as JavaScript against the package's types, as an editor does.
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        ...JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')).compilerOptions,
        allowJs: true,
        checkJs: true,
        noImplicitAny: false,
        typeRoots: [join(ROOT, 'node_modules', '@types')],
      },
      include: ['**/*.mjs'],
      exclude: ['node_modules'],
    }),
  );
  const loader = pathToFileURL(join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
  return { command: process.execPath, args: (file) => ['--import', loader, file] };
}

// ---------------------------------------------------------------------------------------------
// The sandbox and its webhooks.

export interface SampleSandbox {
  sandbox: Sandbox;
  url: string;
  close(): Promise<void>;
}

export async function startSandbox(): Promise<SampleSandbox> {
  const quiet = { info: () => {}, warn: () => {}, error: (message: string) => console.error(`sandbox: ${message}`) };
  const sandbox = await createSandbox({ logger: quiet });
  const url = await sandbox.listen(0, '127.0.0.1');
  return { sandbox, url, close: () => sandbox.close() };
}

/** A webhook the sandbox recorded: the exact body and headers it signed. */
export interface RecordedWebhook {
  body: string;
  headers: Record<string, string>;
  eventId: string;
  /** The merchant's Transactional API password (gateway webhooks' key). */
  transactionalPassword?: string;
}

/** The gateway merchant the flows use (`paylater trigger`'s own). */
const TRIGGER_MERCHANT = 'paylater_trigger';

const FLOW: Record<string, string> = {
  'sdk/transactionStatus': 'sdk.success',
  'web/transactionStatus': 'web.success',
  'gateway/transactionUpdated': 'gateway.refund',
  'gateway/refundUpdated': 'gateway.refund',
};

/** Plays a flow on the sandbox (as `paylater trigger` does) and answers the webhook it recorded. */
export async function recordWebhook(running: SampleSandbox, family: Family, webhook: string): Promise<RecordedWebhook> {
  const event = FLOW[`${family}/${webhook}`];
  if (event === undefined) throw new Error(`no flow makes ${family}/${webhook}`);
  const lines: string[] = [];
  const settings = { sandbox: running.url, partnerId: undefined, keyFile: undefined, merchant: TRIGGER_MERCHANT, merchantApiUsername: undefined, webhookUrl: undefined };
  const code = await trigger(event, settings, { command: 'paylater trigger', out: (line) => lines.push(line) });
  if (code !== 0) throw new Error(`trigger ${event} failed:\n${lines.join('\n')}`);
  const recorded = running.sandbox.deliveries.page({ family: family as 'sdk' | 'web' | 'gateway', limit: 1000 }).deliveries.filter((delivery) => delivery.event === webhook);
  const delivery = recorded.at(-1);
  if (delivery === undefined) throw new Error(`the sandbox recorded no ${family} ${webhook}:\n${lines.join('\n')}`);
  const result: RecordedWebhook = { body: delivery.body, headers: { ...delivery.headers }, eventId: delivery.eventId };
  if (family === 'gateway') {
    const answer = await fetch(`${running.url}/api/merchant/${TRIGGER_MERCHANT}`, {
      headers: { Authorization: `Basic ${Buffer.from('pg_test:pg_test_secret').toString('base64')}` },
    });
    result.transactionalPassword = ((await answer.json()) as any).merchant.basicAuthDetails.password;
  }
  return result;
}

/** The values a receiver must print for a verified body, by the field names it prints. */
export function payloadField(body: string, name: string): string {
  const value = name.split('.').reduce((node: any, key) => node?.[key], JSON.parse(body));
  return String(value);
}

/** A receiver listening on a free port, its output so far, and how to stop it. */
export interface RunningReceiver {
  url: string;
  output(): string;
  stop(): Promise<void>;
}

export async function startReceiver(
  start: (port: number) => { command: string; args: string[] },
  options: { cwd: string; env?: Record<string, string> },
): Promise<RunningReceiver> {
  const { port, child, output } = await startOnFreePort(
    (port) => {
      const { command, args } = start(port);
      return spawn(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    },
    { probe: (port) => `http://127.0.0.1:${port}/paylater/webhook`, timeoutMs: 30_000 },
  );
  return { url: `http://127.0.0.1:${port}/paylater/webhook`, output, stop: () => stopChild(child) };
}

/** Sends a webhook to a receiver as the sandbox does. */
export async function deliver(url: string, body: string, headers: Record<string, string>): Promise<number> {
  const answer = await fetch(url, { method: 'POST', body, headers });
  await answer.arrayBuffer();
  return answer.status;
}

/** The same webhook with its body changed by one byte, and the headers as they were. */
export function tampered(webhook: RecordedWebhook): RecordedWebhook {
  return { ...webhook, body: webhook.body.replace(/}$/, ' }') };
}

/** Waits until `predicate` holds for the receiver's output (it prints after answering). */
export async function outputWith(receiver: { output(): string }, predicate: (output: string) => boolean): Promise<string> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (predicate(receiver.output())) return receiver.output();
    await new Promise((done) => setTimeout(done, 50));
  }
  return receiver.output();
}

// ---------------------------------------------------------------------------------------------
// The suite every language runs.

export interface LanguageRunner {
  label: Label;
  /** Prepares the work folder (the Node samples' package). */
  prepare?(dir: string): void;
  /** The command that runs an operation's program saved as `file`. */
  run(file: string): { command: string; args: string[] };
  /** How its webhook receivers are run: as a server on `port`, or as a CGI script. */
  receiver: { server(file: string, port: number): { command: string; args: string[] } } | { cgi(file: string): { command: string; args: string[] } };
  /** The file name of each kind of program. */
  files: { operation: string; webhook: string };
}

export function sampleFile(dir: string, sample: Sample, name: string): string {
  const folder = join(dir, `${sample.family}-${sample.webhook ?? sample.operationId}`);
  mkdirSync(folder, { recursive: true });
  const file = join(folder, name);
  writeFileSync(file, sample.source);
  return file;
}
