/**
 * `paylater sandbox`: starts the stateful sandbox and runs until SIGINT or SIGTERM.
 * Settings: flags over environment variables over the documented defaults (docs/sandbox.md).
 */
import { parseCommandLine, UsageError, CliError, type Command } from '../cli/command-line.js';
import { ConfigError, DEFAULT_CONFIG, ENVIRONMENT, parsePort, type ConfigOverrides, type SandboxConfig } from './config.js';
import { createSandbox } from './server.js';

const COMMAND = 'paylater sandbox';

const HELP = `Usage: ${COMMAND} [options]

Starts the stateful sandbox of the pay-later service: one local server for the SDK, web, extras
(and gateway) APIs, with test credentials, test users, a virtual clock and webhook delivery.
See docs/sandbox.md.

Options:
  --port PORT         port to listen on (default 4000; 0 picks a free one)   [${ENVIRONMENT.port}]
  --host HOST         address to listen on (default 127.0.0.1)               [${ENVIRONMENT.host}]
  --webhook-url URL   the partner's webhook receiver for web and SDK events  [${ENVIRONMENT.webhookUrl}]
  --require-status-signature
                      require X-Signature on the web status check (hardening; by default it is
                      verified when present)                       [${ENVIRONMENT.requireStatusSignature}=1]
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
  'webhook-url': { type: 'string' },
  'require-status-signature': { type: 'boolean' },
  quiet: { type: 'boolean' },
} as const;

export interface RunSandboxOptions {
  /** Default: process.env. */
  env?: Record<string, string | undefined>;
  /** Where the banner goes; default: standard output. */
  write?: (text: string) => void;
  /** Resolves when the sandbox should stop; default: the first SIGINT or SIGTERM. */
  until?: Promise<unknown>;
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
    if (values['webhook-url'] !== undefined) overrides.partner = { webhookUrl: values['webhook-url'] };
    if (values['require-status-signature'] === true) overrides.requireStatusSignature = true;
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message, COMMAND);
    throw error;
  }

  let sandbox;
  try {
    sandbox = await createSandbox({ config: overrides, env: options.env ?? process.env, logRequests: line.values.quiet !== true });
    await sandbox.listen();
  } catch (error) {
    await sandbox?.close();
    if (error instanceof ConfigError) throw new CliError(error.message);
    const code = (error as { code?: unknown }).code;
    if (code === 'EADDRINUSE') throw new CliError(`the address is in use; choose another port with --port`);
    if (code === 'EACCES') throw new CliError(`no permission to listen there; choose another port with --port`);
    throw error;
  }

  write(banner(sandbox.url, sandbox.config));

  const stop =
    options.until ??
    new Promise<NodeJS.Signals>((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'));
      process.once('SIGTERM', () => resolve('SIGTERM'));
    });
  await stop;
  write('Stopping the sandbox...\n');
  await sandbox.close();
  return 0;
}

/**
 * A secret for the banner: the published sandbox test value is printed; any other value was set by
 * the operator and is never printed, only where it came from.
 */
function shown(value: string, published: string, variable: string): string {
  return value === published ? value : `(set, not shown; from ${variable} or the options)`;
}

/** What the sandbox prints on start: its address and its (published, test-only) credentials. */
export function banner(url: string, config: SandboxConfig): string {
  const defaults = DEFAULT_CONFIG;
  return [
    `Pay-later sandbox listening on ${url}`,
    '',
    'Sandbox test credentials (test values for this local sandbox only, see docs/sandbox.md):',
    `  Merchant API (gateway) Basic:  ${config.merchantApi.username} / ${shown(config.merchantApi.password, defaults.merchantApi.password, ENVIRONMENT.merchantApiPassword)}`,
    `  Extras Basic:                  ${config.extras.username} / ${shown(config.extras.password, defaults.extras.password, ENVIRONMENT.extrasPassword)}`,
    `  Partner id (web and SDK):      ${config.partner.id}`,
    `  Private key (web and SDK):     ${shown(config.partner.privateKey, defaults.partner.privateKey, ENVIRONMENT.privateKey)}`,
    `  Partner webhook URL:           ${config.partner.webhookUrl ?? '(none: events are recorded as not_sent)'}`,
    ...(config.requireStatusSignature ? ['  Web status check:              X-Signature required (--require-status-signature)'] : []),
    '',
    `Landing page: ${url}/   Browser script: ${url}/sdk.js   Hosted checkout: ${url}/checkout/<id>`,
    `Virtual clock: ${url}/sandbox/clock   Webhook deliveries: ${url}/sandbox/webhooks/deliveries`,
    'Press Ctrl+C to stop.',
    '',
  ].join('\n');
}

/** The command for the `paylater` command line. */
export const sandboxCommand: Command = {
  summary: 'run the stateful sandbox of the service locally',
  run: (argv) => runSandbox(argv),
};
