/**
 * The workflow runner's core: runs every Arazzo workflow of `openapi/workflows/` with
 * `redocly respect` (a child process) against a server, and reports each workflow and step.
 *
 * - The web and SDK requests go through a local signing proxy (./signing-proxy.ts) that adds
 *   `X-Signature` over the exact bytes with src/signature.ts; HTTP Basic is respect's own
 *   (`x-security`).
 * - The sandbox is recognised by its clock (`GET /sandbox/clock`); there the steps on the
 *   `sandbox` source (./../../openapi/workflows/sandbox-controls.yaml) play the user and move time.
 *   Against anything else the workflows end before those steps, and the rest is reported skipped.
 * - Inputs (ids, credentials, the expected signatures computed here) reach respect only through
 *   the environment of the child (`REDOCLY_CLI_RESPECT_INPUT`), never its command line, and no
 *   secret is printed: respect masks them in its log, and the report carries no request.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { FAMILIES, isFamily, type Family } from '../../src/contract/index.js';
import { APPROVED_TEST_USER, TEST_CREDENTIALS, TEST_OTP } from '../../src/sandbox/fixtures.js';
import { sdkSignature, statusSignature } from '../../src/signature.js';
import { readWorkflows, WORKFLOWS_DIR, workflowFiles, type Workflow } from './documents.js';
import { buildResults, type RespectLog, type WorkflowResult } from './report.js';
import { startSigningProxy, type SigningProxy } from './signing-proxy.js';

/** The runner could not run (bad options, missing credentials, respect did not start). */
export class WorkflowsError extends Error {
  override readonly name = 'WorkflowsError';
}

export interface BasicCredentials {
  username: string;
  password: string;
}

export interface WorkflowsOptions {
  /** The base URL of each family's server. */
  servers: Record<Family, string>;
  /** Where the sandbox controls are, when the server is the sandbox (default: the gateway's server). */
  controls?: string;
  /** True or false to decide; undefined: probe `GET <controls>/sandbox/clock`. */
  sandbox?: boolean;
  merchantApi?: BasicCredentials;
  extras?: BasicCredentials;
  partnerId?: string;
  privateKey?: string;
  /** The user of the gateway and extras workflows (default: the sandbox's approved test user). */
  phoneNumber?: string;
  /** Prefix of the ids the run creates (default: a fresh one). */
  runId?: string;
  /** The Arazzo documents (default `openapi/workflows/`). */
  dir?: string;
  /** respect's own output, for troubleshooting (it masks secrets). */
  onRespectOutput?: (chunk: string) => void;
}

export interface WorkflowsReport {
  sandbox: boolean;
  runId: string;
  /** Notes on how the run was set up (the credentials' origin, the sandbox). */
  notes: string[];
  workflows: WorkflowResult[];
  passed: number;
  failed: number;
  /** Steps skipped (real implementations only). */
  skippedSteps: number;
  durationMs: number;
}

/** A fresh run id: letters and digits, so `<runId>_<suffix>` is a valid id of every family (D24). */
function newRunId(): string {
  return `wf${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}

/** The servers of `--server URL` (every family) and `--server family=URL` (one), the latter winning. */
export function serversOf(values: readonly string[]): Record<Family, string> {
  let all: string | undefined;
  const one: Partial<Record<Family, string>> = {};
  for (const value of values) {
    const match = /^([A-Za-z]+)=(.+)$/.exec(value);
    if (match && isFamily(match[1])) one[match[1]] = match[2]!;
    else if (match) throw new WorkflowsError(`--server ${value}: the family must be one of ${FAMILIES.join(', ')}`);
    else all = value;
  }
  const servers = {} as Record<Family, string>;
  for (const family of FAMILIES) {
    const url = one[family] ?? all;
    if (url === undefined) throw new WorkflowsError(`no server for the ${family} family: give --server URL (every family) or --server ${family}=URL`);
    servers[family] = url;
  }
  return servers;
}

/** The sandbox's virtual time, or undefined when `base` is not the sandbox. */
async function probeSandbox(base: string): Promise<number | undefined> {
  try {
    const answer = await fetch(`${base}/sandbox/clock`, { signal: AbortSignal.timeout(5_000) });
    if (answer.status !== 200) return undefined;
    const body = (await answer.json()) as { nowMs?: unknown };
    return typeof body.nowMs === 'number' ? body.nowMs : undefined;
  } catch {
    return undefined;
  }
}

/** yyyy-mm-dd of an instant in India (IST, UTC+5:30), the settlement's calendar. */
export function istDate(ms: number): string {
  return new Date(ms + 330 * 60_000).toISOString().slice(0, 10);
}

const DAY_MS = 86_400_000;
const MAX_OUTPUT = 64 * 1024;

function cliPath(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('@redocly/cli/package.json')), 'bin', 'cli.js');
}

/** The credentials to use: the options', else the sandbox's published test values, else an error. */
function credentials(options: WorkflowsOptions, sandbox: boolean, notes: string[]) {
  const missing: string[] = [];
  const pick = <T>(given: T | undefined, fallback: T, names: string): T => {
    if (given !== undefined) return given;
    if (!sandbox) missing.push(names);
    return fallback;
  };
  const merchantApi = pick(options.merchantApi, TEST_CREDENTIALS.merchantApi, 'PAYLATER_MERCHANT_API_USERNAME and PAYLATER_MERCHANT_API_PASSWORD');
  const extras = pick(options.extras, TEST_CREDENTIALS.extras, 'PAYLATER_EXTRAS_USERNAME and PAYLATER_EXTRAS_PASSWORD');
  const partnerId = pick(options.partnerId, TEST_CREDENTIALS.partner.id, 'PAYLATER_PARTNER_ID');
  const privateKey = pick(options.privateKey, TEST_CREDENTIALS.partner.privateKey, 'PAYLATER_PRIVATE_KEY (or --key-file)');
  if (missing.length > 0) throw new WorkflowsError(`the server is not the sandbox, so its credentials are needed: set ${missing.join('; ')}`);
  const defaulted = [
    options.merchantApi === undefined && 'Merchant API',
    options.extras === undefined && 'extras',
    options.partnerId === undefined && 'partner id',
    options.privateKey === undefined && 'private key',
  ].filter(Boolean);
  if (defaulted.length > 0) notes.push(`the sandbox's published test credentials for: ${defaulted.join(', ')} (none given)`);
  return { merchantApi, extras, partnerId, privateKey };
}

