/**
 * `paylater sandbox`: starts the stateful sandbox and runs until SIGINT, SIGTERM or SIGHUP, or
 * until the npm process that started it has ended (`npm start`: see src/cli/launcher.ts).
 * Settings: flags over environment variables over the documented defaults (docs/sandbox.md).
 * Exit codes: 0 after a stop, 1 when it cannot listen (port in use, ...), 2 for a usage error.
 */
import { parseCommandLine, UsageError, CliError } from './command-line.js';
import { watchLauncher } from './launcher.js';
import { onRelaunchedStop } from './relaunch.js';
import {
  ConfigError,
  DEFAULT_CONFIG,
  ENVIRONMENT,
  LIMIT_SETTINGS,
  MAX_MAX_CONNECTIONS,
  MAX_RETAIN,
  MAX_WEBHOOK_CONCURRENCY,
  MAX_WEBHOOK_MAX_SOCKETS,
  parseCount,
  parsePort,
  type ConfigOverrides,
  type SandboxConfig,
} from '../sandbox/config.js';
import { missingBrowserAssets } from '../sandbox/browser-assets.js';
import { PUBLISHED_TEST_PARTNER } from '../sandbox/fixtures.js';
import { createSandbox } from '../sandbox/server.js';
import { shownWebhookUrl } from '../sandbox/shown-url.js';

const COMMAND = 'paylater sandbox';

const HELP = `Usage: ${COMMAND} [options]

Starts the stateful sandbox of the pay-later service: one local server for the SDK, web, extras
(and gateway) APIs, with test credentials, test users, a virtual clock and webhook delivery.
See docs/sandbox.md.

Options:
  --port PORT         port to listen on (default 4000; 0 picks a free one)   [${ENVIRONMENT.port}]
  --host HOST         address to listen on (default 127.0.0.1)               [${ENVIRONMENT.host}]
  --max-connections N client connections open at once (default 1000)       [${ENVIRONMENT.maxConnections}]
  --web-webhook-url URL  the partner's receiver of web-flow webhooks     [${ENVIRONMENT.webWebhookUrl}]
  --sdk-webhook-url URL  the partner's receiver of SDK-flow webhooks     [${ENVIRONMENT.sdkWebhookUrl}]
  --webhook-url URL   both at once (a flow's own setting wins)            [${ENVIRONMENT.webhookUrl}]
                      With none, events are recorded only; \`paylater listen --forward-to\` forwards
                      them. Use one way to receive, not both: each event would arrive twice.
  --webhook-concurrency N   webhook attempts at once per receiver (default 8) [${ENVIRONMENT.webhookConcurrency}]
  --webhook-max-sockets N   webhook sockets open at once over all receivers
                      (default 256)                         [${ENVIRONMENT.webhookMaxSockets}]
  --allow-any-webhook-target  also send webhooks to the sandbox itself, link-local and
                      cloud metadata addresses          [${ENVIRONMENT.allowAnyWebhookTarget}=1]
  --retain-transactions N   final transactions kept (default 100000)      [${ENVIRONMENT.retainTransactions}]
  --retain-deliveries N     completed webhook deliveries kept (default 100000) [${ENVIRONMENT.retainDeliveries}]
  Limits and memory budget (docs/sandbox.md); each is a whole number:
  --max-pending-per-partner N  PENDING web, and SDK, transactions of the partner (default 200000)
                                                      [${ENVIRONMENT.maxPendingPerPartner}]
  --max-pending-per-merchant N PENDING gateway transactions of a merchant (default 200000)
                                                      [${ENVIRONMENT.maxPendingPerMerchant}]
  --max-notes-bytes N   bytes of notes (JSON text) held over all transactions (default 268435456)
                                                      [${ENVIRONMENT.maxNotesBytes}]
  --max-push-bytes N    bytes of extras data pushes (JSON text) held (default 67108864)
                                                      [${ENVIRONMENT.maxPushBytes}]
  --max-json-members N  values in one notes or pushed data (default 100000) [${ENVIRONMENT.maxJsonMembers}]
  --max-json-depth N    levels of nesting of one notes or pushed data (default 32, at most 64)
                                                      [${ENVIRONMENT.maxJsonDepth}]
  --max-page-bytes N    bytes of one page of a list, about (default 1048576) [${ENVIRONMENT.maxPageBytes}]
  --max-request-log-bytes N  bytes of the request log the dashboard shows (default 16777216)
                                                      [${ENVIRONMENT.maxRequestLogBytes}]
  --require-status-signature
                      require X-Signature on the web status check (hardening; by default it is
                      verified when present)                       [${ENVIRONMENT.requireStatusSignature}=1]
  --no-published-test-partner
                      refuse the service's published test credentials testPartnerId /
                      testPrivateKey (accepted by default beside the partner below, D72)
                                                   [${ENVIRONMENT.publishedTestPartner}=0]
  --database-url URL  keep the state in PostgreSQL (postgres://USER:PASSWORD@HOST:5432/DB): it
                      survives restarts, and every sandbox started with the same URL shares it
                      (docs/sandbox.md, "A shared sandbox"). Default: in memory, lost at exit.
                                                      [${ENVIRONMENT.databaseUrl}]
  --quiet             do not print a line per request
  -h, --help          show this help

Environment variables (sandbox test values by default):
  ${ENVIRONMENT.merchantApiUsername}, ${ENVIRONMENT.merchantApiPassword}
  ${ENVIRONMENT.extrasUsername}, ${ENVIRONMENT.extrasPassword}
  ${ENVIRONMENT.partnerId}, ${ENVIRONMENT.privateKey}
`;

