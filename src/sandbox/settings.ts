/**
 * The sandbox's settings, each written once: its flag, its environment variable, its default, how
 * it is checked, its line in `paylater sandbox --help` and its row in docs/sandbox.md's settings
 * table are all derived from its entry in {@link SETTINGS}. config.ts builds the defaults and reads
 * the environment from it; sandbox-command.ts builds its options, its help and its overrides from it;
 * test/sandbox/settings.test.ts checks that the docs' table is the one {@link settingsTable} renders
 * (`npx tsx scripts/settings-table.ts` writes it).
 *
 * Adding a setting: one entry here, with `key` the place of its value in the configuration
 * (`limits.jsonDepth`). The configuration's type is derived from the table too
 * ({@link TableSettings}: a count or port is a number, a switch a boolean, a text a string, each
 * possibly undefined when it has no default), so the code that reads `config.limits.jsonDepth`
 * compiles with no other edit.
 */
import { TEST_CREDENTIALS } from './fixtures.js';

/** A setting that cannot be used; the message names the setting, never a secret's value. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** How a setting's text is read. */
type Kind =
  /** A TCP port, 0 to 65535. */
  | 'port'
  /** A whole number from 1 to `max`. */
  | 'count'
  /** On or off: a flag without a value; the variable takes 1/true/yes or 0/false/no. */
  | 'switch'
  /** Any non-empty text. */
  | 'text';

export interface Setting {
  /** Where the value goes in the configuration (`ConfigOverrides`), dot-separated. */
  key: string;
  /** The flag's name without `--`, or undefined for a setting read from the environment only. */
  flag?: string;
  /** The environment variable. */
  env: string;
  kind: Kind;
  /** What the flag's value is called in the help (`PORT`, `N`, `URL`). */
  value?: string;
  /** The default (undefined: none). */
  default: string | number | boolean | undefined;
  /** How the default reads in the help and the docs, when not its plain value. */
  shownDefault?: string;
  /** The largest value of a count. */
  max?: number;
  /** For a switch: the value its flag sets (`--no-published-test-partner` sets false). */
  flagSets?: boolean;
  /** One line for `--help`. */
  help: string;
  /** The docs' description (Markdown). */
  docs: string;
  /** For a limit of the memory budget: its row in the docs' budget table (what it bounds, what happens when reached). */
  budget?: { what: string; reached: string };
}

/** Ten million records: the largest retention, pending limit and values count that may be set. */
const MAX_RETAIN = 10_000_000;
/** The largest byte budget that may be set: 4 GiB. */
const MAX_BYTES = 4 * 1024 * 1024 * 1024;
/** The deepest nesting that may be set: that of any JSON body (src/http/json.ts). */
const MAX_JSON_DEPTH = 64;
const MAX_MAX_CONNECTIONS = 100_000;
const MAX_WEBHOOK_CONCURRENCY = 256;
const MAX_WEBHOOK_MAX_SOCKETS = 10_000;

const MiB = 1024 * 1024;

