/**
 * The sandbox's settings and test credentials: documented defaults (docs/sandbox.md), overridable
 * by environment variables and then by explicit options (the CLI flags).
 *
 * The credentials here are sandbox test values, published on purpose. Secrets are still handled as
 * secrets: compared in constant time ({@link secretEquals}) and never logged.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { components as GatewayComponents } from '../../generated/types/gateway.js';
import { TEST_CREDENTIALS } from './fixtures.js';
import { WebhookTargets } from './webhook-targets.js';

/** HTTP Basic credentials: the shape of the contract's `basicAuthDetails` (D07). */
export type BasicCredentials = GatewayComponents['schemas']['GatewayBasicAuthDetails'];

/** The one partner of the direct integration (web and SDK flows) that the sandbox knows. */
interface PartnerConfig {
  /** The value of `X-Partner-Id` (web) and `X-Partnerid` (SDK). */
  id: string;
  /** The private key: signs requests, webhooks and status signatures. */
  privateKey: string;
  /**
   * Where each flow's webhooks go (D76): `--web-webhook-url`, `--sdk-webhook-url`, or both at once
   * with `--webhook-url`; `undefined`: none configured, that flow's events are recorded as not sent.
   */
  webhookUrls: Readonly<Record<DirectFlow, string | undefined>>;
  /** Shown on the hosted page (web flow). */
  merchantName: string;
  /** The default of `redirect.url` of a web transaction (the merchant's homepage). */
  homePageUrl: string;
}

/** The two flows of the direct integration, each with its own webhook receiver (D76). */
export type DirectFlow = 'web' | 'sdk';

/**
 * Overrides of the partner's settings. `webhookUrl` is the shorthand for both flows' receivers; a
 * flow's own entry in `webhookUrls` wins over it (an explicit `undefined` means none).
 */
interface PartnerOverrides extends Partial<Omit<PartnerConfig, 'webhookUrls'>> {
  webhookUrl?: string | undefined;
  webhookUrls?: Partial<Record<DirectFlow, string | undefined>>;
}

export interface SandboxConfig {
  host: string;
  port: number;
  /** Gateway Merchant API credentials (HTTP Basic). */
  merchantApi: BasicCredentials;
  /** Extras credentials (HTTP Basic, D26). */
  extras: BasicCredentials;
  partner: PartnerConfig;
  /** The largest request body accepted, in bytes (D24: 1 MiB). */
  bodyLimit: number;
  /** Client connections open at once; more are closed as soon as they are accepted (connections.ts). */
  maxConnections: number;
  /** The origin used in URLs the sandbox hands out (redirectUrl); default: the address it listens on. */
  publicUrl: string | undefined;
  /**
   * Hardening, off by default (D21): the web status check then requires `X-Signature`. The service
   * verifies it when present but answers without it, as its integrations send none.
   */
  requireStatusSignature: boolean;
  /**
   * The service's published test partner (`testPartnerId` / `testPrivateKey`, D72) is accepted
   * beside {@link partner}, with the same webhook URL and page settings. On by default; the
   * operator turns it off with `--no-published-test-partner`.
   */
  publishedTestPartner: boolean;
  webhooks: WebhookSettings;
  retention: RetentionSettings;
  limits: LimitSettings;
}

/** How webhooks are sent (docs/sandbox.md, Webhooks). */
export interface WebhookSettings {
  /** Attempts running at once per receiver (scheme, host and port); the others wait in a queue. */
  concurrency: number;
  /** Sockets open at once over all receivers, in use or idle (webhook-client.ts). */
  maxSockets: number;
  /** Allow the sandbox's own address, link-local and metadata addresses as webhook targets. */
  allowAnyTarget: boolean;
}

/** How much history the sandbox keeps (docs/sandbox.md, Retention). Pending records are always kept. */
export interface RetentionSettings {
  /** Final transactions kept, over every family (and phone numbers of the extras); the oldest go first. */
  transactions: number;
  /** Completed webhook deliveries kept; the oldest go first. */
  deliveries: number;
}

