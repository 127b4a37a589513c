/**
 * The vocabulary of the compatibility suite's data (integrations.ts, flows.ts): what an
 * integration sends (a request template), how it judges the answer (a judge), what it does with
 * what the service sends it (the return URL, webhooks), and flows of steps between them.
 *
 * Templates: in a string, `{{name}}` is replaced by the flow value `name`. A body string that is
 * exactly `{{name}}` is replaced by the value itself, keeping its JSON type (a number stays a
 * number, an object an object); `{{name|omit-if-zero}}` drops the key when the value is 0 or
 * absent. `{{basic}}` is always base64(partnerId + ":" + privateKey), and `{{signature}}` the
 * request's signature when the request is signed.
 */
import type { JsonEncoding } from '../support/php-json.js';

export type IntegrationId = 'woocommerce-1.6' | 'woocommerce-1.5' | 'magento-2' | 'node-sample' | 'webview-sample' | 'php-sample' | 'upi-sample';

/** Where a fact comes from: repository, commit, file, function, and the fact sheet's section. */
export interface Source {
  repository: string;
  commit: string;
  path: string;
  where: string;
  facts: string;
}

export interface Integration {
  id: IntegrationId;
  name: string;
  /** How failures name it: "the plugin", "the module", "the sample". */
  subject: string;
  generation: string;
}

export type Template = string;

/**
 * The hosts the integrations call: `web` ({web_url}, version 1), `gateway` ({base_url}, version 2)
 * and `sdk` ({sdk_url}, the extras' host, which the UPI sample calls).
 */
export type HostName = 'web' | 'gateway' | 'sdk';

interface RequestSpec {
  host: HostName;
  method: 'GET' | 'POST';
  /** Path and query, sent byte for byte (the integrations do not URL-encode the ids they insert). */
  path: Template;
  /** Header names in the case and order the integration's code sets them; values are templates. */
  headers: ReadonlyArray<readonly [string, Template]>;
  /** The body as the integration builds it, and the encoder that turns it into bytes. */
  body?: { encoding: JsonEncoding; value: unknown };
  /** The web signature: base64(SHA-256(body bytes + path + key)), no separator, padded. */
  sign?: { path: Template; key: Template };
}

/** Which answers the integration goes on with. */
type Acceptance =
  /** `200 == code` (WooCommerce): any other status is a refusal; a 2xx other than 200 may be worse. */
  | { kind: 'exactly-200'; onOther2xx: string; onRefused: string }
  /** node-fetch `response.ok`. */
  | { kind: 'any-2xx'; onRefused: string }
  /** The status code is never looked at (Magento). */
  | { kind: 'not-checked'; note: string }
  /** 200 is read; any other answer is not an error but means `defaults` (the plugin's configuration call). */
  | { kind: '200-else-defaults'; defaults: Record<string, unknown>; onOther: string };

export type ValueType = 'string' | 'integer' | 'number' | 'http-url' | 'present';

/** A field of the decoded answer the integration uses. */
export interface Read {
  /** Dotted path in the decoded body, e.g. `transaction.url`. */
  field: string;
  type: ValueType;
  /** The flow value it is stored in. */
  into?: string;
  /** What the integration does when the field is absent or of another type. */
  ifMissing: string;
}

export type Match = { equals: unknown } | { phpLooseEquals: number } | { oneOf: readonly unknown[] } | { otherwise: true };

interface OutcomeCase {
  name: string;
  when: Match;
  /** What the integration then does. */
  does: string;
}

/** What the integration does next, chosen by one value it read. */
export interface Outcome {
  of: Template;
  cases: readonly OutcomeCase[];
}

/** A check of values (needs a service with state, so it is not asserted against the mock). */
export type Check =
  /** ≤1.5: base64(SHA-256(over joined without separator + key)) must equal the answer's signature. */
  | { kind: 'status-signature'; when: { value: Template; equals: string }; over: readonly Template[]; key: Template; signature: Template; ifMismatch: string }
  /** The plugin shows its payment method only when value < limit / divisor. */
  | { kind: 'below-limit'; value: Template; limit: Template; divisor: number; ifNot: string };

