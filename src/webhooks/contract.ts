/**
 * The webhooks of the contract, from the contract model (src/contract/): each webhook's payload
 * schema, whether its document defines the `X-Signature` header (and requires it), and the
 * `X-Event-Id` header's schema. Compiled once per family, on first use.
 */
import type { ErrorObject } from 'ajv/dist/2020.js';
import { contractOf, type ContractOperation, type ContractParameter } from '../contract/index.js';

export type WebhookFamily = 'sdk' | 'web' | 'gateway';

/** One schema violation: a JSON pointer into the body (`` for the body itself) and what is wrong. */
export interface WebhookPayloadIssue {
  readonly path: string;
  readonly message: string;
}

export interface WebhookContract {
  /** The problems of a payload of the webhook `name` (empty when it is valid). */
  payloadIssues(name: string, value: unknown): WebhookPayloadIssue[];
  /** The problems of an `X-Event-Id` value (empty when it is valid or the document has no such header). */
  eventIdIssues(value: string): WebhookPayloadIssue[];
  /** Whether the webhook's document defines `X-Signature`, and whether it is required. */
  signatureHeader(name: string): 'required' | 'optional' | 'absent';
}

const contracts = new Map<WebhookFamily, WebhookContract>();

/** The webhooks of `family`, compiled on first use. */
export function webhookContract(family: WebhookFamily): WebhookContract {
  let found = contracts.get(family);
  if (found === undefined) {
    found = compile(family);
    contracts.set(family, found);
  }
  return found;
}

function compile(family: WebhookFamily): WebhookContract {
  const contract = contractOf(family);
  const webhooks = [...contract.operations.values()].filter((operation) => operation.webhook);
  const webhook = (name: string): ContractOperation => {
    const found = contract.webhook(name);
    if (found === undefined) throw new Error(`the contract has no webhook ${name}`);
    return found;
  };
  // The header is the same shared parameter on every webhook of a family: the first one found.
  let eventId: ContractParameter | undefined;
  for (const operation of webhooks) {
    // Compiled now, so that the first delivery is answered as quickly as the others.
    operation.checkBody(undefined);
    eventId ??= operation.parameter('header', 'x-event-id');
  }
  return {
    payloadIssues: (name, value) => toIssues(webhook(name).checkBody(value)),
    eventIdIssues(value) {
      const checked = eventId?.validate(value);
      return checked === undefined || checked.ok ? [] : toIssues(checked.errors);
    },
    signatureHeader(name) {
      const parameter = webhook(name).parameter('header', 'x-signature');
      return parameter === undefined ? 'absent' : parameter.required ? 'required' : 'optional';
    },
  };
}

function toIssues(errors: readonly ErrorObject[]): WebhookPayloadIssue[] {
  // Ajv's messages name the schema's expectations, never the data (params may, so they are dropped).
  return errors.map((error) => ({
    path: error.instancePath.length > 200 ? `${error.instancePath.slice(0, 200)}...` : error.instancePath,
    message: error.message ?? `fails ${error.keyword}`,
  }));
}

/** The first five issues, for an error message. */
export function summary(issues: readonly WebhookPayloadIssue[]): string {
  const shown = issues.slice(0, 5).map((issue) => `${issue.path || '(root)'} ${issue.message}`);
  if (issues.length > shown.length) shown.push(`and ${issues.length - shown.length} more`);
  return shown.join('; ');
}