/** Runs respect; resolves to its JSON log (or throws when there is none). */
async function runRespect(files: string[], servers: Record<string, string>, inputs: unknown, options: WorkflowsOptions): Promise<RespectLog> {
  const scratch = await mkdtemp(join(tmpdir(), 'paylater-workflows-'));
  const logPath = join(scratch, 'respect.json');
  let output = '';
  try {
    const args = [cliPath(), 'respect', ...files];
    for (const [name, url] of Object.entries(servers)) args.push('--server', `${name}=${url}`);
    args.push('--json-output', logPath, '--execution-timeout', String(10 * 60_000));
    const child = spawn(process.execPath, args, {
      cwd: options.dir ?? WORKFLOWS_DIR,
      env: {
        ...process.env,
        REDOCLY_CLI_RESPECT_INPUT: JSON.stringify(inputs),
        REDOCLY_TELEMETRY: 'off',
        REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
        NO_COLOR: '1',
        FORCE_COLOR: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const collect = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      options.onRespectOutput?.(text);
      output = (output + text).slice(-MAX_OUTPUT);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', () => resolve());
    });
    try {
      return JSON.parse(await readFile(logPath, 'utf8')) as RespectLog;
    } catch {
      const tail = output.trim().split('\n').slice(-15).join('\n');
      throw new WorkflowsError(`redocly respect wrote no log of the run; its last output:\n${tail}`);
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Runs every workflow against the servers of `options`. */
export async function runWorkflows(options: WorkflowsOptions): Promise<WorkflowsReport> {
  const started = performance.now();
  for (const [family, url] of Object.entries(options.servers)) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new WorkflowsError(`the ${family} server must be an absolute http(s) URL (got ${JSON.stringify(url)})`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new WorkflowsError(`the ${family} server must be an http(s) URL`);
    if (parsed.username !== '' || parsed.password !== '') {
      throw new WorkflowsError(`the ${family} server URL must not carry credentials: give them in the environment`);
    }
  }
  const trim = (url: string) => url.replace(/\/+$/, '');
  const servers = Object.fromEntries(Object.entries(options.servers).map(([family, url]) => [family, trim(url)])) as Record<Family, string>;
  const controls = trim(options.controls ?? servers.gateway);
  const notes: string[] = [];
  const clock = await probeSandbox(controls);
  const sandbox = options.sandbox ?? clock !== undefined;
  if (sandbox && clock === undefined) throw new WorkflowsError(`${controls}/sandbox/clock does not answer: the sandbox controls are not there`);
  const { merchantApi, extras, partnerId, privateKey } = credentials(options, sandbox, notes);
  const runId = options.runId ?? newRunId();
  const now = clock ?? Date.now();
  const transactionIds = { web: `${runId}_web`, sdk: `${runId}_sdk` };
  const sdkWebhookBody = JSON.stringify({ merchantTransactionId: transactionIds.sdk, status: 'SUCCESS' });
  const inputs = {
    runId,
    scope: runId,
    sandbox,
    partnerId,
    merchantApi,
    extras,
    phoneNumber: options.phoneNumber ?? APPROVED_TEST_USER.phoneNumber,
    otp: { correct: TEST_OTP.correct, expired: TEST_OTP.expired, wrong: '111111' },
    settlement: { from: istDate(now - DAY_MS), to: istDate(now + 2 * DAY_MS) },
    expected: {
      webPendingSignature: statusSignature(transactionIds.web, 'PENDING', privateKey),
      webSuccessSignature: statusSignature(transactionIds.web, 'SUCCESS', privateKey),
      sdkWebhookBody,
      sdkWebhookSignature: sdkSignature(sdkWebhookBody, privateKey),
    },
  };
  const workflows: Workflow[] = readWorkflows(options.dir);
  const proxies: SigningProxy[] = [];
  try {
    const web = await startSigningProxy({ family: 'web', upstream: servers.web, privateKey });
    proxies.push(web);
    const sdk = await startSigningProxy({ family: 'sdk', upstream: servers.sdk, privateKey });
    proxies.push(sdk);
    const log = await runRespect(
      workflowFiles(options.dir),
      { gateway: servers.gateway, extras: servers.extras, web: web.url, sdk: sdk.url, sandbox: controls },
      inputs,
      options,
    );
    const results = buildResults(workflows, log, sandbox);
    const failed = results.filter((result) => result.status === 'fail').length;
    return {
      sandbox,
      runId,
      notes,
      workflows: results,
      passed: results.length - failed,
      failed,
      skippedSteps: results.reduce((sum, result) => sum + result.steps.filter((step) => step.status === 'skip').length, 0),
      durationMs: Math.round(performance.now() - started),
    };
  } finally {
    await Promise.all(proxies.map((proxy) => proxy.close()));
  }
}