const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  'max-connections': { type: 'string' },
  'webhook-url': { type: 'string' },
  'web-webhook-url': { type: 'string' },
  'sdk-webhook-url': { type: 'string' },
  'webhook-concurrency': { type: 'string' },
  'webhook-max-sockets': { type: 'string' },
  'allow-any-webhook-target': { type: 'boolean' },
  'retain-transactions': { type: 'string' },
  'retain-deliveries': { type: 'string' },
  'require-status-signature': { type: 'boolean' },
  'max-pending-per-partner': { type: 'string' },
  'max-pending-per-merchant': { type: 'string' },
  'max-notes-bytes': { type: 'string' },
  'max-push-bytes': { type: 'string' },
  'max-json-members': { type: 'string' },
  'max-json-depth': { type: 'string' },
  'max-page-bytes': { type: 'string' },
  'max-request-log-bytes': { type: 'string' },
  'no-published-test-partner': { type: 'boolean' },
  'database-url': { type: 'string' },
  quiet: { type: 'boolean' },
} as const;

/** The sandbox could not start listening: exit code 1 (not a usage error). */
export class SandboxStartError extends CliError {
  override name = 'SandboxStartError';
  override readonly exitCode: number = 1;
}

export interface RunSandboxOptions {
  /** Default: process.env. */
  env?: Record<string, string | undefined>;
  /** Where the banner goes; default: standard output. */
  write?: (text: string) => void;
  /** Resolves when the sandbox should stop; default: the first SIGINT or SIGTERM. */
  until?: Promise<unknown>;
  /** Where the built browser code is looked for; default: this package's root. */
  packageRoot?: string;
}

