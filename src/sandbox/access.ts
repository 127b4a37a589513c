/**
 * Who may use the sandbox's own endpoints (`/sandbox/*`, the deliveries list, the live stream),
 * and what each one sees. One module, so that every endpoint, and a future dashboard page,
 * asks the same questions: {@link SandboxAccess.identify} (who is this?) and
 * {@link SandboxAccess.owns} / {@link SandboxAccess.seesDelivery} (is this theirs?).
 *
 * On a developer's machine (listening on loopback, the default) the sandbox is open: every request
 * acts as the operator, as before. Hosted (`--hosted`, or `--host` other than loopback), every
 * request to these endpoints carries a credential, each tenant sees and controls only its own
 * records, and anything not its own is answered as if it did not exist (404), so that no answer
 * tells one tenant what another has:
 *
 * - the operator: `Authorization: Bearer <token>` (or `?token=<token>`, for a link or an
 *   EventSource); sees and controls everything, and alone moves the shared clock;
 * - a partner of the web and SDK flows: `X-Partner-Id` with `X-Signature`, the web flow's request
 *   signature (base64(SHA-256(body + path and query + private key))) over the request it
 *   sends: its own web and SDK transactions and their deliveries;
 * - the gateway: its Merchant API Basic credentials: every gateway merchant and their transactions;
 * - a merchant: its Transactional API Basic credentials: its own gateway transactions;
 * - the extras client: the extras Basic credentials: the extras users.
 *
 * The shopper's pages (the hosted checkout page and the endpoints it calls) need no credential: a
 * shopper has none. Hosted, their link carries a token of the one transaction they were opened
 * for ({@link SandboxAccess.checkoutToken}), and they act on that transaction only.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { verifyWebSignature } from '../signature.js';
import { parseBasicAuthorization } from './auth.js';
import { credentialsEqual, secretEquals, type BasicCredentials, type SandboxConfig } from './config.js';
import type { ErrorHelpers } from './errors.js';
import { knownPartners } from './families/partner.js';
import type { AuthResult, IncomingRequest } from './router.js';

export type Tenant =
  | { readonly kind: 'operator' }
  | { readonly kind: 'partner'; readonly id: string }
  | { readonly kind: 'gateway' }
  | { readonly kind: 'merchant'; readonly id: string }
  | { readonly kind: 'extras' };

/** What a record belongs to: a partner's web or SDK transaction, a gateway merchant's, the extras'. */
export type Owner = { readonly partner: string } | { readonly merchant: string } | { readonly extras: true };

const OPERATOR: Tenant = Object.freeze({ kind: 'operator' });

/** The query parameter of a hosted page's link that carries its {@link SandboxAccess.checkoutToken}. */
const CHECKOUT_PARAMETER = 'checkout';

/** Whether `host` is a loopback address or name (the default `127.0.0.1`, `::1`, `localhost`). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return bare === '::1';
}

/** Whether a sandbox with this configuration is hosted: explicitly, or by listening beyond loopback. */
export function isHosted(config: Pick<SandboxConfig, 'hosted' | 'host'>): boolean {
  return config.hosted ?? !isLoopbackHost(config.host);
}

/** Identifies a merchant by its Transactional API credentials (the gateway family registers it). */
type MerchantIdentifier = (credentials: BasicCredentials) => string | undefined;

export class SandboxAccess {
  /** Whether credentials are required and tenants kept apart. */
  readonly hosted: boolean;
  /** The operator's credential: `PAYLATER_OPERATOR_TOKEN`, or made at start. */
  readonly operatorToken: string;
  private merchantOf: MerchantIdentifier = () => undefined;
  private readonly checkoutKey: Buffer;
  private readonly tenants = new WeakMap<object, Tenant>();

  constructor(
    private readonly config: SandboxConfig,
    private readonly errors: ErrorHelpers,
  ) {
    this.hosted = isHosted(config);
    this.operatorToken = config.operatorToken ?? randomBytes(24).toString('base64url');
    // Sandboxes sharing a store and an operator token make the same links.
    this.checkoutKey = createHash('sha256').update(`paylater checkout links\u0000${this.operatorToken}`).digest();
  }

  /**
   * The token of a hosted page's link (`?checkout=<token>`): the page and its endpoints act on
   * this one transaction only (hosted mode). An HMAC of the transaction's owner and id under a
   * key derived from the operator token: nothing to store, the same in every process of a
   * shared store, and not to be guessed or derived from another transaction's.
   */
  checkoutToken(owner: Owner, id: string): string {
    const who = 'partner' in owner ? `partner:${owner.partner}` : 'merchant' in owner ? `merchant:${owner.merchant}` : 'extras';
    return createHmac('sha256', this.checkoutKey).update(`${who}\u0000${id}`).digest('base64url').slice(0, 32);
  }

  /**
   * Whether a request of a shopper's page (the hosted checkout page's endpoints) may act on the
   * transaction `id` of `owner`: always when the sandbox is not hosted; hosted, when the request
   * carries the transaction's {@link checkoutToken} in `?checkout=`, or a credential that owns the
   * transaction (its partner or merchant, the operator: a developer's tools and the dashboard).
   * Otherwise the endpoint answers as if the transaction did not exist.
   */
  shopperAllows(request: Pick<IncomingRequest, 'url' | 'rawBody' | 'header'>, owner: Owner, id: string): boolean {
    if (!this.hosted) return true;
    const given = new URLSearchParams(request.url.split('?')[1] ?? '').get(CHECKOUT_PARAMETER);
    if (given !== null && secretEquals(given, this.checkoutToken(owner, id))) return true;
    const tenant = this.tenantOf(request);
    return tenant !== undefined && this.owns(tenant, owner);
  }