/** Every setting of `paylater sandbox`, in the order of its help and of the docs' table. */
const TABLE = [
  { key: 'port', flag: 'port', env: 'PAYLATER_PORT', kind: 'port', value: 'PORT', default: 4000, help: 'port to listen on (0 picks a free one)', docs: 'Port to listen on; `0` picks a free one.' },
  { key: 'host', flag: 'host', env: 'PAYLATER_HOST', kind: 'text', value: 'HOST', default: '127.0.0.1', help: 'address to listen on', docs: 'Address to listen on.' },
  {
    key: 'maxConnections', flag: 'max-connections', env: 'PAYLATER_MAX_CONNECTIONS', kind: 'count', value: 'N', default: 1000, max: MAX_MAX_CONNECTIONS,
    help: 'client connections open at once',
    docs: 'Client connections open at once; one more is closed as soon as it is accepted (see Limits).',
  },
  {
    key: 'partner.webhookUrls.web', flag: 'web-webhook-url', env: 'PAYLATER_WEB_WEBHOOK_URL', kind: 'text', value: 'URL', default: undefined,
    help: "the partner's receiver of web-flow webhooks",
    docs: "The partner's receiver of web-flow webhooks (see Webhooks, [why](code-decisions.md#d76-one-webhook-receiver-per-flow-of-the-direct-integration)). Refused at start if it carries credentials or is a refused target (see Webhook targets).",
  },
  {
    key: 'partner.webhookUrls.sdk', flag: 'sdk-webhook-url', env: 'PAYLATER_SDK_WEBHOOK_URL', kind: 'text', value: 'URL', default: undefined,
    help: "the partner's receiver of SDK-flow webhooks",
    docs: "The partner's receiver of SDK-flow webhooks, refused likewise.",
  },
  {
    key: 'partner.webhookUrl', flag: 'webhook-url', env: 'PAYLATER_WEBHOOK_URL', kind: 'text', value: 'URL', default: undefined,
    help: "both at once (a flow's own setting wins). With none, events are recorded only; `paylater listen --forward-to` forwards them (use one way, not both: each event would arrive twice)",
    docs: "Shorthand: one receiver for both flows. A flow's own flag or variable wins over it at the same level (a flag over a variable always).",
  },
  {
    key: 'webhooks.concurrency', flag: 'webhook-concurrency', env: 'PAYLATER_WEBHOOK_CONCURRENCY', kind: 'count', value: 'N', default: 8, max: MAX_WEBHOOK_CONCURRENCY,
    help: 'webhook attempts at once per receiver',
    docs: 'Webhook attempts at once per receiver (scheme, host and port); the others wait in a queue.',
  },
  {
    key: 'webhooks.maxSockets', flag: 'webhook-max-sockets', env: 'PAYLATER_WEBHOOK_MAX_SOCKETS', kind: 'count', value: 'N', default: 256, max: MAX_WEBHOOK_MAX_SOCKETS,
    help: 'webhook sockets open at once over all receivers',
    docs: 'Webhook sockets open at once over all receivers, in use or idle (see Under load).',
  },
  {
    key: 'webhooks.allowAnyTarget', flag: 'allow-any-webhook-target', env: 'PAYLATER_ALLOW_ANY_WEBHOOK_TARGET', kind: 'switch', default: false, flagSets: true,
    help: 'also send webhooks to the sandbox itself, link-local and cloud metadata addresses',
    docs: 'Also send webhooks to the sandbox itself, link-local and cloud metadata addresses.',
  },
  {
    key: 'retention.transactions', flag: 'retain-transactions', env: 'PAYLATER_RETAIN_TRANSACTIONS', kind: 'count', value: 'N', default: 100_000, max: MAX_RETAIN,
    help: 'final transactions kept',
    docs:
      'Final transactions kept, all families together (see Retention). Measured on a loaded 2-core machine, the 50 ms stall budget does not hold for a large sandbox: ' +
      'with some 75,000 records and more, the collection that compacts the heap when it grows sparse pauses every request for 0.3 to 1 s ' +
      '([why](code-decisions.md#d400-the-sandbox-process-compacts-its-heap-only-while-its-old-generation-is-fragmented)); a hosted sandbox that must stay within it keeps fewer.',
  },
  {
    key: 'retention.deliveries', flag: 'retain-deliveries', env: 'PAYLATER_RETAIN_DELIVERIES', kind: 'count', value: 'N', default: 100_000, max: MAX_RETAIN,
    help: 'completed webhook deliveries kept', docs: 'Completed webhook deliveries kept (see Retention).',
  },
  {
    key: 'limits.pendingPerPartner', flag: 'max-pending-per-partner', env: 'PAYLATER_MAX_PENDING_PER_PARTNER', kind: 'count', value: 'N', default: 200_000, max: MAX_RETAIN,
    help: 'PENDING web, and SDK, transactions of the partner',
    docs: 'PENDING web transactions of the partner, and PENDING SDK transactions (each flow counts its own); one more initiate is answered 429 (see Limits and memory budget).',
    budget: { what: 'PENDING web transactions of the partner, and PENDING SDK transactions of the partner (each flow counts its own)', reached: 'the initiate is answered 429 `TOO_MANY_REQUESTS`, `Retry-After` the flow\'s expiry (900 s web, 60 s SDK)' },
  },
  {
    key: 'limits.pendingPerMerchant', flag: 'max-pending-per-merchant', env: 'PAYLATER_MAX_PENDING_PER_MERCHANT', kind: 'count', value: 'N', default: 200_000, max: MAX_RETAIN,
    help: 'PENDING gateway transactions of a merchant',
    docs: 'PENDING (not final) gateway transactions of one merchant; one more create is answered 429.',
    budget: { what: 'PENDING (not final) gateway transactions of one merchant', reached: 'the create is answered 429 `TOO_MANY_REQUESTS`, `Retry-After` 900' },
  },
  {
    key: 'limits.notesBytes', flag: 'max-notes-bytes', env: 'PAYLATER_MAX_NOTES_BYTES', kind: 'count', value: 'N', default: 256 * MiB, max: MAX_BYTES,
    help: 'bytes of notes (JSON text) held over all transactions',
    docs: 'Bytes of `notes` (their JSON text) held over all transactions; the oldest final ones are forgotten to stay within it.',
    budget: { what: 'Bytes of notes (UTF-8 JSON text) of every transaction held, pending and final', reached: 'the oldest final transactions are forgotten (retention); an initiate or create whose notes do not fit beside those of the pending transactions is answered 429 `TOO_MANY_REQUESTS`' },
  },
  {
    key: 'limits.pushBytes', flag: 'max-push-bytes', env: 'PAYLATER_MAX_PUSH_BYTES', kind: 'count', value: 'N', default: 64 * MiB, max: MAX_BYTES,
    help: 'bytes of extras data pushes (JSON text) held',
    docs: 'Bytes of extras data pushes (their JSON text) held; the oldest pushes are forgotten to stay within it.',
    budget: { what: 'Bytes of extras data pushes (JSON text) held', reached: 'the oldest pushes are forgotten (retention)' },
  },
  {
    key: 'limits.jsonMembers', flag: 'max-json-members', env: 'PAYLATER_MAX_JSON_MEMBERS', kind: 'count', value: 'N', default: 524_288, max: MAX_RETAIN,
    help: 'values in one notes or pushed data',
    docs: "Values (members of objects and items of arrays, at every level) in one `notes` or pushed `data`; the default is the contract's bound on the items of a pushed `data`. More: 400 naming the limit.",
    budget: { what: 'Values in one `notes` or pushed `data` (members of objects and items of arrays, at every level)', reached: '400 `BAD_REQUEST` in the family\'s format, naming the limit and the flag' },
  },
  {
    key: 'limits.jsonDepth', flag: 'max-json-depth', env: 'PAYLATER_MAX_JSON_DEPTH', kind: 'count', value: 'N', default: 64, max: MAX_JSON_DEPTH,
    help: 'levels of nesting of one notes or pushed data',
    docs: 'Levels of nesting of one `notes` or pushed `data` (the value itself is level 1); the default is the limit of any body. Deeper: 400 naming the limit.',
    budget: { what: 'Levels of nesting of one `notes` or pushed `data`', reached: '400 `BAD_REQUEST`, naming the limit and the flag' },
  },
  {
    key: 'limits.pageBytes', flag: 'max-page-bytes', env: 'PAYLATER_MAX_PAGE_BYTES', kind: 'count', value: 'N', default: MiB, max: MAX_BYTES,
    help: 'bytes of one page of a list, about',
    docs: 'Bytes of one page of a list (deliveries, gateway transactions, extras pushes), about; a page always holds at least one item.',
    budget: { what: 'Bytes of one page (gateway transaction list, deliveries list, extras pushes read), about', reached: 'the page stops early with its cursor (`nextCursor`, `merchantDataNextCursor`); a page always holds at least one item' },
  },
  {
    key: 'limits.requestLogBytes', flag: 'max-request-log-bytes', env: 'PAYLATER_MAX_REQUEST_LOG_BYTES', kind: 'count', value: 'N', default: 16 * MiB, max: MAX_BYTES,
    help: 'bytes of the request log the dashboard shows',
    docs: 'Bytes of the request log behind the dashboard (`/dashboard`, `GET /sandbox/requests`); the oldest requests are forgotten to stay within it (see "The dashboard").',
    budget: { what: 'Bytes of the request log of the dashboard', reached: 'the oldest requests are forgotten (see "The dashboard")' },
  },
  {
    key: 'requireStatusSignature', flag: 'require-status-signature', env: 'PAYLATER_REQUIRE_STATUS_SIGNATURE', kind: 'switch', default: false, flagSets: true,
    help: 'require X-Signature on the web status check (hardening; by default it is verified when present)',
    docs: 'Hardening: the web status check then requires `X-Signature` (401 without it). By default it is verified when present and the check answers on `X-Partner-Id` alone, as the service does ([why](decisions.md#d21-the-web-initiate-response-and-how-the-merchant-learns-the-result)).',
  },
  {
    key: 'publishedTestPartner', flag: 'no-published-test-partner', env: 'PAYLATER_PUBLISHED_TEST_PARTNER', kind: 'switch', default: true, flagSets: false,
    help: "refuse the service's published test credentials testPartnerId / testPrivateKey (accepted by default beside the partner)",
    docs: "Refuse the service's published test credentials `testPartnerId` / `testPrivateKey`, accepted by default beside the partner below ([why](decisions.md#d72-the-published-test-credentials-and-initiatebharatxtransaction)).",
  },
  {
    key: 'databaseUrl', flag: 'database-url', env: 'PAYLATER_DATABASE_URL', kind: 'text', value: 'URL', default: undefined, shownDefault: 'none: in memory',
    help: 'keep the state in PostgreSQL (postgres://USER:PASSWORD@HOST:5432/DB): it survives restarts, and every sandbox started with the same URL shares it',
    docs: 'Keep the state in PostgreSQL, `postgres://USER:PASSWORD@HOST:5432/DATABASE`: it survives restarts, and every sandbox started with the same URL shares it (see "A shared sandbox"). The password is never printed.',
  },
  {
    key: 'rolePort', flag: 'role-port', env: 'PAYLATER_ROLE_PORT', kind: 'port', value: 'PORT', default: undefined, shownDefault: 'none',
    help: "also answer a load balancer's health check on PORT: 200 on the process that serves requests (the shared sandbox's writer), 503 on one that forwards them",
    docs: 'Also listen on this port (same host) for a load balancer\'s health check: any `GET` answers 200 `{"role":"writer"}` (or `"memory"`) on the process that serves requests itself, 503 on a shared sandbox\'s process that forwards them, so that a load balancer sends every connection straight to the writer (see "A shared sandbox").',
  },
  {
    key: 'hosted', flag: 'hosted', env: 'PAYLATER_HOSTED', kind: 'switch', default: undefined, flagSets: true, shownDefault: 'on when --host is not loopback',
    help: 'require a credential on the /sandbox/ endpoints, the deliveries list and the live stream, and keep each partner and merchant to its own records (set PAYLATER_HOSTED=0 to turn it off beyond loopback)',
    docs: 'Hosted mode (see "Hosting the sandbox"): the `/sandbox/` endpoints, the deliveries list and the live stream need a credential, and each partner and merchant sees and controls only its own records. On by itself when `--host` is not a loopback address; `PAYLATER_HOSTED=0` turns it off.',
  },
  {
    key: 'operatorToken', env: 'PAYLATER_OPERATOR_TOKEN', kind: 'text', default: undefined, shownDefault: 'made at start',
    help: 'the operator token of the hosted mode',
    docs: 'The operator token of the hosted mode (`Authorization: Bearer <token>`); by default a random one is made at start and printed in the banner when hosted.',
  },
  { key: 'merchantApi.username', env: 'PAYLATER_MERCHANT_API_USERNAME', kind: 'text', default: TEST_CREDENTIALS.merchantApi.username, help: 'Gateway Merchant API username', docs: 'Gateway Merchant API username.' },
  { key: 'merchantApi.password', env: 'PAYLATER_MERCHANT_API_PASSWORD', kind: 'text', default: TEST_CREDENTIALS.merchantApi.password, help: 'Gateway Merchant API password', docs: 'Gateway Merchant API password.' },
  { key: 'extras.username', env: 'PAYLATER_EXTRAS_USERNAME', kind: 'text', default: TEST_CREDENTIALS.extras.username, help: 'extras username', docs: 'Extras username.' },
  { key: 'extras.password', env: 'PAYLATER_EXTRAS_PASSWORD', kind: 'text', default: TEST_CREDENTIALS.extras.password, help: 'extras password', docs: 'Extras password.' },
  { key: 'partner.id', env: 'PAYLATER_PARTNER_ID', kind: 'text', default: TEST_CREDENTIALS.partner.id, help: 'web and SDK partner id', docs: 'Web and SDK partner id.' },
  { key: 'partner.privateKey', env: 'PAYLATER_PRIVATE_KEY', kind: 'text', default: TEST_CREDENTIALS.partner.privateKey, help: 'web and SDK private key', docs: 'Web and SDK private key.' },
] as const satisfies readonly Setting[];

