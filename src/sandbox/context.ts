/**
 * The extension point of the sandbox: what a family's `register(ctx)` receives.
 *
 * A family module exports one function, `registerXxx(ctx: FamilyContext): void`, that registers
 * the routes of its contract operations with `ctx.route(operationId, { authenticate?, handle })`
 * and its `/sandbox/...` helpers with `ctx.sandboxRoute(...)`, and keeps all its state in
 * `ctx.store`. See families/sdk.ts for a complete example.
 */
import type { VirtualClock } from './clock.js';
import type { SandboxAccess } from './access.js';
import type { SandboxConfig } from './config.js';
import type { WebhookDeliveries } from './delivery/index.js';
import type { ErrorHelpers } from './errors.js';
import type { Logger, OperationRoute, OperationShape, LooseOperation, SandboxHandler } from './router.js';
import type { Store } from './store.js';
import type { Contract, FamilyName } from './validation.js';

export type SandboxMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface SandboxRouteOptions {
  /**
   * An endpoint of a shopper's page (the hosted checkout's own calls): open in hosted mode too, as
   * the shopper has no credential; the transaction id the shopper was handed is the key.
   */
  shopper?: boolean;
}

export interface FamilyContext {
  /** The family being registered. */
  readonly family: FamilyName;
  /** Its compiled contract (generated/openapi/<family>.json). */
  readonly contract: Contract;
  /** Builders of the family's error replies (`apiError` for gateway and extras, `messageError` for web and SDK). */
  readonly errors: ErrorHelpers;
  /** Builders of error replies of the `/sandbox/` endpoints (`{ errorCode, message }`). */
  readonly sandboxErrors: ErrorHelpers;
  /**
   * Registers the handler of a contract operation. Method and path come from the contract. Type it
   * with the generated operation: `ctx.route<operations['initiateSdkTransaction']>(...)`, and the
   * handler's request and replies are checked against the contract at compile time.
   * `authenticate` is required when the contract secures the operation.
   */
  route<Op extends OperationShape = LooseOperation, P = undefined>(
    operationId: string,
    route: OperationRoute<Op, P>,
  ): void;
  /**
   * Registers a sandbox-only endpoint; `path` starts with `/sandbox/` and may use `{name}`. Hosted,
   * it needs a credential (access.ts); the handler asks `ctx.access.allows(request, owner)` before
   * showing or changing a record, and answers 404 when not.
   */
  sandboxRoute(method: SandboxMethod, path: string, handler: SandboxHandler, options?: SandboxRouteOptions): void;
  /**
   * Registers a GET page outside `/sandbox/` and outside the contract (the web flow's hosted
   * checkout page `/checkout/{id}`); the handler answers the whole reply, usually HTML.
   */
  pageRoute(path: string, handler: SandboxHandler): void;
  readonly store: Store;
  readonly clock: VirtualClock;
  /** Webhook delivery: `ctx.deliveries.enqueue({...})`. */
  readonly deliveries: WebhookDeliveries;
  readonly config: SandboxConfig;
  /** Who may use the /sandbox/ endpoints, and what each tenant owns (access.ts). */
  readonly access: SandboxAccess;
  /** The origin URLs handed out by the sandbox start with (`http://127.0.0.1:4000`), no trailing slash. */
  publicUrl(): string;
  readonly log: Logger;
}

/** What a family module provides. */
export type RegisterFamily = (ctx: FamilyContext) => void;
