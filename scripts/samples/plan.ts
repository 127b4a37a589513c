/**
 * What each code sample does, independent of its language: the calls of one complete program,
 * made from the contract's own request examples, and what it prints. The per-language templates
 * (curl.ts, node.ts, php.ts, python.ts) turn a plan into a program.
 *
 * A sample runs standalone against the sandbox: the state an operation needs (an enabled merchant, a
 * transaction that succeeded, ...) is set up first by the program itself, through the contract's
 * operations and the sandbox's control endpoints (`/sandbox/...`). Ids of the examples get a random
 * suffix (`${run}`), so a sample can run again and again against the same sandbox.
 *
 * Templates: a string may reference variables as `${name}`; `run` is the random suffix and
 * `tomorrowIst` tomorrow's date in India (`YYYY-MM-DD`, the settlement dates' zone), the others
 * are set by `vars` or saved from an earlier answer (`save`). A string that is exactly
 * `${name}` of a variable listed in `numbers` stands for that number.
 */
import type { Family } from '../families.js';

/** Which credentials a call takes. */
export type Auth = 'merchantApi' | 'transactional' | 'extras' | 'web' | 'sdk' | 'none';

/** A path into a JSON answer: keys and array indexes. */
export type JsonPath = readonly (string | number)[];

export interface Step {
  /** What the step does, as a comment in the program ("Create the merchant"). */
  title: string;
  /** The contract operation; absent for a sandbox control endpoint. */
  operationId?: string;
  auth: Auth;
  method: 'GET' | 'POST';
  /** The path as the document writes it, `{name}` for path parameters. */
  path: string;
  /** Path parameter values (templates). */
  params?: Readonly<Record<string, string>>;
  /** Query parameters in order (templates; encoded when sent). */
  query?: readonly (readonly [string, string])[];
  /** The JSON body (strings are templates), sent compact as the exact bytes signed. */
  body?: unknown;
  /** Variables saved from the answer. */
  save?: Readonly<Record<string, JsonPath>>;
}

export interface OperationPlan {
  kind: 'operation';
  family: Family;
  operationId: string;
  summary: string;
  /** Variables set before the first call, in order (templates). */
  vars: readonly (readonly [string, string])[];
  /** Variables that hold numbers. */
  numbers: readonly string[];
  /** The set-up calls, then the operation itself (the last step). */
  steps: readonly Step[];
  /** Fields of the last answer the program prints after its first line, `HTTP <status>`. */
  print: readonly JsonPath[];
  /** A response header the program prints instead of body fields (a non-JSON answer). */
  printHeader?: string;
  /**
   * The answer carries the web flow's status signature of its `transactionId` and `status` (D22):
   * the program checks it and prints `signature valid: true|false` last.
   */
  checkStatusSignature?: boolean;
}

export interface WebhookPlan {
  kind: 'webhook';
  family: Family;
  /** The webhook's name in the document (`transactionStatus`, `refundUpdated`, ...). */
  name: string;
  operationId: string;
  summary: string;
  /** The key of `X-Signature`: the partner's private key, or the merchant's Transactional API password. */
  secret: 'privateKey' | 'transactionalPassword';
  /** The web flow's body carries the status signature of `transactionId` and `status` too (D22). */
  statusSignature: boolean;
  /** The family has other webhooks, sent to the same URL: the receiver picks this one by the verified event's `name`. */
  sharesUrl: boolean;
  /** Fields of the verified body the receiver prints. */
  print: readonly JsonPath[];
}

export type SamplePlan = OperationPlan | WebhookPlan;

/** The path written `a.b.0.c`, as the programs print it. */
export function pathName(path: JsonPath): string {
  return path.join('.');
}

/** Splits a template into literal text and variable references. */
export function templateParts(template: string): ({ text: string } | { variable: string })[] {
  const parts: ({ text: string } | { variable: string })[] = [];
  const pattern = /\$\{([A-Za-z][A-Za-z0-9]*)\}/g;
  let last = 0;
  for (const match of template.matchAll(pattern)) {
    if (match.index > last) parts.push({ text: template.slice(last, match.index) });
    parts.push({ variable: match[1]! });
    last = match.index + match[0].length;
  }
  if (last < template.length) parts.push({ text: template.slice(last) });
  return parts;
}

