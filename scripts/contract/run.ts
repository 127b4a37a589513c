/**
 * The contract kit's core: runs Dredd (in a child process, ./driver.ts, with the hook file
 * ./hooks.ts) against a server that claims to implement one API family, and collects every
 * transaction's result, with a reason for every skip.
 *
 * Dredd `require`s its hook file, so the driver and the hooks are bundled at run time with the
 * project's esbuild into CommonJS (./bundle.ts); they import the contract model and
 * src/signature.ts like any other module.
 *
 * Settings reach the hooks as environment variables of the child process only: the private key
 * and passwords never appear on a command line and are never printed.
 */
import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Family } from '../../src/contract/index.js';
import { bundleKit } from './bundle.js';
import type { DriverMessage } from './driver.js';
import { ENV, newRunId } from './settings.js';

const root = resolve(import.meta.dirname, '..', '..');

export interface ContractOptions {
  family: Family;
  /** Base URL of the server under test, e.g. `http://127.0.0.1:4000`. */
  server: string;
  /** The server is a Prism mock: responses are chosen with `Prefer: code=NNN`; no setup. */
  mock?: boolean;
  /**
   * The server is `prism proxy --errors` in front of the real server: requests that break the
   * contract on purpose are skipped (the proxy answers them itself), and the proxy's
   * `sl-violations` header is a failure.
   */
  proxy?: boolean;
  /** Where the sandbox's test controls (`/sandbox/...`) are, when not at `server` (e.g. behind a proxy). */
  controls?: string;
  /** Only list the transaction names; nothing is sent. */
  names?: boolean;
  /** HTTP Basic credentials: gateway Merchant API, or extras. */
  username?: string;
  password?: string;
  /** Web and SDK flows: the partner id and the private key. */
  partnerId?: string;
  privateKey?: string;
  /** Prefix of the ids this run creates (default: a fresh one per run). */
  runId?: string;
  /** How long the setup waits for asynchronous moves (merchant verification), in seconds. */
  waitSeconds?: number;
  /** The bundled document (default `generated/openapi/<family>.json`). */
  document?: string;
  /** Called with every result as it arrives. */
  onResult?: (result: TransactionResult) => void;
}

type TransactionStatus = 'pass' | 'fail' | 'skip';

export interface TransactionResult {
  name: string;
  status: TransactionStatus;
  /** What was wrong (failures). */
  message?: string;
  /** Why it was not sent (skips). */
  reason?: string;
}

export interface ContractReport {
  family: Family;
  server: string;
  mock: boolean;
  proxy: boolean;
  runId: string;
  /** Every transaction Dredd compiled from the document. */
  total: number;
  /** Transactions sent to the server (passed + failed). */
  run: number;
  passed: number;
  failed: number;
  skipped: number;
  skips: { name: string; reason: string }[];
  failures: { name: string; message: string }[];
  /** Transaction names in document order. */
  names: string[];
  /** What the stateful setup could not do (real servers only). */
  setupNotes: string[];
  results: TransactionResult[];
}

/** Raised when the kit itself cannot run (bad options, Dredd cannot read the document...). */
export class ContractKitError extends Error {
  override readonly name = 'ContractKitError';
}

/** Placeholders of the right form for the credentials not given against a mock. */
const MOCK_CREDENTIALS = {
  username: 'contract_kit',
  password: 'contract_kit_password',
  partnerId: 'contract_kit_partner',
  privateKey: 'contract-kit-mock-key',
};
const NO_CREDENTIALS = { username: '', password: '', partnerId: '', privateKey: '' };

function requireCredentials(options: ContractOptions): void {
  if (options.mock || options.names) return;
  const missing: string[] = [];
  if (options.family === 'gateway' || options.family === 'extras') {
    if (!options.username) missing.push('--username');
    if (!options.password) missing.push('--password (or PAYLATER_PASSWORD)');
  } else {
    if (!options.partnerId) missing.push('--partner-id');
    if (!options.privateKey) missing.push('the private key (PAYLATER_PRIVATE_KEY or --key-file)');
  }
  if (missing.length > 0) {
    throw new ContractKitError(`the ${options.family} family against a real server needs ${missing.join(' and ')}`);
  }
}

