/**
 * The replayer: plays an integration's flow (flows.ts) against a target, sending each request
 * byte for byte as the integration builds it (integrations.ts: its header names and order, its
 * JSON encoder, its signature over those exact bytes) with a raw HTTP client (no typed client of
 * this project), and judging every answer exactly as the integration does: the status codes it
 * accepts, the fields it reads, its own checks, and what it then does.
 *
 * A failed step is reported with the integration, the step and what the integration would have
 * done ("the plugin accepts only HTTP 200: got 201; ..."). The integration would stop at the first
 * failure; the replayer goes on with the steps whose values are known, so that one run shows every
 * difference, and marks the steps that lack a value as not reached.
 *
 * Against a target without state (the Prism mock) only the calls run, and only what does not
 * depend on state is judged: the status code, and the presence and type of each field read.
 */
import { createHash } from 'node:crypto';
import { encodeJson } from '../support/php-json.js';
import { sendRaw, type RawAnswer, type RawRequest } from '../support/raw-http.js';
import type { ShopReceiver, ShopRequest } from '../support/shop-receiver.js';
import { CALLS, INTEGRATIONS, RETURNS, WEBHOOKS } from './integrations.js';
import type {
  CallSpec,
  Check,
  Expectation,
  Flow,
  FlowStep,
  HostName,
  Match,
  Outcome,
  Read,
  ReturnSpec,
  ServiceAction,
  Template,
  ValueType,
  WebhookSpec,
} from './model.js';

export type Values = Record<string, unknown>;

/** The path the integration takes, and the value that chose it. */
interface ChosenOutcome {
  name: string;
  does: string;
  value: unknown;
}

/** A value a template needs was not produced by an earlier step. */
class MissingValue extends Error {
  constructor(readonly valueName: string) {
    super(`needs the value "${valueName}", which no earlier step produced`);
  }
}

// -------------------------------------------------------------------------------------------------
// Templates

const PLACEHOLDER = /\{\{([A-Za-z0-9_]+)(\|omit-if-zero)?\}\}/g;
const WHOLE = /^\{\{([A-Za-z0-9_]+)(\|omit-if-zero)?\}\}$/;
const OMIT = Symbol('omit');

function lookup(values: Values, name: string): unknown {
  if (name === 'basic') {
    const partnerId = lookup(values, 'partnerId');
    const privateKey = lookup(values, 'privateKey');
    return Buffer.from(`${String(partnerId)}:${String(privateKey)}`, 'utf8').toString('base64');
  }
  if (!(name in values) || values[name] === undefined) throw new MissingValue(name);
  return values[name];
}

/** A string template with every placeholder replaced by the value's text. */
export function render(template: Template, values: Values): string {
  return template.replace(PLACEHOLDER, (_all, name: string) => String(lookup(values, name)));
}

/** A body template: whole placeholders keep the value's JSON type; `|omit-if-zero` may drop a key. */
export function renderBody(template: unknown, values: Values): unknown {
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') {
      const whole = WHOLE.exec(node);
      if (whole === null) return render(node, values);
      const [, name = '', omit] = whole;
      if (omit !== undefined) {
        const value = name in values ? values[name] : undefined;
        return value === undefined || value === null || value === 0 ? OMIT : value;
      }
      return lookup(values, name);
    }
    if (Array.isArray(node)) return node.map(walk).filter((item) => item !== OMIT);
    if (node !== null && typeof node === 'object') {
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(node)) {
        const value = walk(child);
        if (value !== OMIT) out[key] = value;
      }
      return out;
    }
    return node;
  };
  return walk(template);
}

// -------------------------------------------------------------------------------------------------
// Requests

/** base64(SHA-256(bytes)), padded: the digest every integration computes. */
function sha256Base64(...parts: Array<Buffer | string>): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest('base64');
}

/** The request exactly as the integration sends it to `hosts[spec.host]`. */
export function buildRequest(call: CallSpec, values: Values, hosts: Record<HostName, string>): RawRequest {
  const { request } = call;
  const local: Values = { ...values };
  let body: Buffer | undefined;
  if (request.body !== undefined) body = encodeJson(renderBody(request.body.value, local), request.body.encoding);
  if (request.sign !== undefined) {
    local.signature = sha256Base64(body ?? Buffer.alloc(0), render(request.sign.path, local), render(request.sign.key, local));
  }
  const headers = request.headers.map(([name, value]) => [name, render(value, local)] as const);
  return {
    url: `${hosts[request.host]}${render(request.path, local)}`,
    method: request.method,
    headers,
    ...(body === undefined ? {} : { body }),
  };
}