/**
 * The memory budget (docs/sandbox.md, "Limits and memory budget"): what the sandbox keeps is bounded
 * by these sizes, measured as kept (the JSON text of notes and pushed data), not as received.
 */
export interface LimitSettings {
  /** PENDING transactions of one partner in each of the web and SDK flows; one more initiate answers 429. */
  pendingPerPartner: number;
  /** PENDING (not final) gateway transactions of one merchant; one more create answers 429. */
  pendingPerMerchant: number;
  /** Bytes of `notes` (their JSON text) held over all transactions; final ones are forgotten, oldest first, to stay within it. */
  notesBytes: number;
  /** Bytes of extras data pushes (their JSON text) held; the oldest pushes are forgotten to stay within it. */
  pushBytes: number;
  /** Values (members of objects and items of arrays, at every level) in one `notes` or pushed `data`. */
  jsonMembers: number;
  /** Levels of nesting of one `notes` or pushed `data` (the value itself is level 1). */
  jsonDepth: number;
  /** Bytes of one page of a list (deliveries, gateway transactions, extras pushes); at least one item is shown. */
  pageBytes: number;
  /** Bytes of the request log behind the dashboard (request-log.ts); the oldest requests go first. */
  requestLogBytes: number;
}

const DEFAULT_HOST = '127.0.0.1';
const DEFAULT_PORT = 4000;
export const BODY_LIMIT = 1024 * 1024;
const DEFAULT_MAX_CONNECTIONS = 1000;
export const MAX_MAX_CONNECTIONS = 100_000;
export const DEFAULT_WEBHOOK_CONCURRENCY = 8;
export const MAX_WEBHOOK_CONCURRENCY = 256;
export const DEFAULT_WEBHOOK_MAX_SOCKETS = 256;
export const MAX_WEBHOOK_MAX_SOCKETS = 10_000;
const DEFAULT_RETAIN_TRANSACTIONS = 100_000;
export const DEFAULT_RETAIN_DELIVERIES = 100_000;
/** The largest retention that may be set: 10 million records. */
export const MAX_RETAIN = 10_000_000;
const DEFAULT_MAX_PENDING = 200_000;
const DEFAULT_NOTES_BYTES = 256 * 1024 * 1024;
const DEFAULT_PUSH_BYTES = 64 * 1024 * 1024;
/**
 * Values kept in one `notes` or pushed `data`: the contract's own bound on the items of a pushed
 * `data` array (ExtrasMerchantDataRequest), so the default never refuses what the contract accepts.
 */
const DEFAULT_JSON_MEMBERS = 524_288;
/** Levels of nesting of one `notes` or pushed `data`: by default that of any body (src/http/json.ts). */
const DEFAULT_JSON_DEPTH = 64;
export const DEFAULT_PAGE_BYTES = 1024 * 1024;
const DEFAULT_REQUEST_LOG_BYTES = 16 * 1024 * 1024;
/** The largest byte budget that may be set: 4 GiB. */
const MAX_BYTES = 4 * 1024 * 1024 * 1024;
/** The deepest nesting that may be set: that of any JSON body (src/http/json.ts). */
const MAX_JSON_DEPTH_SETTING = 64;

/** The documented sandbox test values. */
export const DEFAULT_CONFIG: SandboxConfig = Object.freeze({
  host: DEFAULT_HOST,
  port: DEFAULT_PORT,
  merchantApi: TEST_CREDENTIALS.merchantApi,
  extras: TEST_CREDENTIALS.extras,
  partner: Object.freeze({
    ...TEST_CREDENTIALS.partner,
    webhookUrls: Object.freeze({ web: undefined, sdk: undefined }),
    merchantName: 'Sandbox Test Merchant',
    homePageUrl: 'https://merchant.example.in/',
  }),
  bodyLimit: BODY_LIMIT,
  maxConnections: DEFAULT_MAX_CONNECTIONS,
  publicUrl: undefined,
  requireStatusSignature: false,
  publishedTestPartner: true,
  webhooks: Object.freeze({ concurrency: DEFAULT_WEBHOOK_CONCURRENCY, maxSockets: DEFAULT_WEBHOOK_MAX_SOCKETS, allowAnyTarget: false }),
  retention: Object.freeze({ transactions: DEFAULT_RETAIN_TRANSACTIONS, deliveries: DEFAULT_RETAIN_DELIVERIES }),
  limits: Object.freeze({
    pendingPerPartner: DEFAULT_MAX_PENDING,
    pendingPerMerchant: DEFAULT_MAX_PENDING,
    notesBytes: DEFAULT_NOTES_BYTES,
    pushBytes: DEFAULT_PUSH_BYTES,
    jsonMembers: DEFAULT_JSON_MEMBERS,
    jsonDepth: DEFAULT_JSON_DEPTH,
    pageBytes: DEFAULT_PAGE_BYTES,
    requestLogBytes: DEFAULT_REQUEST_LOG_BYTES,
  }),
}) as SandboxConfig;

