/**
 * The gateway integration (openapi/gateway.yaml): the Merchant API (onboarding, documents,
 * verification, disable, dashboard access) and each merchant's Transactional API (pre-eligibility,
 * transactions and their steps, down payments, refunds, list, settlement), with signed webhooks.
 * The modules live in ../gateway/; this file wires them. Documented in docs/sandbox.md (Gateway).
 *
 * Sandbox helpers (not part of the contract):
 *   POST /sandbox/gateway/merchants/{id}/verify                 finish verification now
 *   GET  /sandbox/gateway/checkout/{merchantId}/{transactionId}  the hosted page of `transaction.url`
 *   POST /sandbox/gateway/checkout/{merchantId}/{transactionId}/cancel  the shopper cancels there
 *   POST /sandbox/gateway/transactions/{merchantId}/{transactionId}/refunds/{refundId}/fail
 *   GET  /sandbox/gateway/dashboard/invitations/{token}          where `loginUrl` points
 */
import type { FamilyContext } from '../context.js';
import { createEngine } from '../gateway/engine.js';
import { registerMerchants } from '../gateway/merchants.js';
import { gatewayState } from '../gateway/records.js';
import { registerRefunds } from '../gateway/refunds.js';
import { registerSettlement } from '../gateway/settlement.js';
import { registerTransactions } from '../gateway/transactions.js';

export function registerGateway(ctx: FamilyContext): void {
  const state = gatewayState(ctx);
  registerMerchants(ctx, state);
  const engine = createEngine(ctx, state);
  registerTransactions(ctx, state, engine);
  registerRefunds(ctx, state, engine);
  registerSettlement(ctx, state, engine);
}
