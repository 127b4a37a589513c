/**
 * The sandbox's configuration: the defaults of the settings table (settings.ts, docs/sandbox.md),
 * overridden by environment variables and then by explicit options (the CLI flags).
 *
 * The credentials here are sandbox test values, published on purpose. Secrets are still handled as
 * secrets: compared in constant time ({@link secretEquals}) and never logged.
 */
import { hash, timingSafeEqual } from 'node:crypto';
import type { components as GatewayComponents } from '../../generated/types/gateway.js';
import { ConfigError, countSettings, ENVIRONMENT, settingDefaults, settingsFromEnvironment, type TableSettings } from './settings.js';
import { RecentValues } from './recent-values.js';
import { WebhookTargets } from './webhook-targets.js';

export { ConfigError, ENVIRONMENT } from './settings.js';

/** HTTP Basic credentials: the shape of the contract's `basicAuthDetails`. */
export type BasicCredentials = GatewayComponents['schemas']['GatewayBasicAuthDetails'];

/** The one partner of the direct integration (web and SDK flows) that the sandbox knows. */
interface PartnerConfig {
  /** The value of `X-Partner-Id` (web) and `X-Partnerid` (SDK). */
  id: string;
  /** The private key: signs requests, webhooks and status signatures. */
  privateKey: string;
  /**
   * Where each flow's webhooks go: `--web-webhook-url`, `--sdk-webhook-url`, or both at once
   * with `--webhook-url`; `undefined`: none configured, that flow's events are recorded as not sent.
   */
  webhookUrls: Readonly<Record<DirectFlow, string | undefined>>;
  /** Shown on the hosted page (web flow). */
  merchantName: string;
  /** The default of `redirect.url` of a web transaction (the merchant's homepage). */
  homePageUrl: string;
}

/** The two flows of the direct integration, each with its own webhook receiver. */
export type DirectFlow = 'web' | 'sdk';

/**
 * Overrides of the partner's settings. `webhookUrl` is the shorthand for both flows' receivers; a
 * flow's own entry in `webhookUrls` wins over it (an explicit `undefined` means none).
 */
interface PartnerOverrides extends Partial<Omit<PartnerConfig, 'webhookUrls'>> {
  webhookUrl?: string | undefined;
  webhookUrls?: Partial<Record<DirectFlow, string | undefined>>;
}

/** The settings of the table that the configuration holds as they are (the others are below). */
type TableConfig = Omit<TableSettings, 'databaseUrl' | 'partner' | 'merchantApi' | 'extras'>;

/**
 * The configuration: every setting of the table (settings.ts) at its key, typed by its row (a
 * setting added there is here with no edit), and what the table does not hold as is.
 */
export interface SandboxConfig extends TableConfig {
  /** Gateway Merchant API credentials (HTTP Basic). */
  merchantApi: BasicCredentials;
  /** Extras credentials (HTTP Basic). */
  extras: BasicCredentials;
  partner: PartnerConfig;
  /** The largest request body accepted, in bytes (1 MiB unless set). */
  bodyLimit: number;
  /** The origin used in URLs the sandbox hands out (redirectUrl); default: the address it listens on. */
  publicUrl: string | undefined;
}

/** How webhooks are sent (docs/sandbox.md, Webhooks): the table's `webhooks.*` settings. */
export type WebhookSettings = SandboxConfig['webhooks'];

/** How much history the sandbox keeps (docs/sandbox.md, Retention): the table's `retention.*` settings. */
export type RetentionSettings = SandboxConfig['retention'];

/**
 * The memory budget (docs/sandbox.md, "Limits and memory budget"): the table's `limits.*` settings.
 * What the sandbox keeps is bounded by these sizes, measured as kept (the JSON text of notes and
 * pushed data), not as received.
 */
export type LimitSettings = SandboxConfig['limits'];

export const BODY_LIMIT = 1024 * 1024;