/** The environment variables the sandbox reads. */
export const ENVIRONMENT = {
  host: 'PAYLATER_HOST',
  port: 'PAYLATER_PORT',
  maxConnections: 'PAYLATER_MAX_CONNECTIONS',
  merchantApiUsername: 'PAYLATER_MERCHANT_API_USERNAME',
  merchantApiPassword: 'PAYLATER_MERCHANT_API_PASSWORD',
  extrasUsername: 'PAYLATER_EXTRAS_USERNAME',
  extrasPassword: 'PAYLATER_EXTRAS_PASSWORD',
  partnerId: 'PAYLATER_PARTNER_ID',
  privateKey: 'PAYLATER_PRIVATE_KEY',
  webhookUrl: 'PAYLATER_WEBHOOK_URL',
  webWebhookUrl: 'PAYLATER_WEB_WEBHOOK_URL',
  sdkWebhookUrl: 'PAYLATER_SDK_WEBHOOK_URL',
  requireStatusSignature: 'PAYLATER_REQUIRE_STATUS_SIGNATURE',
  publishedTestPartner: 'PAYLATER_PUBLISHED_TEST_PARTNER',
  webhookConcurrency: 'PAYLATER_WEBHOOK_CONCURRENCY',
  webhookMaxSockets: 'PAYLATER_WEBHOOK_MAX_SOCKETS',
  allowAnyWebhookTarget: 'PAYLATER_ALLOW_ANY_WEBHOOK_TARGET',
  retainTransactions: 'PAYLATER_RETAIN_TRANSACTIONS',
  retainDeliveries: 'PAYLATER_RETAIN_DELIVERIES',
  maxPendingPerPartner: 'PAYLATER_MAX_PENDING_PER_PARTNER',
  maxPendingPerMerchant: 'PAYLATER_MAX_PENDING_PER_MERCHANT',
  maxNotesBytes: 'PAYLATER_MAX_NOTES_BYTES',
  maxPushBytes: 'PAYLATER_MAX_PUSH_BYTES',
  maxJsonMembers: 'PAYLATER_MAX_JSON_MEMBERS',
  maxJsonDepth: 'PAYLATER_MAX_JSON_DEPTH',
  maxPageBytes: 'PAYLATER_MAX_PAGE_BYTES',
  maxRequestLogBytes: 'PAYLATER_MAX_REQUEST_LOG_BYTES',
  databaseUrl: 'PAYLATER_DATABASE_URL',
} as const;

/** Each limit: its variable, the name of its flag, and its largest value. */
export const LIMIT_SETTINGS: Readonly<Record<keyof LimitSettings, { env: string; flag: string; max: number }>> = Object.freeze({
  pendingPerPartner: { env: ENVIRONMENT.maxPendingPerPartner, flag: 'max-pending-per-partner', max: MAX_RETAIN },
  pendingPerMerchant: { env: ENVIRONMENT.maxPendingPerMerchant, flag: 'max-pending-per-merchant', max: MAX_RETAIN },
  notesBytes: { env: ENVIRONMENT.maxNotesBytes, flag: 'max-notes-bytes', max: MAX_BYTES },
  pushBytes: { env: ENVIRONMENT.maxPushBytes, flag: 'max-push-bytes', max: MAX_BYTES },
  jsonMembers: { env: ENVIRONMENT.maxJsonMembers, flag: 'max-json-members', max: MAX_RETAIN },
  jsonDepth: { env: ENVIRONMENT.maxJsonDepth, flag: 'max-json-depth', max: MAX_JSON_DEPTH_SETTING },
  pageBytes: { env: ENVIRONMENT.maxPageBytes, flag: 'max-page-bytes', max: MAX_BYTES },
  requestLogBytes: { env: ENVIRONMENT.maxRequestLogBytes, flag: 'max-request-log-bytes', max: MAX_BYTES },
});

