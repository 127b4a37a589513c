/**
 * The `paylater trigger <event>` commands: the catalogue of events a developer can make the sandbox
 * send, their options and help. Each event is a subcommand, so a mistyped one gets a suggestion and
 * `paylater trigger --list` lists them. The flows are in trigger.ts, loaded when one runs.
 */
import type { Command as Commander } from 'commander';
import { stringOption, type OptionSpec, type OptionValues, type Program } from './command-line.js';
import { PRIVATE_KEY_VARIABLE } from './input.js';
import type { TriggerFamily, TriggerSettings } from './trigger.js';
import { DEFAULT_SANDBOX_URL, SANDBOX_URL_VARIABLE } from './urls.js';

export interface TriggerEventInfo {
  name: string;
  family: TriggerFamily;
  /** One line for the list. */
  summary: string;
}

/** The events, in the order they are listed. */
export const TRIGGER_EVENTS: readonly TriggerEventInfo[] = [
  { name: 'sdk.success', family: 'sdk', summary: 'SDK flow: the user confirms -> transactionStatus SUCCESS' },
  { name: 'sdk.failure', family: 'sdk', summary: "SDK flow: the user's payment fails -> transactionStatus FAILURE" },
  { name: 'sdk.cancelled', family: 'sdk', summary: 'SDK flow: the user cancels -> transactionStatus CANCELLED' },
  { name: 'web.success', family: 'web', summary: 'web flow: OTP and down payment on the hosted page -> transactionStatus SUCCESS' },
  { name: 'web.failure', family: 'web', summary: "web flow: the user's payment fails -> transactionStatus FAILURE" },
  { name: 'web.cancelled', family: 'web', summary: 'web flow: the user cancels -> transactionStatus CANCELLED' },
  {
    name: 'gateway.transaction.success',
    family: 'gateway',
    summary: 'gateway: OTP, down payment, confirmation -> transactionUpdated SUCCESS',
  },
  {
    name: 'gateway.transaction.failure',
    family: 'gateway',
    summary: 'gateway: the down payment is never confirmed -> transactionUpdated FAILED (PAYMENT_NOT_CONFIRMED)',
  },
  {
    name: 'gateway.transaction.cancelled',
    family: 'gateway',
    summary: "gateway: the merchant cancels a pending transaction -> transactionUpdated CANCELLED (CANCELLED_BY_MERCHANT)",
  },
  {
    name: 'gateway.refund',
    family: 'gateway',
    summary: 'gateway: a successful transaction refunded in full -> transactionUpdated SUCCESS, refundUpdated SUCCESS',
  },
];

/** The gateway merchant `trigger` uses unless `--merchant` (and whose key `listen` prints). */
export const DEFAULT_MERCHANT_ID = 'paylater_trigger';

const SANDBOX_OPTION: OptionSpec = {
  flags: '--sandbox <URL>',
  description: `the sandbox (default: ${SANDBOX_URL_VARIABLE} or ${DEFAULT_SANDBOX_URL})`,
};

const OPTIONS: Record<TriggerFamily, OptionSpec[]> = {
  sdk: [
    SANDBOX_OPTION,
    { flags: '--partner-id <ID>', description: 'the partner id (default: PAYLATER_PARTNER_ID or partner_test)' },
    { flags: '--key-file <FILE>', description: `read the partner's private key from FILE (default: ${PRIVATE_KEY_VARIABLE} or test_private_key)` },
  ],
  web: [],
  gateway: [
    SANDBOX_OPTION,
    { flags: '--merchant <ID>', description: `the merchant to use, onboarded first if needed (default: ${DEFAULT_MERCHANT_ID})` },
    {
      flags: '--merchant-api-username <NAME>',
      description: 'the Merchant API username (default: PAYLATER_MERCHANT_API_USERNAME or pg_test)',
    },
    { flags: '--webhook-url <URL>', description: "the transaction's webhook URL (default: none, or the merchant's default)" },
  ],
};
OPTIONS.web = [
  ...OPTIONS.sdk,
  {
    flags: '--webhook-url <URL>',
    description:
      "put URL in the initiate's notes.webhook_url: the sandbox calls it with txnId and txnStatus, as the service's WooCommerce plugin reads them",
  },
];

const SECRETS: Record<TriggerFamily, string> = {
  sdk: `The partner's private key is the --key-file FILE, else ${PRIVATE_KEY_VARIABLE}, else the
sandbox's published test key; it is never taken from the command line and never printed. A
key file is at most 64 KiB.`,
  web: '',
  gateway: `The Merchant API password is PAYLATER_MERCHANT_API_PASSWORD, else the sandbox's published
test password; it is never taken from the command line and never printed. The merchant is
created, its documents uploaded and the virtual clock advanced until it is enabled, once; later
triggers reuse it. Gateway webhooks are signed with its Transactional API password: read it
with GET /api/merchant/{id} (Merchant API credentials). The flow moves the sandbox's virtual
clock forward by a few seconds (verification, down payment confirmation, refund).`,
};
SECRETS.web = SECRETS.sdk;

function listText(): string {
  const width = Math.max(...TRIGGER_EVENTS.map((event) => event.name.length));
  return `${TRIGGER_EVENTS.map((event) => `${event.name.padEnd(width)}  ${event.summary}`).join('\n')}\n`;
}

export function registerTrigger(program: Program): void {
  const group = program.group(program.root, {
    name: 'trigger',
    summary: 'make the sandbox send a webhook event (paylater trigger --list)',
    noun: 'event',
    description:
      "Make the sandbox produce a webhook event, through its real endpoints and the package's clients, to test a receiver without clicking through a flow. Follow the events with 'paylater listen'.",
    after: `Each event runs a fresh transaction against the sandbox (--sandbox, else ${SANDBOX_URL_VARIABLE},
else ${DEFAULT_SANDBOX_URL}) with its published test credentials unless told otherwise, then
prints the transaction and the events the sandbox recorded (exit 0), or what went wrong (exit 1).

Example:
  paylater listen --forward-to http://127.0.0.1:8080/webhook &
  paylater trigger gateway.refund`,
    list: { description: 'list the events and exit', print: listText },
  });
  for (const info of TRIGGER_EVENTS) addEvent(program, group, info);
}

function addEvent(program: Program, group: Commander, info: TriggerEventInfo): void {
  program.leaf(group, {
    name: info.name,
    summary: info.summary,
    usage: '[options]',
    description: `${info.summary[0]?.toUpperCase()}${info.summary.slice(1)}.`,
    options: OPTIONS[info.family],
    after: SECRETS[info.family],
    async run({ command, options }) {
      const { trigger } = await import('./trigger.js');
      return trigger(info.name, settingsOf(options), {
        command,
        out: (line) => void process.stdout.write(`${line}\n`),
      });
    },
  });
}

function settingsOf(options: OptionValues): TriggerSettings {
  return {
    sandbox: stringOption(options.sandbox),
    partnerId: stringOption(options['partner-id']),
    keyFile: stringOption(options['key-file']),
    merchant: stringOption(options.merchant) ?? DEFAULT_MERCHANT_ID,
    merchantApiUsername: stringOption(options['merchant-api-username']),
    webhookUrl: stringOption(options['webhook-url']),
  };
}