/** The defaults of the settings table, by their place in the configuration. */
const DEFAULTS = settingDefaults() as unknown as Omit<SandboxConfig, 'bodyLimit' | 'publicUrl'>;

export const DEFAULT_WEBHOOK_CONCURRENCY = DEFAULTS.webhooks.concurrency;
export const DEFAULT_WEBHOOK_MAX_SOCKETS = DEFAULTS.webhooks.maxSockets;
export const DEFAULT_RETAIN_DELIVERIES = DEFAULTS.retention.deliveries;
export const DEFAULT_PAGE_BYTES = DEFAULTS.limits.pageBytes;

/** The documented sandbox test values: the settings table's defaults (settings.ts) and the rest. */
export const DEFAULT_CONFIG: SandboxConfig = Object.freeze({
  ...DEFAULTS,
  merchantApi: Object.freeze(DEFAULTS.merchantApi),
  extras: Object.freeze(DEFAULTS.extras),
  partner: Object.freeze({
    ...DEFAULTS.partner,
    webhookUrls: Object.freeze({ web: undefined, sdk: undefined }),
    merchantName: 'Sandbox Test Merchant',
    homePageUrl: 'https://merchant.example.in/',
  }),
  bodyLimit: BODY_LIMIT,
  publicUrl: undefined,
  rolePort: undefined,
  hosted: undefined,
  operatorToken: undefined,
  webhooks: Object.freeze(DEFAULTS.webhooks),
  retention: Object.freeze(DEFAULTS.retention),
  limits: Object.freeze(DEFAULTS.limits),
}) as SandboxConfig;

/** `T` with every field optional, in nested objects too. */
type Overrides<T> = { [K in keyof T]?: T[K] extends object ? Overrides<T[K]> : T[K] };

/** Overrides of the defaults; nested objects are merged field by field. */
export interface ConfigOverrides extends Overrides<TableConfig> {
  merchantApi?: Partial<BasicCredentials>;
  extras?: Partial<BasicCredentials>;
  partner?: PartnerOverrides;
  bodyLimit?: number;
  publicUrl?: string;
}

/**
 * The configuration: defaults, then the environment variables of {@link ENVIRONMENT} (when `env` is
 * given), then `overrides`. An empty environment variable counts as unset.
 */
export function resolveConfig(
  overrides: ConfigOverrides = {},
  env: Record<string, string | undefined> = {},
): SandboxConfig {
  const fromEnv = settingsFromEnvironment(env) as ConfigOverrides;
  const config = merge(merge(structuredClone(DEFAULT_CONFIG) as unknown as Record<string, unknown>, fromEnv), overrides) as unknown as SandboxConfig & {
    databaseUrl?: string;
    partner: { webhookUrl?: string };
  };
  // The state's place is the server's option (server.ts), not a setting of the configuration.
  delete config.databaseUrl;
  delete config.partner.webhookUrl;
  config.partner.webhookUrls = {
    web: webhookUrlOf('web', overrides.partner, fromEnv.partner),
    sdk: webhookUrlOf('sdk', overrides.partner, fromEnv.partner),
  };
  checkConfig(config);
  return config;
}

/** `layer` over `base`, field by field in nested objects; an undefined value leaves the base's. */
function merge(base: Record<string, unknown>, layer: object): Record<string, unknown> {
  for (const [name, value] of Object.entries(layer)) {
    if (value === undefined) continue;
    const below = base[name];
    base[name] =
      typeof value === 'object' && value !== null && typeof below === 'object' && below !== null
        ? merge(below as Record<string, unknown>, value)
        : value;
  }
  return base;
}

/**
 * A flow's webhook URL: its own override, else the shorthand override, else its own
 * variable, else the shorthand variable. Options win over variables; the flow's own setting wins
 * over the shorthand at the same level.
 */