/** Overrides of the defaults; nested objects are merged field by field. */
export interface ConfigOverrides {
  host?: string;
  port?: number;
  merchantApi?: Partial<BasicCredentials>;
  extras?: Partial<BasicCredentials>;
  partner?: PartnerOverrides;
  bodyLimit?: number;
  maxConnections?: number;
  publicUrl?: string;
  requireStatusSignature?: boolean;
  publishedTestPartner?: boolean;
  webhooks?: Partial<WebhookSettings>;
  retention?: Partial<RetentionSettings>;
  limits?: Partial<LimitSettings>;
}

/** A setting that cannot be used; the message names the setting, never a secret's value. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * The configuration: defaults, then the environment variables of {@link ENVIRONMENT} (when `env` is
 * given), then `overrides`. An empty environment variable counts as unset.
 */
export function resolveConfig(
  overrides: ConfigOverrides = {},
  env: Record<string, string | undefined> = {},
): SandboxConfig {
  const fromEnv = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value === '' ? undefined : value;
  };
  const envPort = fromEnv(ENVIRONMENT.port);
  const envRequireStatusSignature = fromEnv(ENVIRONMENT.requireStatusSignature);

  const config: SandboxConfig = {
    host: overrides.host ?? fromEnv(ENVIRONMENT.host) ?? DEFAULT_CONFIG.host,
    port:
      overrides.port ??
      (envPort === undefined ? DEFAULT_CONFIG.port : parsePort(envPort, ENVIRONMENT.port)),
    merchantApi: {
      username:
        overrides.merchantApi?.username ??
        fromEnv(ENVIRONMENT.merchantApiUsername) ??
        DEFAULT_CONFIG.merchantApi.username,
      password:
        overrides.merchantApi?.password ??
        fromEnv(ENVIRONMENT.merchantApiPassword) ??
        DEFAULT_CONFIG.merchantApi.password,
    },
    extras: {
      username:
        overrides.extras?.username ?? fromEnv(ENVIRONMENT.extrasUsername) ?? DEFAULT_CONFIG.extras.username,
      password:
        overrides.extras?.password ?? fromEnv(ENVIRONMENT.extrasPassword) ?? DEFAULT_CONFIG.extras.password,
    },
    partner: {
      id: overrides.partner?.id ?? fromEnv(ENVIRONMENT.partnerId) ?? DEFAULT_CONFIG.partner.id,
      privateKey:
        overrides.partner?.privateKey ?? fromEnv(ENVIRONMENT.privateKey) ?? DEFAULT_CONFIG.partner.privateKey,
      webhookUrls: {
        web: webhookUrlOf('web', overrides.partner, fromEnv),
        sdk: webhookUrlOf('sdk', overrides.partner, fromEnv),
      },
      merchantName: overrides.partner?.merchantName ?? DEFAULT_CONFIG.partner.merchantName,
      homePageUrl: overrides.partner?.homePageUrl ?? DEFAULT_CONFIG.partner.homePageUrl,
    },
    bodyLimit: overrides.bodyLimit ?? DEFAULT_CONFIG.bodyLimit,
    maxConnections:
      overrides.maxConnections ??
      parseCount(fromEnv(ENVIRONMENT.maxConnections), ENVIRONMENT.maxConnections, MAX_MAX_CONNECTIONS) ??
      DEFAULT_CONFIG.maxConnections,
    publicUrl: overrides.publicUrl ?? DEFAULT_CONFIG.publicUrl,
    requireStatusSignature:
      overrides.requireStatusSignature ??
      parseFlag(envRequireStatusSignature, ENVIRONMENT.requireStatusSignature) ??
      DEFAULT_CONFIG.requireStatusSignature,
    publishedTestPartner:
      overrides.publishedTestPartner ??
      parseFlag(fromEnv(ENVIRONMENT.publishedTestPartner), ENVIRONMENT.publishedTestPartner) ??
      DEFAULT_CONFIG.publishedTestPartner,
    webhooks: {
      concurrency:
        overrides.webhooks?.concurrency ??
        parseCount(fromEnv(ENVIRONMENT.webhookConcurrency), ENVIRONMENT.webhookConcurrency, MAX_WEBHOOK_CONCURRENCY) ??
        DEFAULT_CONFIG.webhooks.concurrency,
      maxSockets:
        overrides.webhooks?.maxSockets ??
        parseCount(fromEnv(ENVIRONMENT.webhookMaxSockets), ENVIRONMENT.webhookMaxSockets, MAX_WEBHOOK_MAX_SOCKETS) ??
        DEFAULT_CONFIG.webhooks.maxSockets,
      allowAnyTarget:
        overrides.webhooks?.allowAnyTarget ??
        parseFlag(fromEnv(ENVIRONMENT.allowAnyWebhookTarget), ENVIRONMENT.allowAnyWebhookTarget) ??
        DEFAULT_CONFIG.webhooks.allowAnyTarget,
    },
    retention: {
      transactions:
        overrides.retention?.transactions ??
        parseCount(fromEnv(ENVIRONMENT.retainTransactions), ENVIRONMENT.retainTransactions, MAX_RETAIN) ??
        DEFAULT_CONFIG.retention.transactions,
      deliveries:
        overrides.retention?.deliveries ??
        parseCount(fromEnv(ENVIRONMENT.retainDeliveries), ENVIRONMENT.retainDeliveries, MAX_RETAIN) ??
        DEFAULT_CONFIG.retention.deliveries,
    },
    limits: { ...DEFAULT_CONFIG.limits },
  };
  for (const name of Object.keys(LIMIT_SETTINGS) as (keyof LimitSettings)[]) {
    const { env: variable, max } = LIMIT_SETTINGS[name];
    config.limits[name] = overrides.limits?.[name] ?? parseCount(fromEnv(variable), variable, max) ?? DEFAULT_CONFIG.limits[name];
  }
  checkConfig(config);
  return config;
}