/** Runs the sandbox until it is told to stop; resolves to the exit code. */
export async function runSandbox(argv: string[], options: RunSandboxOptions = {}): Promise<number> {
  const write = options.write ?? ((text: string) => void process.stdout.write(text));
  const line = parseCommandLine(argv, { command: COMMAND, options: OPTIONS, maxPositionals: 0 });
  if (line.help) {
    write(HELP);
    return 0;
  }
  const overrides: ConfigOverrides = {};
  const { values } = line;
  try {
    if (values.port !== undefined) overrides.port = parsePort(values.port, '--port');
    if (values.host !== undefined) overrides.host = values.host;
    const maxConnections = parseCount(values['max-connections'], '--max-connections', MAX_MAX_CONNECTIONS);
    if (maxConnections !== undefined) overrides.maxConnections = maxConnections;
    overrides.partner = webhookUrlOverrides(values['webhook-url'], values['web-webhook-url'], values['sdk-webhook-url']);
    const concurrency = parseCount(values['webhook-concurrency'], '--webhook-concurrency', MAX_WEBHOOK_CONCURRENCY);
    const maxSockets = parseCount(values['webhook-max-sockets'], '--webhook-max-sockets', MAX_WEBHOOK_MAX_SOCKETS);
    if (concurrency !== undefined || maxSockets !== undefined || values['allow-any-webhook-target'] === true) {
      overrides.webhooks = {
        ...(concurrency === undefined ? {} : { concurrency }),
        ...(maxSockets === undefined ? {} : { maxSockets }),
        ...(values['allow-any-webhook-target'] === true ? { allowAnyTarget: true } : {}),
      };
    }
    const transactions = parseCount(values['retain-transactions'], '--retain-transactions', MAX_RETAIN);
    const deliveries = parseCount(values['retain-deliveries'], '--retain-deliveries', MAX_RETAIN);
    if (transactions !== undefined || deliveries !== undefined) {
      overrides.retention = {
        ...(transactions === undefined ? {} : { transactions }),
        ...(deliveries === undefined ? {} : { deliveries }),
      };
    }
    if (values['require-status-signature'] === true) overrides.requireStatusSignature = true;
    for (const [name, { flag, max }] of Object.entries(LIMIT_SETTINGS)) {
      const value = parseCount(values[flag as keyof typeof values] as string | undefined, `--${flag}`, max);
      if (value !== undefined) overrides.limits = { ...overrides.limits, [name]: value };
    }
    if (values['no-published-test-partner'] === true) overrides.publishedTestPartner = false;
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message, COMMAND);
    throw error;
  }

  // Without its browser code the sandbox would answer GET /sdk.js and the checkout page with a 500.
  const missing = missingBrowserAssets(options.packageRoot);
  if (missing.length > 0) {
    throw new SandboxStartError(
      `the browser code is not built (${missing.join(', ')} missing); run \`npm run build\` first (\`npm start\` builds it).`,
    );
  }

  let sandbox;
  try {
    const env = options.env ?? process.env;
    const databaseUrl = values['database-url'] ?? env[ENVIRONMENT.databaseUrl];
    sandbox = await createSandbox({
      config: overrides,
      env,
      logRequests: line.values.quiet !== true,
      ...(databaseUrl === undefined ? {} : { databaseUrl }),
    });
    await sandbox.listen();
  } catch (error) {
    await sandbox?.close();
    if (error instanceof ConfigError) throw new CliError(error.message);
    const problem = sandbox === undefined ? undefined : listenProblem(error, sandbox.config);
    if (problem !== undefined) throw new SandboxStartError(problem);
    throw error;
  }

  write(banner(sandbox.url, sandbox.config, sandbox.stateDescription));

  let stop = options.until;
  let closeChannel: () => void = () => undefined;
  if (stop === undefined) {
    const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
    let stopping = false;
    stop = new Promise<void>((resolve) => {
      const onSignal = () => {
        if (stopping) {
          // A second signal while stopping: do not wait any longer.
          write('Stopped.\n');
          process.exit(1);
        }
        stopping = true;
        resolve();
      };
      for (const signal of signals) process.on(signal, onSignal);
      // Started again with the heap flags (relaunch.ts): the parent's stop counts as a first signal,
      // and the parent watches npm.
      const launcherEnded = (pid: number) => {
        if (stopping) return;
        stopping = true;
        write(`The process that started the sandbox (pid ${pid}) has ended.\n`);
        resolve();
      };
      const relaunched = onRelaunchedStop((message) => {
        if (message?.paylaterStop === 'launcher' && message.pid !== undefined) return launcherEnded(message.pid);
        if (stopping) return;
        stopping = true;
        resolve();
      });
      if (relaunched === undefined) watchLauncher(launcherEnded);
      else closeChannel = relaunched;
    });
  }
  await stop;
  closeChannel();
  write('Stopping the sandbox...\n');
  await sandbox.close();
  return 0;
}