export const SETTINGS: readonly Setting[] = Object.freeze(TABLE);

/** The type of a setting's value: what its kind reads as, or undefined when it has no default. */
type ValueOf<S extends Setting> =
  | (S['kind'] extends 'port' | 'count' ? number : S['kind'] extends 'switch' ? boolean : string)
  | (undefined extends S['default'] ? undefined : never);
/** `{ limits: { jsonDepth: V } }` for the key `limits.jsonDepth`. */
type Placed<K extends string, V> = K extends `${infer Head}.${infer Rest}` ? { [P in Head]: Placed<Rest, V> } : { [P in K]: V };
type PlacedSetting<S> = S extends Setting ? Placed<S['key'], ValueOf<S>> : never;
/** `A & B` of a union `A | B`. */
type Intersection<U> = (U extends unknown ? (value: U) => void : never) extends (value: infer I) => void ? I : never;
/** One object type of nested intersections, as an editor shows it. */
type Flat<T> = T extends object ? { [K in keyof T]: Flat<T[K]> } : T;

/** The settings as the configuration holds them, each at its key, typed by its row. */
export type TableSettings = Flat<Intersection<PlacedSetting<(typeof TABLE)[number]>>>;

/** `MAX_CONNECTIONS` -> `maxConnections`. */
type Camel<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Lowercase<Head>}${Capitalize<Camel<Tail>>}` : Lowercase<S>;
type VariableName<E extends string> = E extends `PAYLATER_${infer Rest}` ? Camel<Rest> : never;

/** Each setting's environment variable by a short name: `ENVIRONMENT.maxConnections` is `PAYLATER_MAX_CONNECTIONS`. */
export const ENVIRONMENT = Object.freeze(
  Object.fromEntries(
    SETTINGS.map(({ env }) => [env.slice('PAYLATER_'.length).toLowerCase().replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase()), env]),
  ),
) as { readonly [S in (typeof TABLE)[number] as VariableName<S['env']>]: S['env'] };

/** Parses a TCP port (0 picks a free one). */
function parsePort(value: string, setting: string): number {
  if (!/^[0-9]{1,5}$/.test(value) || Number(value) > 65535) {
    throw new ConfigError(`${setting} must be a port number from 0 to 65535`);
  }
  return Number(value);
}

/** A whole number from 1 to `max` (a flag or variable); undefined when not given. */
function parseCount(value: string | undefined, setting: string, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[0-9]{1,10}$/.test(value) || Number(value) < 1 || Number(value) > max) {
    throw new ConfigError(`${setting} must be a whole number from 1 to ${max}`);
  }
  return Number(value);
}

/** `1`/`true`/`yes` or `0`/`false`/`no` (any case). */
function parseSwitch(value: string, setting: string): boolean {
  const lower = value.toLowerCase();
  if (['1', 'true', 'yes'].includes(lower)) return true;
  if (['0', 'false', 'no'].includes(lower)) return false;
  throw new ConfigError(`${setting} must be 1 or 0 (true or false)`);
}

/** The value of `setting` read from `text` (a variable's value), named `name` in messages. */
function parse(setting: Setting, text: string, name: string): string | number | boolean {
  switch (setting.kind) {
    case 'port':
      return parsePort(text, name);
    case 'count':
      return parseCount(text, name, setting.max!)!;
    case 'switch':
      return parseSwitch(text, name);
    case 'text':
      return text;
  }
}

/** Sets `value` at the dotted `key` of `target`, making the objects on the way. */
function place(target: Record<string, unknown>, key: string, value: unknown): void {
  const parts = key.split('.');
  let at = target;
  for (const part of parts.slice(0, -1)) at = (at[part] ??= {}) as Record<string, unknown>;
  at[parts.at(-1)!] = value;
}

/** Every setting's default, placed at its key (settings without a default are left out). */
export function settingDefaults(): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const setting of SETTINGS) if (setting.default !== undefined) place(values, setting.key, setting.default);
  return values;
}

/** The settings given by environment variables, placed at their keys; an empty variable counts as unset. */
export function settingsFromEnvironment(env: Record<string, string | undefined>): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const setting of SETTINGS) {
    const text = env[setting.env];
    if (text !== undefined && text !== '') place(values, setting.key, parse(setting, text, setting.env));
  }
  return values;
}

/** The options of `paylater sandbox` for node:util's parseArgs, one per setting with a flag. */
export function settingOptions(): Record<string, { type: 'string' | 'boolean' }> {
  const options: Record<string, { type: 'string' | 'boolean' }> = {};
  for (const setting of SETTINGS) if (setting.flag !== undefined) options[setting.flag] = { type: setting.kind === 'switch' ? 'boolean' : 'string' };
  return options;
}

/** The settings given by flags (parsed by {@link settingOptions}), placed at their keys. */
export function settingsFromFlags(values: Record<string, string | boolean | undefined>): Record<string, unknown> {
  const placed: Record<string, unknown> = {};
  for (const setting of SETTINGS) {
    if (setting.flag === undefined) continue;
    const given = values[setting.flag];
    if (given === undefined) continue;
    if (setting.kind === 'switch') {
      if (given === true) place(placed, setting.key, setting.flagSets);
    } else {
      place(placed, setting.key, parse(setting, String(given), `--${setting.flag}`));
    }
  }
  return placed;
}

/** Each count setting's key with its name for messages and its largest value, to check values set in code. */
export function countSettings(): { key: string; name: string; max: number }[] {
  return SETTINGS.filter((setting) => setting.kind === 'count').map((setting) => ({
    key: setting.key,
    name: setting.flag === undefined ? setting.env : `--${setting.flag}`,
    max: setting.max!,
  }));
}

/** How a default reads: a count with thousands separators, a byte size in MiB, on/off. */
function shownDefault(setting: Setting): string {
  if (setting.shownDefault !== undefined) return setting.shownDefault;
  const value = setting.default;
  if (value === undefined) return 'none';
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  if (typeof value === 'number' && setting.key.endsWith('Bytes')) return `${value} (${value / MiB} MiB)`;
  return String(value);
}

/** The range of a count, for the help and the docs. */
function range(setting: Setting): string {
  return setting.kind === 'count' ? `, 1 to ${setting.max}` : setting.kind === 'port' ? ', 0 to 65535' : '';
}

/** How the flag is written with its value (`--port PORT`). */
function flagWithValue(setting: Setting): string {
  return `--${setting.flag}${setting.value === undefined ? '' : ` ${setting.value}`}`;
}

/** How the variable is written (`PAYLATER_X=1` for a switch's flag value). */
function variable(setting: Setting): string {
  return setting.kind === 'switch' ? `${setting.env}=${setting.flagSets === false ? 0 : 1}` : setting.env;
}

/** Wraps `text` at `width` columns, each line after the first indented by `indent` spaces. */
function wrap(text: string, width: number, indent: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = ' '.repeat(indent) + word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  lines.push(line);
  return lines.join('\n');
}

/** The options part of `paylater sandbox --help`: two lines or more per setting with a flag. */
export function settingsHelp(): string {
  return SETTINGS.filter((setting) => setting.flag !== undefined)
    .map((setting) => {
      const detail = `${setting.help} (default ${shownDefault(setting)}${range(setting)}) [${variable(setting)}]`;
      return `  ${flagWithValue(setting)}\n${wrap(`      ${detail}`, 100, 6)}`;
    })
    .join('\n');
}

/** The variables read from the environment only, for the help. */
export function environmentOnlyHelp(): string {
  return SETTINGS.filter((setting) => setting.flag === undefined)
    .map((setting) => `  ${setting.env}: ${setting.help} (default ${shownDefault(setting)})`)
    .join('\n');
}

/** A limit's default as the budget table reads it: `256 MiB`, `200,000`. */
function budgetDefault(value: number, key: string): string {
  return key.endsWith('Bytes') ? `${value / MiB} MiB` : value.toLocaleString('en-US');
}

/** The table of docs/sandbox.md's "Limits and memory budget" (Markdown), one row per limit. */
export function budgetTable(): string {
  const rows = SETTINGS.filter((setting) => setting.budget !== undefined).map(
    (setting) =>
      `| ${setting.budget!.what} | ${budgetDefault(setting.default as number, setting.key)} | \`--${setting.flag}\` / \`${setting.env}\` | ${setting.budget!.reached} |`,
  );
  return ['| Limit | Default | Flag / variable | When it is reached |', '|---|---|---|---|', ...rows].join('\n');
}

/** The settings table of docs/sandbox.md (Markdown), one row per setting. */
export function settingsTable(): string {
  const code = (text: string) => `\`${text}\``;
  const rows = SETTINGS.map((setting) => {
    const flag = setting.flag === undefined ? '' : code(flagWithValue(setting));
    const shown = shownDefault(setting);
    const value = setting.default === undefined || typeof setting.default === 'boolean' || setting.shownDefault !== undefined ? shown : code(shown);
    const bounds = setting.kind === 'count' ? ` From 1 to ${setting.max}.` : '';
    return `| ${flag} | ${code(variable(setting))} | ${value} | ${setting.docs}${bounds} |`;
  });
  return ['| Flag | Environment variable | Default | What it does |', '|---|---|---|---|', ...rows].join('\n');
}
