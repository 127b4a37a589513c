/**
 * The webhooks of the contract, from the contract model (src/contract/), which compiles each
 * schema once, on first use: each webhook's payload schema and its headers (`X-Signature`,
 * `X-Event-Id`), with Ajv's errors worded as {@link WebhookPayloadIssue}s.
 */
import type { ErrorObject } from 'ajv/dist/2020.js';
import { contractOf, type ContractOperation, type WebhookFamily } from '../contract/index.js';

export type { WebhookFamily };

/** One schema violation: a JSON pointer into the body (`` for the body itself) and what is wrong. */
export interface WebhookPayloadIssue {
  readonly path: string;
  readonly message: string;
}

/** The webhook `name` of `family` in the contract model. */
export function webhookOf(family: WebhookFamily, name: string): ContractOperation {
  const found = contractOf(family).webhook(name);
  if (found === undefined) throw new Error(`the contract has no webhook ${name}`);
  return found;
}

/** Compiles every webhook of `family` now, so that the first delivery is answered as quickly as the others. */
export function compileWebhooks(family: WebhookFamily): void {
  for (const operation of contractOf(family).operations.values()) {
    if (operation.webhook) operation.checkBody(undefined);
  }
}

/** Ajv's errors (of a payload or a header) as issues. */
export function toIssues(errors: readonly ErrorObject[]): WebhookPayloadIssue[] {
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