// -------------------------------------------------------------------------------------------------
// Judging

export interface Judgement {
  /** What makes the integration fail, each saying what it would do. */
  problems: string[];
  /** What it notices without failing (PHP warnings, values it defaults). */
  notes: string[];
  /** Values read into the flow. */
  values: Values;
  outcome?: ChosenOutcome;
  /** Whether the integration went on with the answer (its acceptance). */
  accepted: boolean;
  /** What is missing from a refused answer that the integration reads to show why. */
  refusalProblems?: string[];
}

function fieldAt(body: unknown, path: string): unknown {
  let node = body;
  for (const key of path.split('.')) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function typeProblem(value: unknown, type: ValueType): string | undefined {
  if (value === undefined || value === null) return 'absent';
  switch (type) {
    case 'present':
      return undefined;
    case 'string':
      return typeof value === 'string' ? undefined : `a ${typeof value}, not a string`;
    case 'number':
      return typeof value === 'number' ? undefined : `a ${typeof value}, not a number`;
    case 'integer':
      return Number.isInteger(value) ? undefined : `${JSON.stringify(value)}, not an integer`;
    case 'http-url': {
      if (typeof value !== 'string') return `a ${typeof value}, not a URL`;
      try {
        const url = new URL(value);
        return url.protocol === 'http:' || url.protocol === 'https:' ? undefined : `${value}, not an http(s) URL`;
      } catch {
        return `${JSON.stringify(value)}, not a URL`;
      }
    }
  }
}

const TYPE_WORDS: Record<ValueType, string> = {
  present: 'a value',
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  'http-url': 'an http(s) URL',
};

function applyReads(reads: readonly Read[], body: unknown, subject: string, judgement: Judgement): void {
  for (const read of reads) {
    const value = fieldAt(body, read.field);
    const problem = typeProblem(value, read.type);
    if (problem === undefined) {
      if (read.into !== undefined) judgement.values[read.into] = value;
      continue;
    }
    judgement.problems.push(`${subject} reads ${read.field} (${TYPE_WORDS[read.type]}): ${problem}; ${read.ifMissing}`);
  }
}

function matches(value: unknown, match: Match): boolean {
  if ('otherwise' in match) return true;
  if ('equals' in match) return value === match.equals;
  if ('oneOf' in match) return match.oneOf.includes(value);
  // PHP 8 `==` with an integer: numbers and numeric strings compare as numbers, true == 1.
  if (typeof value === 'number') return value === match.phpLooseEquals;
  if (typeof value === 'string') return value.trim() !== '' && Number(value) === match.phpLooseEquals;
  if (typeof value === 'boolean') return value === (match.phpLooseEquals !== 0);
  return false;
}

function decideOutcome(outcome: Outcome | undefined, values: Values): Judgement['outcome'] {
  if (outcome === undefined) return undefined;
  const whole = WHOLE.exec(outcome.of);
  const value = whole === null ? render(outcome.of, values) : values[whole[1] ?? ''];
  const chosen = outcome.cases.find((candidate) => matches(value, candidate.when));
  return chosen === undefined ? undefined : { name: chosen.name, does: chosen.does, value };
}

function runChecks(checks: readonly Check[], values: Values, subject: string, judgement: Judgement): void {
  for (const check of checks) {
    if (check.kind === 'status-signature') {
      if (render(check.when.value, values) !== check.when.equals) continue;
      const expected = sha256Base64(check.over.map((part) => render(part, values)).join(''), render(check.key, values));
      const got = check.signature.replace(PLACEHOLDER, (_all, name: string) => String(values[name] ?? ''));
      if (got !== expected) {
        judgement.problems.push(`${subject} expects the status signature ${expected}: got ${JSON.stringify(got)}; ${check.ifMismatch}`);
      }
    } else {
      const value = Number(render(check.value, values));
      const limit = Number(render(check.limit, values)) / check.divisor;
      if (!(value < limit)) judgement.problems.push(`${subject} compares ${value} with ${limit}: ${check.ifNot}`);
    }
  }
}

/** The pairs of a request's query, as PHP's `$_GET` holds them (the last of a repeated name wins). */
function queryPairs(url: string): Record<string, string> {
  return Object.fromEntries(new URL(url, 'http://shop.invalid').searchParams);
}

/** Where a webhook step looks for its field: a JSON body, else the query, else a form body. */
function matchView(request: Pick<ShopRequest, 'body' | 'url' | 'headers'>): unknown {
  const json = decode(request.body);
  if (json !== null && typeof json === 'object') return json;
  const form = request.headers['content-type']?.startsWith('application/x-www-form-urlencoded') === true
    ? Object.fromEntries(new URLSearchParams(request.body))
    : {};
  return { ...form, ...queryPairs(request.url) };
}

function decode(text: string): unknown {
  try {
    return text === '' ? null : JSON.parse(text);
  } catch {
    return null; // json_decode of a non-JSON body is null
  }
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 300)}...` : flat === '' ? '(empty body)' : flat;
}

/** Judges one answer as the integration of `call` does. `stateful`: also the value checks. */
export function judgeCall(call: CallSpec, answer: Pick<RawAnswer, 'status' | 'text'>, values: Values, stateful: boolean): Judgement {
  const { judge } = call;
  const subject = INTEGRATIONS[call.integration].subject;
  const judgement: Judgement = { problems: [], notes: [], values: {}, accepted: true };
  const { status } = answer;
  const acceptance = judge.acceptance;
  const answered = `got ${status} ${excerpt(answer.text)}`;
  switch (acceptance.kind) {
    case 'exactly-200':
      if (status !== 200) {
        judgement.accepted = false;
        const consequence = status >= 200 && status < 300 ? acceptance.onOther2xx : acceptance.onRefused;
        judgement.problems.push(`${subject} accepts only HTTP 200: ${answered}; ${consequence}`);
      }
      break;
    case 'any-2xx':
      if (status < 200 || status >= 300) {
        judgement.accepted = false;
        judgement.problems.push(`${subject} accepts any 2xx: ${answered}; ${acceptance.onRefused}`);
      }
      break;
    case 'not-checked':
      judgement.notes.push(`${acceptance.note} (${status})`);
      break;
    case '200-else-defaults':
      if (status !== 200) {
        judgement.accepted = false;
        judgement.notes.push(`answered ${status}: ${acceptance.onOther}`);
        Object.assign(judgement.values, acceptance.defaults);
      }
      break;
  }
  const decoded =
    judge.decodes === 'none' || (judge.decodes === 'json-if-2xx-3xx' && (status < 200 || status >= 400)) ? null : decode(answer.text);
  const refusedForGood = !judgement.accepted && acceptance.kind !== '200-else-defaults';
  if (judgement.accepted) applyReads(judge.reads, decoded, subject, judgement);
  else if (refusedForGood && judge.refusalReads !== undefined) {
    const onRefusal: Judgement = { problems: [], notes: [], values: {}, accepted: false };
    applyReads(judge.refusalReads, decode(answer.text), subject, onRefusal);
    judgement.notes.push(...onRefusal.problems, ...onRefusal.notes);
    judgement.refusalProblems = onRefusal.problems;
  }
  const merged = { ...values, ...judgement.values };
  if (stateful && judgement.accepted && judge.checks !== undefined) runChecks(judge.checks, merged, subject, judgement);
  if (acceptance.kind === '200-else-defaults' || judgement.accepted) judgement.outcome = decideOutcome(judge.outcome, merged);
  return judgement;
}

/** Judges the URL the shopper's browser comes back to, as the integration reads it. */
export function judgeReturn(spec: ReturnSpec, url: string, values: Values, stateful: boolean): Judgement {
  const subject = INTEGRATIONS[spec.integration].subject;
  const judgement: Judgement = { problems: [], notes: [], values: {}, accepted: true };
  const gave = new URL(render(spec.gave, values));
  let back: URL;
  try {
    back = new URL(url);
  } catch {
    judgement.accepted = false;
    judgement.problems.push(`the shopper is sent to ${JSON.stringify(url)}, which is not a URL: ${subject} never sees the shopper again`);
    return judgement;
  }
  if (back.origin !== gave.origin || back.pathname !== gave.pathname) {
    judgement.problems.push(`the shopper is sent to ${back.origin}${back.pathname}, not to ${gave.origin}${gave.pathname}: ${subject} never sees the shopper again`);
  }
  for (const [name, value] of gave.searchParams) {
    if (back.searchParams.get(name) !== value) {
      judgement.problems.push(`the return URL ${url} lost ${name}=${value} of the URL ${subject} gave: the shop cannot route it`);
    }
  }
  for (const param of spec.params) {
    const value = back.searchParams.get(param.param);
    if (value === null) {
      judgement.problems.push(`${subject} reads ${param.param} from the return URL ${url}: absent; ${param.ifMissing}`);
      continue;
    }
    if (stateful && param.expected !== undefined) {
      const expected = render(param.expected, values);
      if (value !== expected) judgement.problems.push(`${subject} reads ${param.param}=${value} from the return URL: expected ${expected}; ${param.ifMissing}`);
    }
    if (param.into !== undefined) judgement.values[param.into] = value;
  }
  judgement.outcome = decideOutcome(spec.outcome, { ...values, ...judgement.values });
  return judgement;
}

/** Judges a webhook the integration's endpoint received, as it reads it. */
export function judgeWebhook(spec: WebhookSpec, received: Pick<ShopRequest, 'body' | 'url'>, values: Values): Judgement {
  const subject = INTEGRATIONS[spec.integration].subject;
  const judgement: Judgement = { problems: [], notes: [], values: {}, accepted: true };
  if (spec.decodes === 'json') applyReads(spec.reads, decode(received.body), subject, judgement);
  if (spec.decodes === 'query') applyReads(spec.reads, queryPairs(received.url), subject, judgement);
  if (spec.decodes === 'form') applyReads(spec.reads, Object.fromEntries(new URLSearchParams(received.body)), subject, judgement);
  judgement.outcome = decideOutcome(spec.outcome, { ...values, ...judgement.values });
  return judgement;
}

// -------------------------------------------------------------------------------------------------
// Flows

/** What a flow runs against. */
export interface Target {
  name: string;
  /** false: a mock; only the calls run, judged without value checks. */
  stateful: boolean;
  hosts: Record<HostName, string>;
  /** Plays what the people and systems around the integration do; returns values it produced. */
  service(action: ServiceAction, values: Values): Promise<Values>;
  /** What the target says about an answer: a problem (no such operation at all) or a note (why it refused). */
  inspect?(answer: RawAnswer): { problem?: string; note?: string };
  /** The service's record of the webhook delivery with this event id, once its first attempt is recorded. */
  delivery?(eventId: string): Promise<{ status: string; attempts: Array<{ statusCode?: number; error?: string }> }>;
}

interface StepResult {
  step: string;
  result: 'passed' | 'failed' | 'not reached' | 'left out';
  problems: string[];
  notes: string[];
  outcome?: ChosenOutcome;
}

export interface FlowReport {
  flow: Flow;
  target: string;
  steps: StepResult[];
  passed: boolean;
}

const SERVICE_STEPS: Record<ServiceAction['action'], string> = {
  'onboard-merchant': 'the payment gateway onboards the merchant (Merchant API) and gives it its credentials',
  'user-pays-web': 'the shopper enters the OTP and pays on the hosted page',
  'user-cancels-web': 'the shopper cancels on the hosted page',
  'user-pays-gateway': 'the shopper\'s OTP and down payment (user-inputs, register-external)',
  'user-cancels-gateway': 'the shopper cancels on the gateway\'s hosted page',
  'user-fails-gateway': 'the shopper enters a wrong OTP three times (user-inputs)',
  'time-passes': 'time passes',
};

function describeStep(step: FlowStep): string {
  if ('call' in step) {
    const call = CALLS[step.call as keyof typeof CALLS] as CallSpec | undefined;
    return call === undefined ? `unknown call ${step.call}` : call.label;
  }
  if ('returnTo' in step) return (RETURNS[step.returnTo as keyof typeof RETURNS] as ReturnSpec | undefined)?.label ?? `unknown return ${step.returnTo}`;
  if ('webhook' in step) return (WEBHOOKS[step.webhook as keyof typeof WEBHOOKS] as WebhookSpec | undefined)?.label ?? `unknown webhook ${step.webhook}`;
  const service = step.service;
  return service.action === 'time-passes'
    ? `[${SERVICE_STEPS[service.action]}: ${service.minutes} minutes; ${service.why}]`
    : `[${SERVICE_STEPS[service.action]}]`;
}

function expectOutcome(expect: Expectation | undefined, judgement: Judgement, result: StepResult, subject: string): void {
  if (expect?.outcome === undefined) return;
  const got = judgement.outcome;
  const divergence = expect.divergence;
  if (got?.name === expect.outcome && (divergence === undefined || got.value === divergence.value)) {
    if (divergence !== undefined) {
      result.notes.push(
        `known divergence (decision ${divergence.decision}): on ${JSON.stringify(got.value)} ${subject} ${got.does}; ${divergence.explanation}`,
      );
    }
    return;
  }
  if (got === undefined) {
    // The answer was refused: the problems say why; say where it should have led.
    if (result.problems.length === 0) result.problems.push(`${subject} should take the path "${expect.outcome}": it never got that far`);
    return;
  }
  if (divergence !== undefined && got.name === expect.outcome) {
    result.problems.push(
      `the decisions accept that ${subject} takes the path "${expect.outcome}" on ${JSON.stringify(divergence.value)} (decision ${divergence.decision}): ` +
        `it takes it on ${JSON.stringify(got.value)}`,
    );
    return;
  }
  result.problems.push(`${subject} should take the path "${expect.outcome}": on ${JSON.stringify(got.value)} it takes "${got.name}" and ${got.does}`);
}

function expectDecided(expect: Expectation | undefined, answer: RawAnswer, result: StepResult): void {
  const decided = expect?.decided;
  if (decided === undefined) return;
  if (decided.status !== undefined && answer.status !== decided.status) {
    result.problems.push(`decision ${decided.decision} promises HTTP ${decided.status}: got ${answer.status} ${excerpt(answer.text)}`);
  }
  if (decided.fields === undefined) return;
  const body = decode(answer.text);
  for (const [field, expected] of Object.entries(decided.fields)) {
    const got = fieldAt(body, field);
    if (got !== expected) {
      result.problems.push(`decision ${decided.decision} promises ${field} = ${JSON.stringify(expected)}: got ${JSON.stringify(got)}`);
    }
  }
}

export interface FlowRun {
  target: Target;
  /** The shop's server (its webhook endpoint); needed for webhook steps against a stateful target. */
  shop?: ShopReceiver;
  /** The flow's starting values: `flow.given(...)`. */
  given: Values;
  /** How long to wait for a webhook, ms. */
  webhookTimeoutMs?: number;
}

/** Plays the flow; never throws for what the target answers (that is in the report). */
export async function runFlow(flow: Flow, run: FlowRun): Promise<FlowReport> {
  const { target } = run;
  const values: Values = { ...run.given };
  const integration = INTEGRATIONS[flow.integration];
  const steps: StepResult[] = [];
  const consumed = new Set<ShopRequest>();

  for (const [index, step] of flow.steps.entries()) {
    const result: StepResult = { step: `${index + 1}. ${describeStep(step)}`, result: 'passed', problems: [], notes: [] };
    steps.push(result);
    try {
      if ('call' in step) {
        const call = CALLS[step.call as keyof typeof CALLS] as CallSpec | undefined;
        if (call === undefined) throw new Error(`flow ${flow.id}: unknown call ${step.call}`);
        Object.assign(values, step.with ?? {});
        result.step = `${index + 1}. ${call.label}`;
        if (!target.stateful && step.expect?.refused !== undefined) {
          result.result = 'left out';
          result.notes.push(`${target.name} keeps no state: the refusal (${step.expect.refused}) needs it`);
          continue;
        }
        const request = buildRequest(call, values, target.hosts);
        const answer = await sendRaw(request);
        const judgement = judgeCall(call, answer, values, target.stateful);
        result.outcome = judgement.outcome;
        result.notes.push(...judgement.notes);
        if (step.expect?.refused !== undefined) {
          if (judgement.accepted) {
            result.problems.push(`${integration.subject} should refuse this answer (${step.expect.refused}): it accepts HTTP ${answer.status}`);
          }
          result.problems.push(...(judgement.refusalProblems ?? []));
        } else {
          result.problems.push(...judgement.problems);
          Object.assign(values, judgement.values);
        }
        const inspected = target.inspect?.(answer) ?? {};
        if (inspected.problem !== undefined) result.problems.push(inspected.problem);
        if (inspected.note !== undefined) result.notes.push(inspected.note);
        // What the outcome and the decisions promise depends on state: a mock answers examples.
        if (target.stateful) {
          expectOutcome(step.expect, judgement, result, integration.subject);
          expectDecided(step.expect, answer, result);
        }
      } else if ('service' in step) {
        if (!target.stateful) {
          result.result = 'left out';
          result.notes.push(`${target.name} keeps no state: the values given stand in`);
          continue;
        }
        Object.assign(values, await target.service(step.service, values));
      } else if ('returnTo' in step) {
        const spec = RETURNS[step.returnTo as keyof typeof RETURNS] as ReturnSpec | undefined;
        if (spec === undefined) throw new Error(`flow ${flow.id}: unknown return ${step.returnTo}`);
        if (!target.stateful) {
          // What the return URL must carry, as the next steps need it.
          for (const param of spec.params) if (param.into !== undefined && param.expected !== undefined) values[param.into] = render(param.expected, values);
          result.result = 'left out';
          result.notes.push(`${target.name} keeps no state`);
          continue;
        }
        const url = lookup(values, 'returnUrl');
        const judgement = judgeReturn(spec, String(url), values, true);
        result.outcome = judgement.outcome;
        result.problems.push(...judgement.problems);
        result.notes.push(...judgement.notes);
        Object.assign(values, judgement.values);
        expectOutcome(step.expect, judgement, result, integration.subject);
      } else {
        const spec = WEBHOOKS[step.webhook as keyof typeof WEBHOOKS] as WebhookSpec | undefined;
        if (spec === undefined) throw new Error(`flow ${flow.id}: unknown webhook ${step.webhook}`);
        if (!target.stateful || run.shop === undefined) {
          result.result = 'left out';
          result.notes.push(`${target.name} sends no webhooks`);
          continue;
        }
        const expected = render(step.where.equals, values);
        const received = await waitForWebhook(run.shop, consumed, step.where.field, expected, run.webhookTimeoutMs ?? 5_000);
        if (received === undefined) {
          result.problems.push(
            `no webhook with ${step.where.field} = ${expected} reached the shop within ${run.webhookTimeoutMs ?? 5_000} ms ` +
              `(${run.shop.received.length} request(s) received): ${integration.subject} is never told`,
          );
        } else {
          consumed.add(received);
          const judgement = judgeWebhook(spec, received, values);
          result.outcome = judgement.outcome;
          result.problems.push(...judgement.problems);
          result.notes.push(...judgement.notes, `the shop answered ${received.answeredWith}`);
          expectOutcome(step.expect, judgement, result, integration.subject);
          if (step.deliveredOnce !== undefined) await expectDeliveredOnce(target, received, step.deliveredOnce.decision, result);
        }
      }
    } catch (error) {
      if (error instanceof MissingValue) {
        result.result = 'not reached';
        result.problems.push(`not reached: ${error.message}`);
      } else {
        result.problems.push(`could not be played: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    if (result.problems.length > 0 && result.result === 'passed') result.result = 'failed';
  }
  return { flow, target: target.name, steps, passed: steps.every((step) => step.result === 'passed' || step.result === 'left out') };
}

