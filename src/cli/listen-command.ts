/**
 * The `paylater listen` command: its options and help; the work is in listen.ts, loaded when the
 * command runs.
 */
import { isWebhookFamily, WEBHOOK_FAMILIES as FAMILIES, type WebhookFamily } from '../contract/webhooks.js';
import { DEFAULT_MERCHANT_ID } from './trigger-command.js';
import { requireOption, stringOption, UsageError, type Program } from './command-line.js';
import { DEFAULT_SANDBOX_URL, DEPRECATED_SANDBOX_URL_VARIABLE, httpUrl, SANDBOX_URL_VARIABLE, sandboxUrl } from './urls.js';

const AFTER = `Every webhook event the sandbox records is forwarded, whether or not the sandbox has a
webhook URL configured (events it records as not_sent included): with the exact body and
the headers the sandbox signed (Content-Type, X-Event-Id, X-Signature), so your receiver
verifies them as it would the service's. One line per event on standard output, with the
status the event reports:

  14:02:07  sdk      transactionStatus   SUCCESS    ord_1001  evt_4c1d...  -> 200 OK in 4 ms
  14:02:09  gateway  transactionUpdated  FAILED     trg_gw_9a2e  evt_77b0...  -> failed after 1 ms: connection refused (ECONNREFUSED)

Which families: --family, else the one the receiver names in its answer to a first, unsigned
request (the package's createWebhookHandler names its family in the Paylater-Webhook-Family
header), else all three. Once ready, listen prints the signing key of each family it forwards:
the partner's private key for sdk and web (the published test key; a key of your own is not
printed), and for gateway the Transactional API password of the merchant paylater trigger uses
(--merchant, default paylater_trigger).

Use listen with a sandbox that has no webhook URL of its own: when it delivers a family's
events itself too (--web-webhook-url, --sdk-webhook-url, --webhook-url), a receiver at that
URL gets each event twice; listen warns once per family.

Events are forwarded one at a time, in order, with a 10 s limit each; the receiver's answer
does not change what the sandbox records. If the sandbox cannot be reached at the start,
listen stops (exit 1); a connection lost later is retried every 0.5 to 5 s until the sandbox
is back. Ctrl+C stops it (exit 0).

The sandbox URL is --sandbox, else ${SANDBOX_URL_VARIABLE} (${DEPRECATED_SANDBOX_URL_VARIABLE}, its name in
2.0.0, is still read, with a deprecation line), else ${DEFAULT_SANDBOX_URL}.

Example:
  paylater listen --forward-to http://127.0.0.1:8080/paylater/webhook
  paylater trigger sdk.success      # in another terminal`;

export function registerListen(program: Program): void {
  program.leaf(program.root, {
    name: 'listen',
    summary: "forward the sandbox's webhook events, live, to a local receiver",
    usage: `--forward-to URL [--sandbox URL] [--family ${FAMILIES.join(',')}] [--merchant ID]`,
    description: "Follow the sandbox's webhook events live and forward each one to a local receiver.",
    options: [
      { flags: '--forward-to <URL>', description: 'the receiver to POST each event to, e.g. http://127.0.0.1:8080/webhook (required)' },
      { flags: '--sandbox <URL>', description: `the sandbox (default: ${SANDBOX_URL_VARIABLE} or ${DEFAULT_SANDBOX_URL})` },
      { flags: '--family <FAMILIES>', description: `only these families, separated by commas: ${FAMILIES.join(', ')} (default: the one the receiver names, else all)` },
      { flags: '--merchant <ID>', description: `the gateway merchant whose webhook key is printed (default: ${DEFAULT_MERCHANT_ID}, the one paylater trigger uses)` },
    ],
    after: AFTER,
    async run({ command, options }) {
      const forwardTo = httpUrl(
        requireOption(options['forward-to'], 'forward-to', command),
        '--forward-to',
        command,
        'http://127.0.0.1:8080/webhook',
      );
      const sandbox = sandboxUrl(stringOption(options.sandbox), command);
      const families = familiesOf(stringOption(options.family), command);
      const merchant = stringOption(options.merchant) ?? DEFAULT_MERCHANT_ID;
      const { listen } = await import('./listen.js');
      const { signingKeyLines } = await import('./listen-keys.js');

      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        return await listen({
          sandbox,
          forwardTo,
          families,
          keys: (forwarded) => signingKeyLines({ sandbox, merchant }, forwarded),
          signal: stop.signal,
          out: (line) => void process.stdout.write(`${line}\n`),
          err: (line) => void process.stderr.write(`${line}\n`),
        });
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    },
  });
}

function familiesOf(value: string | undefined, command: string): WebhookFamily[] | undefined {
  if (value === undefined) return undefined;
  const given = value.split(',').map((family) => family.trim());
  if (given.length === 0 || !given.every(isWebhookFamily)) {
    throw new UsageError(`--family takes ${FAMILIES.join(', ')} or several of them separated by commas`, command);
  }
  return [...new Set(given)];
}
