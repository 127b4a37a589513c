/**
 * `paylater sandbox`: starts the stateful sandbox and runs until SIGINT, SIGTERM or SIGHUP, or
 * until the npm process that started it has ended (`npm start`: see src/cli/launcher.ts).
 * Settings: flags over environment variables over the documented defaults (docs/sandbox.md).
 * Exit codes: 0 after a stop, 1 when it cannot listen (port in use, ...), 2 for a usage error.
 */
import { parseCommandLine, UsageError, CliError } from './command-line.js';
import { watchLauncher } from './launcher.js';
import { onRelaunchedStop } from './relaunch.js';
import { ConfigError, DEFAULT_CONFIG, ENVIRONMENT, type ConfigOverrides, type SandboxConfig } from '../sandbox/config.js';
import { environmentOnlyHelp, settingOptions, settingsFromFlags, settingsHelp } from '../sandbox/settings.js';
import { missingBrowserAssets } from '../sandbox/browser-assets.js';
import { PUBLISHED_TEST_PARTNER } from '../sandbox/fixtures.js';
import { createSandbox } from '../sandbox/server.js';
import { shownWebhookUrl } from '../sandbox/shown-url.js';

const COMMAND = 'paylater sandbox';

/** How long after the parent's stop message the same signal counts as the same stop (a Ctrl+C). */
const ECHO_WINDOW_MS = 1000;

// The options and their help come from the settings table (src/sandbox/settings.ts), as do the docs'.
const HELP = `Usage: ${COMMAND} [options]

Starts the stateful sandbox of the pay-later service: one local server for the SDK, web, extras
(and gateway) APIs, with test credentials, test users, a virtual clock and webhook delivery.
Each option may be set by the environment variable in brackets; an option wins over its variable.
See docs/sandbox.md.

Options:
${settingsHelp()}
  --quiet
      do not print a line per request
  -h, --help
      show this help

Environment variables only (sandbox test values by default):
${environmentOnlyHelp()}
`;

const OPTIONS = { ...settingOptions(), quiet: { type: 'boolean' } } as const;

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
  const { values } = line;
  let overrides: ConfigOverrides & { databaseUrl?: string };
  try {
    overrides = settingsFromFlags(values) as ConfigOverrides & { databaseUrl?: string };
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message, COMMAND);
    throw error;
  }
  const { databaseUrl: databaseFlag, ...config } = overrides;

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
    const databaseUrl = databaseFlag ?? env[ENVIRONMENT.databaseUrl];
    sandbox = await createSandbox({
      config,
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

  write(banner(sandbox.url, sandbox.config, sandbox.stateDescription, sandbox.access, sandbox.roleCheckUrl));

  let stop = options.until;
  let closeChannel: () => void = () => undefined;
  if (stop === undefined) {
    const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
    let stopping = false;
    // The stop the parent passed on as a message (relaunch.ts) and when: Ctrl+C signals the whole
    // process group, so the same SIGINT may reach this process just after the parent's message (the
    // order varies with the Node version). That one signal is the same stop, not a second one.
    let echo: { signal: string; until: number } | undefined;
    stop = new Promise<void>((resolve) => {
      const onSignal = (signal: NodeJS.Signals) => {
        if (echo !== undefined && echo.signal === signal && Date.now() <= echo.until) {
          echo = undefined;
          return;
        }
        echo = undefined;
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
        if (message !== undefined) echo = { signal: message.paylaterStop, until: Date.now() + ECHO_WINDOW_MS };
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

/**
 * The banner's lines of a hosted sandbox (access.ts): the operator's token and a ready link, as
 * Jupyter prints its token, when the sandbox made the token; a token set by the operator is a
 * secret of theirs and is not printed.
 */
function hostedLines(url: string, config: SandboxConfig, token: string): string[] {
  const made = config.operatorToken === undefined;
  return [
    `Hosted: the /sandbox/ endpoints need a credential; each partner and merchant sees only its own (docs/sandbox.md, "Hosting the sandbox").`,
    `  Operator token:                ${made ? token : `(set, not shown; from ${ENVIRONMENT.operatorToken})`}`,
    ...(made
      ? [
          `  Dashboard (operator):          ${url}/dashboard#token=${token}`,
          `  Ready link (operator):         ${url}/sandbox/webhooks/deliveries?token=${token}`,
        ]
      : []),
  ];
}

/** What the sandbox prints on start: its address and its (published, test-only) credentials. */
export function banner(
  url: string,
  config: SandboxConfig,
  state = 'in memory (lost when the sandbox stops)',
  access?: { hosted: boolean; operatorToken: string },
  roleCheckUrl?: string,
): string {
  const defaults = DEFAULT_CONFIG;
  return [
    `Pay-later sandbox listening on ${url}`,
    `State: ${state}`,
    ...(roleCheckUrl === undefined ? [] : [`Role check (for a load balancer's health check): ${roleCheckUrl}`]),
    ...(access?.hosted === true ? hostedLines(url, config, access.operatorToken) : []),
    '',
    'Sandbox test credentials (test values for this local sandbox only, see docs/sandbox.md):',
    `  Merchant API (gateway) Basic:  ${config.merchantApi.username} / ${shown(config.merchantApi.password, defaults.merchantApi.password, ENVIRONMENT.merchantApiPassword)}`,
    `  Extras Basic:                  ${config.extras.username} / ${shown(config.extras.password, defaults.extras.password, ENVIRONMENT.extrasPassword)}`,
    `  Partner id (web and SDK):      ${config.partner.id}`,
    `  Private key (web and SDK):     ${shown(config.partner.privateKey, defaults.partner.privateKey, ENVIRONMENT.privateKey)}`,
    ...(config.publishedTestPartner && config.partner.id !== PUBLISHED_TEST_PARTNER.id
      ? [
          `  Published test pair:           ${PUBLISHED_TEST_PARTNER.id} / ${PUBLISHED_TEST_PARTNER.privateKey} (the service's samples and Magento module):`,
          '                                 web and SDK partner, and gateway merchant published_test_merchant',
        ]
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