/** The variable of each flow's own webhook URL. */
const WEBHOOK_URL_VARIABLES: Readonly<Record<DirectFlow, string>> = {
  web: ENVIRONMENT.webWebhookUrl,
  sdk: ENVIRONMENT.sdkWebhookUrl,
};

/**
 * A flow's webhook URL (D76): its own override, else the shorthand override, else its own
 * variable, else the shorthand variable. Options win over variables; the flow's own setting wins
 * over the shorthand at the same level.
 */
function webhookUrlOf(
  flow: DirectFlow,
  overrides: PartnerOverrides | undefined,
  fromEnv: (name: string) => string | undefined,
): string | undefined {
  if (overrides?.webhookUrls !== undefined && flow in overrides.webhookUrls) return overrides.webhookUrls[flow];
  if (overrides !== undefined && 'webhookUrl' in overrides) return overrides.webhookUrl;
  return fromEnv(WEBHOOK_URL_VARIABLES[flow]) ?? fromEnv(ENVIRONMENT.webhookUrl);
}

/** Parses a TCP port (0 picks a free one). */
export function parsePort(value: string, setting: string): number {
  if (!/^[0-9]{1,5}$/.test(value) || Number(value) > 65535) {
    throw new ConfigError(`${setting} must be a port number from 0 to 65535`);
  }
  return Number(value);
}

/** A whole number from 1 to `max` (a flag or variable); undefined when not given. */
export function parseCount(value: string | undefined, setting: string, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[0-9]{1,10}$/.test(value) || Number(value) < 1 || Number(value) > max) {
    throw new ConfigError(`${setting} must be a whole number from 1 to ${max}`);
  }
  return Number(value);
}