/** The variable a template is made of alone, if it is exactly `${name}`. */
export function soleVariable(template: string): string | undefined {
  return /^\$\{([A-Za-z][A-Za-z0-9]*)\}$/.exec(template)?.[1];
}

/** `merchantId` as `MERCHANT_ID` (shell) or `merchant_id` (Python). */
export function snakeCase(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/**
 * The path and query a step sends, as a template: path parameters filled in, the query's literal
 * text percent-encoded now (its variables hold ids, which need no encoding). This exact string is
 * what a web-flow signature covers.
 */
export function requestTarget(step: Step): string {
  let path = step.path;
  for (const [name, template] of Object.entries(step.params ?? {})) path = path.replace(`{${name}}`, template);
  const query = (step.query ?? [])
    .map(([name, template]) => `${encodeURIComponent(name)}=${templateParts(template).map((part) => ('text' in part ? encodeURIComponent(part.text) : `\${${part.variable}}`)).join('')}`)
    .join('&');
  return query === '' ? path : `${path}?${query}`;
}

/** How a language writes a JSON value as a literal of its own. */
export interface LiteralSyntax {
  /** A string template (literal text and variables). */
  string(template: string): string;
  /** An object key. */
  key(key: string): string;
  /** Between a key and its value. */
  colon: string;
  /** The empty object (`{}`, PHP's `new stdClass()`). */
  emptyObject: string;
  /** Brackets of an object (PHP writes `[`, `]`). */
  object: readonly [string, string];
  null: string;
  true: string;
  false: string;
  /** One level of indentation. */
  indent: string;
}

/** A JSON value whose strings are templates, as a multi-line literal in a language's syntax. */
export function renderLiteral(value: unknown, syntax: LiteralSyntax, indent = ''): string {
  if (typeof value === 'string') return syntax.string(value);
  const inner = indent + syntax.indent;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((item) => `${inner}${renderLiteral(item, syntax, inner)},`).join('\n')}\n${indent}]`;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 0) return syntax.emptyObject;
    const [open, close] = syntax.object;
    return `${open}\n${entries.map(([key, item]) => `${inner}${syntax.key(key)}${syntax.colon}${renderLiteral(item, syntax, inner)},`).join('\n')}\n${indent}${close}`;
  }
  if (value === null) return syntax.null;
  if (value === true) return syntax.true;
  if (value === false) return syntax.false;
  return JSON.stringify(value);
}

// ---------------------------------------------------------------------------------------------
// The plans, from the bundled documents' examples.

type Document = Record<string, any>;

function resolve(document: Document, value: any): any {
  let current = value;
  while (current && typeof current === 'object' && typeof current.$ref === 'string') {
    current = (current.$ref as string)
      .slice(2)
      .split('/')
      .map((key) => key.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((node: any, key) => node?.[key], document);
  }
  return current;
}

interface OperationInfo {
  path: string;
  method: string;
  operation: any;
}

function operations(document: Document): Map<string, OperationInfo> {
  const found = new Map<string, OperationInfo>();
  for (const [path, item] of Object.entries<any>(document.paths ?? {})) {
    for (const [method, operation] of Object.entries<any>(item)) {
      if (operation && typeof operation === 'object' && typeof operation.operationId === 'string') {
        found.set(operation.operationId, { path, method: method.toUpperCase(), operation });
      }
    }
  }
  return found;
}

/** Reads the contract: request examples and parameter examples of its operations. */
class Contract {
  readonly byId: Map<string, OperationInfo>;

  constructor(readonly document: Document) {
    this.byId = operations(document);
  }

  info(operationId: string): OperationInfo {
    const info = this.byId.get(operationId);
    if (info === undefined) throw new Error(`the document has no operation ${operationId}`);
    return info;
  }

  /** A copy of the named request-body example of an operation (the first one without a name). */
  example(operationId: string, name?: string): any {
    const { operation } = this.info(operationId);
    const content = resolve(this.document, operation.requestBody)?.content?.['application/json'];
    const examples = content?.examples ?? {};
    const key = name ?? Object.keys(examples)[0];
    const example = key === undefined ? undefined : resolve(this.document, examples[key]);
    if (example === undefined || !('value' in example)) {
      throw new Error(`${operationId} has no request example ${name ?? '(any)'}`);
    }
    return structuredClone(example.value);
  }

  /** The example of a parameter, from the parameter or its schema. */
  parameterExample(operationId: string, name: string): string {
    const { operation, path } = this.info(operationId);
    const item = this.document.paths[path];
    const parameters = [...(item.parameters ?? []), ...(operation.parameters ?? [])].map((p: any) => resolve(this.document, p));
    const parameter = parameters.find((p: any) => p.name === name);
    const value = parameter?.example ?? parameter?.schema?.example ?? parameter?.schema?.examples?.[0];
    if (value === undefined) throw new Error(`${operationId}: the parameter ${name} has no example`);
    return String(value);
  }

  /** A contract call: the method and path come from the document. */
  call(operationId: string, auth: Auth, title: string, rest: Omit<Step, 'operationId' | 'auth' | 'method' | 'path' | 'title'> = {}): Step {
    const { path, method } = this.info(operationId);
    if (method !== 'GET' && method !== 'POST') throw new Error(`${operationId}: ${method} is not supported by the samples`);
    return { title, operationId, auth, method, path, ...rest };
  }
}

/** A POST to a sandbox control endpoint. */
function control(title: string, path: string, rest: Pick<Step, 'body' | 'save'> = {}): Step {
  return { title, auth: 'none', method: 'POST', path, ...rest };
}

function pick<T extends Record<string, unknown>>(value: T, keys: readonly (keyof T)[]): Partial<T> {
  return Object.fromEntries(keys.filter((key) => key in value).map((key) => [key, value[key]])) as Partial<T>;
}

/** The sandbox's test OTP (docs/sandbox.md): the examples show another, which the sandbox refuses. */
const SANDBOX_OTP = '123456';

function gatewayPlans(contract: Contract): OperationPlan[] {
  const merchantVar: [string, string] = ['merchantId', `${contract.example('createMerchant').merchant.id}_\${run}`];

  const createMinimal = (): Step => {
    const { merchant } = contract.example('createMerchant');
    // Without images, settlement details and a webhook URL: the merchant these samples need.
    return contract.call('createMerchant', 'merchantApi', 'Create a merchant (Merchant API credentials)', {
      body: { merchant: { id: '${merchantId}', ...pick(merchant, ['brandName', 'entityName', 'brandHomePageUrl', 'mccCode']) } },
    });
  };
  const upload = (example: string, what: string): Step =>
    contract.call('uploadMerchantDocument', 'merchantApi', `Upload its ${what}`, {
      params: { id: '${merchantId}' },
      body: contract.example('uploadMerchantDocument', example),
    });
  /** A merchant that is enabled, and its Transactional API credentials. */
  const onboard = (): Step[] => [
    createMinimal(),
    upload('pan', 'PAN'),
    upload('cancelledCheque', 'cancelled cheque'),
    control('Finish its verification now (sandbox; otherwise it takes 5 s) and read its Transactional API credentials', '/sandbox/gateway/merchants/${merchantId}/verify', {
      save: {
        transactionalUsername: ['merchant', 'basicAuthDetails', 'username'],
        transactionalPassword: ['merchant', 'basicAuthDetails', 'password'],
      },
    }),
  ];

  const transactionVar: [string, string] = ['transactionId', `${contract.example('createTransaction', 'withPreEligibilityCheck').transaction.id}_\${run}`];
  const preEligibility = (): Step =>
    contract.call('checkPreEligibility', 'transactional', 'Check the user’s pre-eligibility', {
      body: contract.example('checkPreEligibility', 'check'),
      save: { checkId: ['preEligibilityCheck', 'id'] },
    });
  const createTransaction = (title: string): Step => {
    const body = contract.example('createTransaction', 'withPreEligibilityCheck');
    // The example's webhook URL and fixed expiry are left out: the sandbox would send the webhook
    // there, and the expiry must lie in the future.
    delete body.createConfiguration;
    body.transaction.id = '${transactionId}';
    body.preEligibilityCheckId = '${checkId}';
    return contract.call('createTransaction', 'transactional', title, { body });
  };
  const stage = (): Step =>
    contract.call('getTransaction', 'transactional', 'Read its next step: the OTP option', {
      params: { id: '${transactionId}' },
      query: [['include', 'stage']],
      save: { referenceId: ['transactionStage', 'nextStep', 'options', 'userInputOptions', 0, 'referenceId'] },
    });
  const otp = (): Step =>
    contract.call('submitUserInput', 'transactional', `Submit the user’s OTP (the sandbox’s test OTP is ${SANDBOX_OTP})`, {
      params: { transactionId: '${transactionId}', referenceId: '${referenceId}' },
      body: { ...contract.example('submitUserInput', 'otp'), value: SANDBOX_OTP },
      save: { downPayment: ['transactionStage', 'nextStep', 'options', 'paymentOptions', 'amount'] },
    });
  const register = (): Step => {
    const body = contract.example('registerExternalPayment', 'upi');
    body.metaData.amount = '${downPayment}';
    return contract.call('registerExternalPayment', 'transactional', 'Register the down payment the PG collected', {
      params: { transactionId: '${transactionId}' },
      body,
    });
  };
  const confirm = (): Step =>
    control('Move the sandbox clock 2 s on: the down payment is confirmed, the transaction is SUCCESS', '/sandbox/clock/advance', { body: { ms: 2000 } });
  const upToPayment = (): Step[] => [...onboard(), preEligibility(), createTransaction('Create the transaction'), stage(), otp()];
  const succeeded = (): Step[] => [...upToPayment(), register(), confirm()];

  const plan = (operationId: string, rest: Omit<OperationPlan, 'kind' | 'family' | 'operationId' | 'summary' | 'numbers'> & { numbers?: string[] }): OperationPlan => ({
    kind: 'operation',
    family: 'gateway',
    operationId,
    summary: contract.info(operationId).operation.summary,
    numbers: [],
    ...rest,
  });
  const withTransaction = [merchantVar, transactionVar] as const;

  const refundBody = contract.example('refundTransaction', 'partialRefund');
  delete refundBody.createConfiguration;
  refundBody.refund.id = `${refundBody.refund.id}_\${run}`;

  return [
    plan('createMerchant', {
      vars: [merchantVar],
      steps: [
        contract.call('createMerchant', 'merchantApi', 'Create the merchant (Merchant API credentials)', {
          body: { ...contract.example('createMerchant'), merchant: { ...contract.example('createMerchant').merchant, id: '${merchantId}' } },
        }),
      ],
      print: [['merchant', 'id'], ['merchant', 'stage']],
    }),
    plan('getMerchantConfiguration', {
      vars: [merchantVar],
      steps: [...onboard(), contract.call('getMerchantConfiguration', 'transactional', 'Read the merchant’s configuration (its Transactional API credentials)')],
      print: [['version'], ['maxOrderAmount']],
    }),
    plan('getMerchant', {
      vars: [merchantVar],
      steps: [createMinimal(), contract.call('getMerchant', 'merchantApi', 'Read the merchant', { params: { id: '${merchantId}' } })],
      print: [['merchant', 'id'], ['merchant', 'stage']],
    }),
    plan('uploadMerchantDocument', {
      vars: [merchantVar],
      steps: [createMinimal(), upload('pan', 'PAN')],
      print: [['merchant', 'stage'], ['merchant', 'documents', 0, 'documentType'], ['merchant', 'documents', 0, 'status']],
    }),
    plan('disableMerchant', {
      vars: [merchantVar],
      steps: [
        createMinimal(),
        contract.call('disableMerchant', 'merchantApi', 'Disable the merchant', {
          params: { id: '${merchantId}' },
          body: contract.example('disableMerchant', 'withReason'),
        }),
      ],
      print: [['merchant', 'id'], ['merchant', 'stage']],
    }),
    plan('createDashboardAccess', {
      vars: [merchantVar],
      steps: [
        createMinimal(),
        contract.call('createDashboardAccess', 'merchantApi', 'Invite a user to the merchant’s dashboard', {
          params: { id: '${merchantId}' },
          body: contract.example('createDashboardAccess', 'invite'),
        }),
      ],
      print: [['dashboardAccess', 'email'], ['dashboardAccess', 'loginUrl']],
    }),
    plan('checkPreEligibility', {
      vars: [merchantVar],
      steps: [...onboard(), { ...preEligibility(), title: 'Check the user’s pre-eligibility', save: {} }],
      print: [['preEligibilityCheck', 'id'], ['preEligibilityCheck', 'eligible']],
    }),
    plan('createTransaction', {
      vars: withTransaction,
      steps: [...onboard(), preEligibility(), createTransaction('Create the transaction, referencing the check')],
      print: [['transaction', 'id'], ['transaction', 'status']],
    }),
    plan('listTransactions', {
      vars: withTransaction,
      steps: [
        ...onboard(),
        preEligibility(),
        createTransaction('Create a transaction'),
        contract.call('listTransactions', 'transactional', 'List the merchant’s pending transactions, newest first', {
          query: [['status', 'PENDING'], ['limit', '20']],
        }),
      ],
      print: [['transactions', 0, 'id'], ['transactions', 0, 'status'], ['nextCursor']],
    }),
    plan('getTransaction', {
      vars: withTransaction,
      steps: [
        ...onboard(),
        preEligibility(),
        createTransaction('Create the transaction'),
        { ...stage(), title: 'Read the transaction with its next step', save: {} },
      ],
      print: [['transaction', 'id'], ['transaction', 'status'], ['transactionStage', 'nextStep', 'step']],
    }),
    plan('submitUserInput', {
      vars: withTransaction,
      steps: [...onboard(), preEligibility(), createTransaction('Create the transaction'), stage(), { ...otp(), save: {} }],
      print: [['transaction', 'status'], ['transactionStage', 'nextStep', 'step'], ['transactionStage', 'nextStep', 'options', 'paymentOptions', 'amount']],
    }),
    plan('registerExternalPayment', {
      vars: withTransaction,
      numbers: ['downPayment'],
      steps: [...upToPayment(), register()],
      print: [['transaction', 'status'], ['transaction', 'downPayment', 'amount'], ['transactionStage', 'nextStep', 'step']],
    }),
    plan('refundTransaction', {
      vars: withTransaction,
      numbers: ['downPayment'],
      steps: [
        ...succeeded(),
        contract.call('refundTransaction', 'transactional', 'Refund part of the transaction', { params: { transactionId: '${transactionId}' }, body: refundBody }),
      ],
      print: [['refund', 'id'], ['refund', 'amount'], ['refund', 'status']],
    }),
    plan('cancelTransaction', {
      vars: withTransaction,
      steps: [
        ...onboard(),
        preEligibility(),
        createTransaction('Create the transaction'),
        contract.call('cancelTransaction', 'transactional', 'Cancel it (a GET that changes the transaction)', { params: { transactionId: '${transactionId}' } }),
      ],
      print: [['transaction', 'id'], ['transaction', 'status'], ['transaction', 'failureReason']],
    }),
    plan('getSettlement', {
      vars: withTransaction,
      numbers: ['downPayment'],
      steps: [
        ...succeeded(),
        contract.call('getSettlement', 'transactional', 'Read the settlements up to tomorrow (India time): today’s transactions settle tomorrow', {
          query: [['to', '${tomorrowIst}']],
        }),
      ],
      print: [['settlements', 0, 'settlementDate'], ['settlements', 0, 'grossAmount'], ['settlements', 0, 'status']],
    }),
  ];
}

function extrasPlans(contract: Contract): OperationPlan[] {
  const plan = (operationId: string, step: Step, print: JsonPath[]): OperationPlan => ({
    kind: 'operation',
    family: 'extras',
    operationId,
    summary: contract.info(operationId).operation.summary,
    vars: [],
    numbers: [],
    steps: [step],
    print,
  });
  return [
    plan(
      'getCreditInfo',
      contract.call('getCreditInfo', 'extras', 'Read the user’s credit info (the phone number in the query)', {
        query: [['userPhoneNumber', contract.parameterExample('getCreditInfo', 'userPhoneNumber')]],
      }),
      [['registrationStatus'], ['creditLimit'], ['creditTaken'], ['upcomingDueDate']],
    ),
    plan(
      'pushIdentification',
      contract.call('pushIdentification', 'extras', 'Push the user’s identification', { body: contract.example('pushIdentification', 'both') }),
      [['message']],
    ),
    plan(
      'pushMerchantData',
      contract.call('pushMerchantData', 'extras', 'Push what the merchant knows about the user', { body: contract.example('pushMerchantData', 'object') }),
      [['message']],
    ),
  ];
}

function webPlans(contract: Contract): OperationPlan[] {
  const initiateBody = contract.example('initiateWebTransaction', 'initiate');
  const idVar: [string, string] = ['transactionId', `${initiateBody.id}_\${run}`];
  const initiate = (title: string): Step =>
    contract.call('initiateWebTransaction', 'web', title, { body: { ...initiateBody, id: '${transactionId}' } });
  const plan = (operationId: string, rest: Pick<OperationPlan, 'steps' | 'print'> & Partial<OperationPlan>): OperationPlan => ({
    kind: 'operation',
    family: 'web',
    operationId,
    summary: contract.info(operationId).operation.summary,
    vars: [idVar],
    numbers: [],
    ...rest,
  });
  return [
    plan('initiateWebTransaction', {
      steps: [initiate('Initiate the transaction (signed over body + path + key)')],
      print: [['message'], ['redirectUrl']],
    }),
    plan('getWebTransactionStatus', {
      steps: [
        initiate('Initiate a transaction'),
        contract.call('getWebTransactionStatus', 'web', 'Check its status (signed over the empty body + path and query + key)', {
          query: [['id', '${transactionId}']],
        }),
      ],
      print: [['transactionId'], ['status'], ['signature']],
      checkStatusSignature: true,
    }),
    plan('refundWebTransaction', {
      steps: [
        initiate('Initiate a transaction'),
        control('The user confirms it on the hosted page (sandbox)', '/sandbox/web/transactions/${transactionId}/confirm'),
        contract.call('refundWebTransaction', 'web', 'Refund part of it (signed over body + path + key)', {
          body: { ...contract.example('refundWebTransaction', 'partialRefund'), transactionId: '${transactionId}' },
        }),
      ],
      print: [['message']],
    }),
    plan('downloadBrowserScript', {
      vars: [],
      steps: [contract.call('downloadBrowserScript', 'none', 'Download the browser script (no credentials)')],
      print: [],
      printHeader: 'content-type',
    }),
  ];
}

function sdkPlans(contract: Contract): OperationPlan[] {
  const initiateBody = contract.example('initiateSdkTransaction', 'initiate');
  const idVar: [string, string] = ['orderId', `${initiateBody.merchantTransactionId}_\${run}`];
  const initiate = (title: string): Step =>
    contract.call('initiateSdkTransaction', 'sdk', title, { body: { ...initiateBody, merchantTransactionId: '${orderId}' } });
  const plan = (operationId: string, steps: Step[], print: JsonPath[]): OperationPlan => ({
    kind: 'operation',
    family: 'sdk',
    operationId,
    summary: contract.info(operationId).operation.summary,
    vars: [idVar],
    numbers: [],
    steps,
    print,
  });
  return [
    plan('initiateSdkTransaction', [initiate('Initiate the transaction (signed over body + key)')], [['message']]),
    plan(
      'checkSdkTransactionStatus',
      [
        initiate('Initiate a transaction'),
        contract.call('checkSdkTransactionStatus', 'sdk', 'Check its status (signed over body + key)', {
          body: { ...contract.example('checkSdkTransactionStatus', 'checkStatus'), merchantTransactionId: '${orderId}' },
        }),
      ],
      [['message']],
    ),
    plan(
      'refundSdkTransaction',
      [
        initiate('Initiate a transaction'),
        control('The user confirms it in the app (sandbox)', '/sandbox/sdk/transactions/${orderId}/confirm'),
        contract.call('refundSdkTransaction', 'sdk', 'Refund part of it (signed over body + key; always send amount)', {
          body: { ...contract.example('refundSdkTransaction', 'partialRefund'), merchantTransactionId: '${orderId}' },
        }),
      ],
      [['message']],
    ),
  ];
}

/** A field a webhook receiver prints: an id (`id`, `transactionId`, ...) or the status. */
const PRINTED_FIELD = /^(?:id|[a-z][A-Za-z]*Id|status)$/;

/**
 * What a webhook's receiver prints, read from its body's schema: the required ids and the status,
 * in the schema's order (the pair to deduplicate on), inside the body's envelope if it has one.
 */
function webhookFields(document: Document, operation: any): JsonPath[] {
  const body = resolve(document, resolve(document, operation.requestBody)?.content?.['application/json']?.schema);
  const keys = Object.keys(body?.properties ?? {});
  const envelope = keys.length === 1 && body.additionalProperties === false && body.required?.includes(keys[0]) ? keys[0] : undefined;
  const inner = envelope === undefined ? body : resolve(document, body.properties[envelope]);
  const required = new Set<string>(inner?.required ?? []);
  const fields = Object.keys(inner?.properties ?? {}).filter((key) => required.has(key) && PRINTED_FIELD.test(key));
  return fields.map((key) => (envelope === undefined ? [key] : [envelope, key]));
}

function webhookPlans(family: Family, document: Document): WebhookPlan[] {
  const plans: WebhookPlan[] = [];
  const webhooks = Object.entries<any>(document.webhooks ?? {});
  for (const [name, item] of webhooks) {
    const operation = item.post;
    if (operation === undefined) throw new Error(`no sample plan for the webhook ${family}/${name}: it is not a POST`);
    const print = webhookFields(document, operation);
    if (print.length === 0) {
      throw new Error(`no sample plan for the webhook ${family}/${name}: its body (or its one wrapped object) has no required id or status to print; require one`);
    }
    plans.push({
      kind: 'webhook',
      family,
      name,
      operationId: operation.operationId,
      summary: operation.summary,
      secret: family === 'gateway' ? 'transactionalPassword' : 'privateKey',
      statusSignature: family === 'web',
      sharesUrl: webhooks.length > 1,
      print,
    });
  }
  return plans;
}

const OPERATION_PLANS: Record<Family, (contract: Contract) => OperationPlan[]> = {
  gateway: gatewayPlans,
  extras: extrasPlans,
  web: webPlans,
  sdk: sdkPlans,
};

/** Every sample plan of a family's bundled document; fails when an operation has none. */
export function samplePlans(family: Family, document: Document): SamplePlan[] {
  const contract = new Contract(document);
  const plans = OPERATION_PLANS[family](contract);
  const planned = new Set(plans.map((plan) => plan.operationId));
  const missing = [...contract.byId.keys()].filter((id) => !planned.has(id));
  if (missing.length > 0) throw new Error(`no code sample plan for ${family} operations: ${missing.join(', ')}`);
  return [...plans, ...webhookPlans(family, document)];
}