interface Judge {
  acceptance: Acceptance;
  /** `json-if-2xx-3xx`: the plugin's format_response decodes only 200 <= code < 400; `none`: the body is not read. */
  decodes: 'json' | 'json-if-2xx-3xx' | 'none';
  reads: readonly Read[];
  /** What it reads from a refused answer (to show it). */
  refusalReads?: readonly Read[];
  checks?: readonly Check[];
  outcome?: Outcome;
}

/** One request an integration sends, and how it judges the answer. */
export interface CallSpec {
  integration: IntegrationId;
  label: string;
  source: Source;
  request: RequestSpec;
  judge: Judge;
}

/** The shopper's browser arriving back at the integration's return URL. */
export interface ReturnSpec {
  integration: IntegrationId;
  label: string;
  source: Source;
  /** The URL the integration gave: the browser must come back to its origin, path and query parameters. */
  gave: Template;
  /** The query parameters it reads; `expected` is what the service must put there. */
  params: ReadonlyArray<{ param: string; into?: string; expected?: Template; ifMissing: string }>;
  outcome?: Outcome;
}

/** The service's webhook arriving at the integration's endpoint. */
export interface WebhookSpec {
  integration: IntegrationId;
  label: string;
  source: Source;
  /** How the endpoint answers every call. */
  answers: { status: number; headers?: Record<string, Template>; body: string };
  /**
   * What the endpoint reads: a JSON body, the query of the URL called (`$_GET`), a form body
   * (`$_POST`), or nothing.
   */
  decodes: 'json' | 'query' | 'form' | 'none';
  reads: readonly Read[];
  outcome?: Outcome;
}

/** What a step expects beyond the integration accepting the answer. */
export interface Expectation {
  /** The outcome case the integration must take. */
  outcome?: string;
  /** The integration must refuse the answer (and find what it reads from a refusal). */
  refused?: string;
  /** The outcome is a known divergence the decisions accept: on exactly `value`, with the decision and its reason. */
  divergence?: { decision: string; value: unknown; explanation: string };
  /** What the decisions promise for this answer (not something the integration checks). */
  decided?: { decision: string; status?: number; fields?: Record<string, unknown> };
}

/** What the people and systems around the integration do: a payment gateway, the shopper, time. */
export type ServiceAction =
  /** The payment gateway onboards the merchant with the Merchant API; sets partnerId and privateKey. */
  | { action: 'onboard-merchant' }
  /** The shopper opens the hosted page at `page`, enters the OTP and pays; sets `returnUrl`. */
  | { action: 'user-pays-web'; page: Template }
  /** The shopper cancels on the hosted page at `page`; sets `returnUrl`. */
  | { action: 'user-cancels-web'; page: Template }
  /** The shopper's OTP and down payment on the gateway's hosted page; sets `returnUrl`. */
  | { action: 'user-pays-gateway'; transactionId: Template; page: Template }
  /** The shopper enters a wrong OTP three times (user-inputs): the transaction fails (D15). */
  | { action: 'user-fails-gateway'; transactionId: Template }
  /** The shopper cancels on the gateway's hosted page; sets `returnUrl` (its cancelRedirectUrl). */
  | { action: 'user-cancels-gateway'; page: Template }
  /** Time passes (the sandbox's virtual clock): a cron's next run, an expiry. */
  | { action: 'time-passes'; minutes: number; why: string };

export type FlowStep =
  | { call: string; with?: Record<string, unknown>; expect?: Expectation }
  | { returnTo: string; expect?: Expectation }
  | { webhook: string; where: { field: string; equals: Template }; expect?: Expectation; deliveredOnce?: { decision: string } }
  | { service: ServiceAction };

/** Values known when a flow starts. */
interface FlowStart {
  /** The shop's origin: a local server answering like the shop's webhook endpoint. */
  site: string;
  nowSeconds: number;
  uuid(): string;
}

export interface Flow {
  id: string;
  integration: IntegrationId;
  title: string;
  /** The webhook spec whose answers the shop's server gives. */
  shop?: string;
  /** The web-flow partner's webhook URL, agreed with the operator (the sandbox's --webhook-url). */
  partnerWebhookUrl?: Template;
  given(start: FlowStart): Record<string, unknown>;
  steps: readonly FlowStep[];
  /** Played against the sandbox only, with the reason (the mock serves the web and gateway documents). */
  sandboxOnly?: string;
}
