/**
 * Settlement information, computed from the merchant's successful transactions and refunds.
 *
 * - A transaction counts on the IST calendar day it became SUCCESS, a refund on the IST day it
 *   became SUCCESS; that day's entry is paid out the next day (T+1): `settlementDate` = day + 1.
 * - `feeAmount` = 2 % of `grossAmount` (rounded half up to whole paise) when the merchant's
 *   `settlementDetails.mdrChargedOnMerchant` is true, else 0 (also when no settlement details
 *   were given); `netAmount = grossAmount − refundedAmount − feeAmount`.
 * - An entry is PENDING until its settlement date has passed on the virtual clock (IST), then
 *   SETTLED with a `utr` (deterministic: `SBX` + the date + 9 characters of a hash).
 *
 * The sums of each day are kept as transactions and refunds succeed (engine.ts,
 * `gateway.settlementDays`), so an answer reads one record per day of the range (at most 32), not
 * every transaction of the merchant, and transactions forgotten by retention still count.
 */
import { createHash } from 'node:crypto';
import type { components, operations } from '../../../generated/types/gateway.js';
import type { FamilyContext } from '../context.js';
import { transactionalApiAuth } from './auth.js';
import type { TransactionEngine } from './engine.js';
import { addDays, istDate } from './ist-dates.js';
import type { GatewayState, MerchantPrincipal } from './records.js';
import { GATEWAY, time } from './values.js';

type SettlementView = components['schemas']['GatewaySettlement'];

function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / time.DAY);
}

function utrFor(merchantId: string, settlementDate: string): string {
  const hash = createHash('sha256').update(`${merchantId}|${settlementDate}`).digest('hex').toUpperCase();
  return `SBX${settlementDate.replaceAll('-', '')}${hash.slice(0, 9)}`;
}

export function registerSettlement(ctx: FamilyContext, state: GatewayState, _engine: TransactionEngine): void {
  const { errors, clock } = ctx;
  const authenticate = transactionalApiAuth(ctx, state);

  ctx.route<operations['getSettlement'], MerchantPrincipal>('getSettlement', {
    authenticate,
    handle({ query, principal }) {
      const today = istDate(clock.now());
      const to = query.to ?? today;
      const from = query.from ?? addDays(to, -(GATEWAY.defaultSettlementDays - 1));
      if (to < from) {
        return errors.badRequest(`The range ends (to ${to}) before it starts (from ${from}).`, [
          { field: 'to', issue: 'must not be before from' },
        ]);
      }
      if (daysBetween(from, to) > GATEWAY.maxSettlementRangeDays) {
        return errors.badRequest(`The range from ${from} to ${to} is longer than ${GATEWAY.maxSettlementRangeDays} days.`, [
          { field: 'to', issue: `must be at most ${GATEWAY.maxSettlementRangeDays} days after from` },
        ]);
      }

      // Events due by now (a confirmation, a refund completing) count before the sums are read.
      clock.runDue();
      const merchant = state.merchants.get(principal.merchantId);
      const chargesFee = merchant?.settlementDetails?.mdrChargedOnMerchant === true;

      const days = new Map<string, { gross: number; refunded: number; count: number }>();
      for (let date = from; date <= to; date = addDays(date, 1)) {
        const day = state.settlementDays.get(`${principal.merchantId}/${date}`);
        if (day !== undefined) days.set(date, day);
      }

      const settlements: SettlementView[] = [...days.entries()]
        .sort(([a], [b]) => (a < b ? 1 : a > b ? -1 : 0))
        .map(([settlementDate, day]) => {
          const feeAmount = chargesFee ? Math.floor((day.gross * GATEWAY.mdrPercent + 50) / 100) : 0;
          const settled = today > settlementDate;
          return {
            settlementDate,
            status: settled ? 'SETTLED' : 'PENDING',
            grossAmount: day.gross,
            refundedAmount: day.refunded,
            feeAmount,
            netAmount: day.gross - day.refunded - feeAmount,
            transactionCount: day.count,
            ...(settled ? { utr: utrFor(principal.merchantId, settlementDate) } : {}),
          };
        });
      return { status: 200, body: { settlements } };
    },
  });
}