/** Runs the kit once and resolves to the report; rejects only when the kit itself cannot run. */
export async function runContract(options: ContractOptions): Promise<ContractReport> {
  for (const [option, url] of [['--server', options.server], ['--controls', options.controls]]) {
    if (url !== undefined && !/^https?:\/\/[^/]/i.test(url)) throw new ContractKitError(`${option} must be an http(s) URL (got ${url})`);
  }
  const server = options.server.replace(/\/+$/, '');
  if (options.mock && options.proxy) throw new ContractKitError('--mock and --proxy exclude each other');
  const document = resolve(options.document ?? join(root, 'generated', 'openapi', `${options.family}.json`));
  if (!existsSync(document)) {
    throw new ContractKitError(`${document} does not exist: run \`npm run generate\` first`);
  }
  requireCredentials(options);
  const mock = options.mock === true;
  const fallback = mock ? MOCK_CREDENTIALS : NO_CREDENTIALS;
  const runId = options.runId ?? newRunId();

  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith('PAYLATER_')) delete env[key];
  Object.assign(env, {
    NODE_NO_WARNINGS: '1',
    [ENV.family]: options.family,
    [ENV.server]: server,
    [ENV.document]: document,
    [ENV.mock]: mock ? '1' : '0',
    [ENV.proxy]: options.proxy ? '1' : '0',
    [ENV.controls]: options.controls ?? '',
    [ENV.names]: options.names ? '1' : '0',
    [ENV.runId]: runId,
    [ENV.waitSeconds]: String(options.waitSeconds ?? 120),
    [ENV.username]: options.username || fallback.username,
    [ENV.password]: options.password || fallback.password,
    [ENV.partnerId]: options.partnerId || fallback.partnerId,
    [ENV.privateKey]: options.privateKey || fallback.privateKey,
  });
  const driver = await bundleKit();

  const results: TransactionResult[] = [];
  const setupNotes: string[] = [];
  let endError: string | undefined;
  let ended = false;
  let stderr = '';

  await new Promise<void>((resolvePromise, reject) => {
    const child = fork(driver, [], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'], execArgv: [] });
    child.stdout?.resume();
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-8000);
    });
    child.on('message', (raw) => {
      const message = raw as DriverMessage;
      if (message.type === 'test') {
        const result = toResult(message);
        results.push(result);
        options.onResult?.(result);
      } else if (message.type === 'setup') {
        setupNotes.push(...message.notes);
      } else if (message.type === 'end') {
        ended = true;
        endError = message.error;
      }
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (!ended) {
        reject(new ContractKitError(`the Dredd driver stopped (${signal ?? `exit code ${code}`}) before the end:\n${stderr.trim()}`));
      } else {
        resolvePromise();
      }
    });
  });
  if (endError) throw new ContractKitError(`Dredd could not run: ${endError}${stderr.trim() ? `\n${stderr.trim()}` : ''}`);

  const skips = results
    .filter((result) => result.status === 'skip')
    .map((result) => ({ name: result.name, reason: result.reason ?? 'skipped without a recorded reason' }));
  const failures = results
    .filter((result) => result.status === 'fail')
    .map((result) => ({ name: result.name, message: result.message ?? 'failed without a message' }));
  const passed = results.filter((result) => result.status === 'pass').length;
  return {
    family: options.family,
    server,
    mock,
    proxy: options.proxy === true,
    runId,
    total: results.length,
    run: passed + failures.length,
    passed,
    failed: failures.length,
    skipped: skips.length,
    skips,
    failures,
    names: results.map((result) => result.name),
    setupNotes,
    results,
  };
}

function toResult(message: Extract<DriverMessage, { type: 'test' }>): TransactionResult {
  if (message.status === 'error') {
    return { name: message.name, status: 'fail', message: `error: ${message.message ?? 'unknown error'}` };
  }
  const result: TransactionResult = { name: message.name, status: message.status };
  if (message.message !== undefined) result.message = message.message;
  if (message.status === 'skip') result.reason = message.reason ?? 'skipped without a recorded reason';
  return result;
}