/** Why the sandbox could not listen, for a person (naming the port and how to change it). */
function listenProblem(error: unknown, config: SandboxConfig): string | undefined {
  const code = (error as { code?: unknown }).code;
  const where = `port ${config.port} on ${config.host}`;
  const change = `choose another with --port PORT or ${ENVIRONMENT.port} (0 picks a free port)`;
  if (code === 'EADDRINUSE') return `${where} is already in use; ${change}.`;
  if (code === 'EACCES') return `no permission to listen on ${where} (ports below 1024 need privileges); ${change}.`;
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return `cannot listen on ${config.host}: the address is not on this machine; choose another with --host HOST or ${ENVIRONMENT.host}.`;
  }
  return undefined;
}

/**
 * A secret for the banner: the published sandbox test value is printed; any other value was set by
 * the operator and is never printed, only where it came from.
 */
function shown(value: string, published: string, variable: string): string {
  return value === published ? value : `(set, not shown; from ${variable} or the options)`;
}

/**
 * A webhook URL for the banner: scheme, host and port and a fingerprint of the whole URL, never its
 * path, query or credentials, where tokens are put (src/sandbox/shown-url.ts, docs/webhooks.md).
 */
export function shownUrl(value: string): string {
  return shownWebhookUrl(value);
}

/** The partner settings of the webhook flags (D76): the shorthand for both flows, and each flow's own. */
function webhookUrlOverrides(both: string | undefined, web: string | undefined, sdk: string | undefined): ConfigOverrides['partner'] {
  return {
    ...(both === undefined ? {} : { webhookUrl: both }),
    ...(web === undefined && sdk === undefined
      ? {}
      : { webhookUrls: { ...(web === undefined ? {} : { web }), ...(sdk === undefined ? {} : { sdk }) } }),
  };
}

/** The banner's lines of the partner's webhook URLs: one when both flows share it (web and SDK), else one per flow. */
function webhookUrlLines(config: SandboxConfig): string[] {
  const { web, sdk } = config.partner.webhookUrls;
  const none = '(none: events are recorded as not_sent)';
  if (web === sdk) return [`  Partner webhook URL:           ${web === undefined ? none : shownUrl(web)}`];
  return [
    `  Web webhook URL:               ${web === undefined ? none : shownUrl(web)}`,
    `  SDK webhook URL:               ${sdk === undefined ? none : shownUrl(sdk)}`,
  ];
}

/** What the sandbox prints on start: its address and its (published, test-only) credentials. */
export function banner(url: string, config: SandboxConfig, state = 'in memory (lost when the sandbox stops)'): string {
  const defaults = DEFAULT_CONFIG;
  return [
    `Pay-later sandbox listening on ${url}`,
    `State: ${state}`,
    '',
    'Sandbox test credentials (test values for this local sandbox only, see docs/sandbox.md):',
    `  Merchant API (gateway) Basic:  ${config.merchantApi.username} / ${shown(config.merchantApi.password, defaults.merchantApi.password, ENVIRONMENT.merchantApiPassword)}`,
    `  Extras Basic:                  ${config.extras.username} / ${shown(config.extras.password, defaults.extras.password, ENVIRONMENT.extrasPassword)}`,
    `  Partner id (web and SDK):      ${config.partner.id}`,
    `  Private key (web and SDK):     ${shown(config.partner.privateKey, defaults.partner.privateKey, ENVIRONMENT.privateKey)}`,
    ...(config.publishedTestPartner && config.partner.id !== PUBLISHED_TEST_PARTNER.id
      ? [`  Published test partner (web):  ${PUBLISHED_TEST_PARTNER.id} / ${PUBLISHED_TEST_PARTNER.privateKey} (the service's samples)`]
      : []),
    ...webhookUrlLines(config),
    ...(config.requireStatusSignature ? ['  Web status check:              X-Signature required (--require-status-signature)'] : []),
    '',
    `Landing page: ${url}/   Browser script: ${url}/sdk.js   Hosted checkout: ${url}/checkout/<id>`,
    `Virtual clock: ${url}/sandbox/clock   Webhook deliveries: ${url}/sandbox/webhooks/deliveries`,
    `Dashboard (requests, transactions, webhooks, live): ${url}/dashboard`,
    'Press Ctrl+C to stop.',
    '',
  ].join('\n');
}