  /** `url` with the transaction's checkout token appended when hosted; `url` as it is otherwise. */
  checkoutLink(url: string, owner: Owner, id: string): string {
    if (!this.hosted) return url;
    return `${url}${url.includes('?') ? '&' : '?'}${CHECKOUT_PARAMETER}=${this.checkoutToken(owner, id)}`;
  }

  /** The gateway family's way to tell a merchant by its Transactional API credentials. */
  identifyMerchants(identifier: MerchantIdentifier): void {
    this.merchantOf = identifier;
  }

  /**
   * Who sent `request`: the operator when the sandbox is not hosted; else the tenant its
   * credential names, or a 401 that says which credentials are accepted.
   */
  identify(request: Pick<IncomingRequest, 'url' | 'rawBody' | 'header'>): AuthResult<Tenant> {
    if (!this.hosted) return { ok: true, principal: OPERATOR };
    const tenant = this.tenantOf(request);
    if (tenant !== undefined) return { ok: true, principal: tenant };
    return {
      ok: false,
      reply: this.errors.unauthorized(
        'This sandbox is hosted: its /sandbox/ endpoints need a credential. Send the operator token (Authorization: Bearer <token>, ' +
          'printed at start), your gateway Merchant API or Transactional API Basic credentials, the extras Basic credentials, ' +
          'or X-Partner-Id with X-Signature (the web flow signature over this request) as a partner.',
      ),
    };
  }

  /** Keeps the tenant identified for `request` (by the router's wrapper), for {@link tenant}. */
  remember(request: object, tenant: Tenant): void {
    this.tenants.set(request, tenant);
  }

  /** The tenant of a request that went through {@link identify}; the operator when not hosted. */
  tenant(request: object): Tenant {
    const tenant = this.tenants.get(request);
    if (tenant !== undefined || !this.hosted) return tenant ?? OPERATOR;
    throw new Error('a /sandbox/ request reached its handler without being identified');
  }

  /** Whether `tenant` may see and act on what `owner` holds. */
  owns(tenant: Tenant, owner: Owner): boolean {
    switch (tenant.kind) {
      case 'operator':
        return true;
      case 'partner':
        return 'partner' in owner && owner.partner === tenant.id;
      case 'gateway':
        return 'merchant' in owner;
      case 'merchant':
        return 'merchant' in owner && owner.merchant === tenant.id;
      case 'extras':
        return 'extras' in owner;
    }
  }

  /** Whether the tenant of `request` owns `owner`'s record. */
  allows(request: object, owner: Owner): boolean {
    return this.owns(this.tenant(request), owner);
  }

  /** Whether the tenant of `request` is the operator (who alone moves the shared clock). */
  isOperator(request: object): boolean {
    return this.tenant(request).kind === 'operator';
  }

  /**
   * Whether `tenant` sees a webhook delivery, told by its ordering key, which names the partner or
   * merchant the event is for: `web:<partner>:<id>`, `sdk:<partner>:<id>`,
   * `web.notes:<partner>:<id>`, `gateway:<merchant>:<id>` (families/direct.ts,
   * families/web-notes-webhook.ts, gateway/webhooks.ts).
   */
  seesDelivery(tenant: Tenant, delivery: { readonly orderingKey: string }): boolean {
    const key = delivery.orderingKey;
    switch (tenant.kind) {
      case 'operator':
        return true;
      case 'partner':
        return ['web', 'sdk', 'web.notes'].some((family) => key.startsWith(`${family}:${tenant.id}:`));
      case 'gateway':
        return key.startsWith('gateway:');
      case 'merchant':
        return key.startsWith(`gateway:${tenant.id}:`);
      case 'extras':
        return false;
    }
  }

  private tenantOf(request: Pick<IncomingRequest, 'url' | 'rawBody' | 'header'>): Tenant | undefined {
    const authorization = request.header('authorization');
    const bearer = authorization === undefined ? undefined : /^Bearer[ ]+(\S+)[ ]*$/i.exec(authorization)?.[1];
    const queryToken = new URLSearchParams(request.url.split('?')[1] ?? '').get('token');
    const token = bearer ?? queryToken ?? undefined;
    if (token !== undefined && secretEquals(token, this.operatorToken)) return OPERATOR;
    const basic = parseBasicAuthorization(authorization);
    if (basic !== undefined) {
      if (credentialsEqual(basic, this.config.merchantApi)) return { kind: 'gateway' };
      if (credentialsEqual(basic, this.config.extras)) return { kind: 'extras' };
      const merchant = this.merchantOf(basic);
      return merchant === undefined ? undefined : { kind: 'merchant', id: merchant };
    }
    const partnerId = request.header('x-partner-id');
    const signature = request.header('x-signature');
    if (partnerId === undefined || signature === undefined) return undefined;
    let found: string | undefined;
    for (const partner of knownPartners(this.config)) {
      // Every known partner is tried, so the time does not tell which id exists.
      const matches = secretEquals(partnerId, partner.id) && verifyWebSignature(signature, request.rawBody, request.url, partner.privateKey);
      if (matches && found === undefined) found = partner.id;
    }
    return found === undefined ? undefined : { kind: 'partner', id: found };
  }
}