function webhookUrlOf(
  flow: DirectFlow,
  overrides: PartnerOverrides | undefined,
  fromEnv: PartnerOverrides | undefined,
): string | undefined {
  for (const level of [overrides, fromEnv]) {
    if (level?.webhookUrls !== undefined && flow in level.webhookUrls) return level.webhookUrls[flow];
    if (level !== undefined && 'webhookUrl' in level) return level.webhookUrl;
  }
  return undefined;
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
  for (const { key, name, max } of countSettings()) {
    const value = key.split('.').reduce<unknown>((at, part) => (at as Record<string, unknown>)[part], config);
    if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > max) throw new ConfigError(`${name} must be a whole number from 1 to ${max}`);
  }
  // The operator's token guards every tenant's records of a hosted sandbox: long enough not to guess.
  if (config.operatorToken !== undefined && (config.operatorToken.length < 16 || /\s/.test(config.operatorToken))) {
    throw new ConfigError(`${ENVIRONMENT.operatorToken} must be at least 16 characters, without spaces`);
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
 * The digest of a secret that {@link secretEquals} compares; made once for a secret compared with
 * every request (a partner id, the Merchant API credentials).
 */
export function secretDigest(value: string): Buffer {
  return hash('sha256', value, 'buffer');
}

/**
 * Compares a received secret with the expected one (or its {@link secretDigest}) in constant time:
 * both sides are hashed first, so neither their contents nor their lengths leak through timing.
 */
export function secretEquals(received: string, expected: string | Buffer): boolean {
  return timingSafeEqual(secretDigest(received), typeof expected === 'string' ? secretDigest(expected) : expected);
}

/**
 * Digests of values requests present again and again (a partner id header), the latest
 * {@link PRESENTED_DIGESTS} distinct values, the least recently used dropped first (recent-values.ts):
 * the same client sends the same value on every request, and a new value costs one digest as it did
 * before. Compared with `timingSafeEqual` as any digest is; never logged or shown.
 */
const PRESENTED_DIGESTS = 1024;
const presentedDigests = new RecentValues<Buffer>(PRESENTED_DIGESTS);

/** {@link secretDigest} of a value a request presented, remembered (see above). */
export function presentedDigest(value: string): Buffer {
  let digest = presentedDigests.get(value);
  if (digest === undefined) {
    digest = secretDigest(value);
    presentedDigests.add(value, digest);
  }
  return digest;
}

/**
 * Credentials as a request presented them (`Authorization: Basic ...`, parsed in auth.ts), with the
 * {@link secretDigest} of each part made on its first comparison and kept. auth.ts keeps one of
 * these per distinct header value (a bounded cache), so a client that sends the same header on
 * every request has its password hashed once, not per request: the digest was 7 % of a
 * transaction read. The comparison itself stays constant-time over the digests. The digests are
 * private fields: neither JSON nor `util.inspect` shows them.
 */
export class PresentedCredentials implements BasicCredentials {
  #usernameDigest: Buffer | undefined;
  #passwordDigest: Buffer | undefined;

  constructor(
    readonly username: string,
    readonly password: string,
  ) {}

  /** The digest of the username or the password, made once. */
  digest(part: 'username' | 'password'): Buffer {
    if (part === 'username') return (this.#usernameDigest ??= secretDigest(this.username));
    return (this.#passwordDigest ??= secretDigest(this.password));
  }
}

/**
 * Compares one part of received credentials with the expected digest in constant time, using the
 * digest a {@link PresentedCredentials} keeps (made here for any other credentials).
 */
export function partEquals(received: BasicCredentials, part: 'username' | 'password', expected: Buffer): boolean {
  const digest = received instanceof PresentedCredentials ? received.digest(part) : secretDigest(received[part]);
  return timingSafeEqual(digest, expected);
}

/** True when `received` are exactly the expected Basic credentials (both parts always compared). */
export function credentialsEqual(received: BasicCredentials, expected: BasicCredentials): boolean {
  const username = partEquals(received, 'username', secretDigest(expected.username));
  const password = partEquals(received, 'password', secretDigest(expected.password));
  return username && password;
}