async function waitForWebhook(
  shop: ShopReceiver,
  consumed: Set<ShopRequest>,
  field: string,
  expected: string,
  timeoutMs: number,
): Promise<ShopRequest | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = shop.received.find((request) => !consumed.has(request) && fieldAt(matchView(request), field) === expected);
    if (found !== undefined) return found;
    if (Date.now() > deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function expectDeliveredOnce(target: Target, received: ShopRequest, decision: string, result: StepResult): Promise<void> {
  const eventId = received.headers['x-event-id'];
  if (typeof eventId !== 'string' || target.delivery === undefined) {
    result.problems.push(`the webhook carries no X-Event-Id: its delivery record cannot be found`);
    return;
  }
  const delivery = await target.delivery(eventId);
  if (delivery.status !== 'delivered' || delivery.attempts.length !== 1) {
    const attempts = delivery.attempts.map((attempt) => attempt.statusCode ?? attempt.error).join(', ');
    result.problems.push(
      `decision ${decision}: an answer of ${received.answeredWith} counts as received, so the delivery is done after one attempt: ` +
        `it is "${delivery.status}" after attempt(s) ${attempts}; the service would send the same event again and again`,
    );
  }
}

/** The report as text, for a failing test's message and for people. */
export function formatReport(report: FlowReport): string {
  const integration = INTEGRATIONS[report.flow.integration];
  const lines = [`${integration.name} (${integration.generation}) against the ${report.target}: ${report.flow.title}`];
  for (const step of report.steps) {
    const mark = { passed: 'ok  ', 'left out': 'skip', 'not reached': '----', failed: 'FAIL' }[step.result];
    lines.push(`  ${mark} ${step.step}${step.outcome ? ` -> ${step.outcome.name}` : ''}`);
    for (const problem of step.problems) lines.push(`         ${problem}`);
    for (const note of step.notes) if (step.result !== 'passed' || note.startsWith('known divergence')) lines.push(`         (${note})`);
  }
  return lines.join('\n');
}