/** `1`/`true`/`yes` or `0`/`false`/`no` (any case); undefined when not given. */
function parseFlag(value: string | undefined, setting: string): boolean | undefined {
  if (value === undefined) return undefined;
  const lower = value.toLowerCase();
  if (['1', 'true', 'yes'].includes(lower)) return true;
  if (['0', 'false', 'no'].includes(lower)) return false;
  throw new ConfigError(`${setting} must be 1 or 0 (true or false)`);
}

function checkConfig(config: SandboxConfig): void {
  if (!Number.isInteger(config.port) || config.port < 0 || config.port > 65535) {
    throw new ConfigError('the port must be a number from 0 to 65535');
  }
  if (config.host === '') throw new ConfigError('the host must not be empty');
  for (const [name, value] of [
    ['the Merchant API username', config.merchantApi.username],
    ['the Merchant API password', config.merchantApi.password],
    ['the extras username', config.extras.username],
    ['the extras password', config.extras.password],
    ['the partner id', config.partner.id],
    ['the private key', config.partner.privateKey],
  ] as const) {
    if (value === '') throw new ConfigError(`${name} must not be empty`);
  }
  if (config.merchantApi.username.includes(':') || config.extras.username.includes(':')) {
    throw new ConfigError('a Basic username must not contain ":"');
  }
  // The sandbox's own address is checked once it listens (server.ts).
  const targets = new WebhookTargets({ allowAny: config.webhooks.allowAnyTarget });
  for (const { url, name } of partnerWebhookUrls(config)) {
    const problem = targets.problem(url);
    if (problem !== undefined) throw new ConfigError(`${name} ${problem.message}`);
  }
  for (const [name, value, max] of [
    ['the connection limit', config.maxConnections, MAX_MAX_CONNECTIONS],
    ['the webhook concurrency', config.webhooks.concurrency, MAX_WEBHOOK_CONCURRENCY],
    ['the webhook socket limit', config.webhooks.maxSockets, MAX_WEBHOOK_MAX_SOCKETS],
    ['the retention of transactions', config.retention.transactions, MAX_RETAIN],
    ['the retention of deliveries', config.retention.deliveries, MAX_RETAIN],
  ] as const) {
    if (!Number.isInteger(value) || value < 1 || value > max) throw new ConfigError(`${name} must be a whole number from 1 to ${max}`);
  }
  for (const [name, { flag, max }] of Object.entries(LIMIT_SETTINGS)) {
    const value = config.limits[name as keyof LimitSettings];
    if (!Number.isInteger(value) || value < 1 || value > max) throw new ConfigError(`the limit --${flag} must be a whole number from 1 to ${max}`);
  }
  if (config.publicUrl !== undefined && !isHttpUrl(config.publicUrl)) {
    throw new ConfigError('the public URL must be an absolute http or https URL');
  }
  if (!Number.isInteger(config.bodyLimit) || config.bodyLimit < 1) {
    throw new ConfigError('the body limit must be a positive integer');
  }
}

/**
 * The partner's webhook URLs that are set, each once, with its name for messages: `the webhook URL`
 * when both flows share it, else `the web webhook URL`, `the SDK webhook URL`.
 */
export function partnerWebhookUrls(config: Pick<SandboxConfig, 'partner'>): { url: string; name: string }[] {
  const { web, sdk } = config.partner.webhookUrls;
  if (web !== undefined && web === sdk) return [{ url: web, name: 'the webhook URL' }];
  return [
    ...(web === undefined ? [] : [{ url: web, name: 'the web webhook URL' }]),
    ...(sdk === undefined ? [] : [{ url: sdk, name: 'the SDK webhook URL' }]),
  ];
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * Compares a received secret with the expected one in constant time: both sides are hashed first,
 * so neither their contents nor their lengths leak through timing.
 */
export function secretEquals(received: string, expected: string): boolean {
  const a = createHash('sha256').update(received, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/** True when `received` are exactly the expected Basic credentials (both parts always compared). */
export function credentialsEqual(received: BasicCredentials, expected: BasicCredentials): boolean {
  const username = secretEquals(received.username, expected.username);
  const password = secretEquals(received.password, expected.password);
  return username && password;
}
