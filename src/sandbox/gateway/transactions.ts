/**
 * The Transactional API's transaction operations: the merchant's configuration, pre-eligibility,
 * create, read (record or stage), cancel, user input (OTP), register-external, list; and the hosted
 * page `url` as a sandbox endpoint.
 */
import { randomUUID } from 'node:crypto';
import type { operations } from '../../../generated/types/gateway.js';
import { paiseAndRupees } from '../amounts.js';
import type { FamilyContext } from '../context.js';
import type { EveryField } from '../records.js';
import { keepMeasured, type KeptJson } from '../stored-json.js';
import { transactionalApiAuth } from './auth.js';
import { gatewayEligibility, newOtp, type TransactionEngine } from './engine.js';
import { downPaymentFor } from '../fixtures.js';
import { copyOtp, copyTransaction, NAMED_IN_BODY, NAMED_IN_TRANSACTION, transactionKey, type CheckRecord, type FailureReason, type GatewayState, type MerchantPrincipal, type TransactionRecord } from './records.js';
import { GATEWAY, time } from './values.js';
import { checkView, isFinal, nextStepOf, stageView, statusOf, transactionView } from './views.js';
import { webhookUrlProblem } from './webhooks.js';
import { shopUser, tenDigitPhone } from '../shop-user.js';
import { statusOutcome } from '../../clients/statuses.js';

/** The list cursor: base64url of `<createdAt>:<id>` of the last transaction of the page. */
function encodeCursor(transaction: Pick<TransactionRecord, 'createdAt' | 'id'>): string {
  return Buffer.from(`${transaction.createdAt}:${transaction.id}`, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): { createdAt: number; id: string } | undefined {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^([0-9]{1,15}):([A-Za-z0-9_-]{1,64})$/.exec(text);
  if (match === null) return undefined;
  const decoded = { createdAt: Number(match[1]), id: match[2]! };
  return encodeCursor(decoded) === cursor ? decoded : undefined;
}

export function registerTransactions(ctx: FamilyContext, state: GatewayState, engine: TransactionEngine): void {
  const { errors, clock } = ctx;
  const { checks, transactions, merchants } = state;
  const authenticate = transactionalApiAuth(ctx, state);

  // An unknown transaction, or another merchant's, has the description's code in every family.
  const notFound = (id: string) => errors.notFound(`No transaction with id '${id}' exists for this merchant.`, 'NO_SUCH_TRANSACTION');

  /** The stage, after issuing a new OTP option when the current one expired (the error `OTP_EXPIRED` answers the expired one). */
  const withFreshOtp = (transaction: TransactionRecord): TransactionRecord => {
    if (transaction.step !== 'authenticate' || transaction.otp === undefined) return transaction;
    const now = clock.now();
    if (now < transaction.otp.expiresAt) return transaction;
    const updated = copyTransaction(transaction);
    updated.otp = newOtp(now, transaction.otp);
    engine.save(updated);
    return updated;
  };

  // Integrations ask before every call which API generation the merchant uses; a gateway
  // merchant is generation 2. Other credentials answer 401 (read as "generation 1" by them).
  ctx.route<operations['getMerchantConfiguration'], MerchantPrincipal>('getMerchantConfiguration', {
    authenticate,
    handle() {
      return { status: 200, body: { version: GATEWAY.apiVersion, maxOrderAmount: GATEWAY.maxOrderAmount } };
    },
  });

  ctx.route<operations['checkPreEligibility'], MerchantPrincipal>('checkPreEligibility', {
    authenticate,
    handle({ body, principal }) {
      const now = clock.now();
      const phoneNumber = tenDigitPhone(body.user.phoneNumber);
      const result = gatewayEligibility(phoneNumber, body.transaction.amount);
      const check: CheckRecord = {
        id: randomUUID(),
        merchantId: principal.merchantId,
        phoneNumber,
        amount: body.transaction.amount,
        eligible: result.eligible,
        ...(result.eligible ? {} : { ineligibilityReason: result.reason }),
        createdAt: now,
        expiresAt: now + GATEWAY.checkValidityMs,
        attempts: [],
      };
      engine.createCheck(check);
      return { status: 200, body: { preEligibilityCheck: checkView(check) } };
    },
  });

  ctx.route<operations['createTransaction'], MerchantPrincipal>('createTransaction', {
    authenticate,
    // A large body is parsed off the event loop and its notes kept as text there (json-offload.ts).
    freeJson: ['/transaction/notes'],
    handle({ body, principal, kept: offloaded }) {
      const now = clock.now();
      const { merchantId } = principal;
      const { expiryTimestamp, ...given } = body.createConfiguration ?? {};
      // An empty colour or logo override means "no override" (why: D31).
      const configuration = { ...given };
      if (configuration.colorOverride === '') delete configuration.colorOverride;
      if (configuration.logoOverride === '') delete configuration.logoOverride;

      // 1 minute to 24 hours after creation, in epoch seconds (a value of 10^12 or more
      // is read as epoch milliseconds; why: D13).
      let expiresAt: number | undefined;
      if (expiryTimestamp !== undefined) {
        const inSeconds = expiryTimestamp < GATEWAY.millisecondTimestampFrom;
        expiresAt = inSeconds ? expiryTimestamp * 1000 : expiryTimestamp;
        const earliest = now + GATEWAY.minExpiryMs;
        const latest = now + GATEWAY.maxExpiryMs;
        if (expiresAt < earliest || expiresAt > latest) {
          const [from, to] = inSeconds ? [Math.ceil(earliest / 1000), Math.floor(latest / 1000)] : [earliest, latest];
          const unit = inSeconds ? 'epoch seconds' : 'epoch milliseconds';
          return errors.badRequest(
            `createConfiguration.expiryTimestamp must lie between 1 minute and 24 hours after now (${unit} from ${from} to ${to}).`,
            [{ field: '/createConfiguration/expiryTimestamp', issue: `must be from ${from} to ${to} (${unit})` }],
          );
        }
      }

      const badUrl = webhookUrlProblem(ctx, configuration.webhookUrl, '/createConfiguration/webhookUrl');
      if (badUrl !== undefined) return badUrl;

      // The check must be one of this merchant's.
      let check: CheckRecord | undefined;
      if (body.preEligibilityCheckId !== undefined) {
        check = checks.get(body.preEligibilityCheckId);
        if (check === undefined || check.merchantId !== merchantId) {
          return errors.error(
            400,
            'UNKNOWN_PRE_ELIGIBILITY_CHECK',
            `preEligibilityCheckId '${body.preEligibilityCheckId}' names no pre-eligibility check of this merchant.`,
            [{ field: '/preEligibilityCheckId', issue: 'names no check of this merchant' }],
          );
        }
      }

      const key = transactionKey(merchantId, body.transaction.id);
      if (transactions.has(key)) {
        // The description's code for a transaction id used before (the SDK flow's, 400).
        return errors.error(400, 'DUPLICATE_TRANSACTION_ID', `A transaction with id '${body.transaction.id}' exists already for this merchant.`);
      }

      // Notes are kept as JSON text within the limits of members and depth and the notes budget.
      let notes: KeptJson | undefined;
      const measured = offloaded?.get('/transaction/notes');
      if (measured !== undefined ? measured.text !== '{}' : body.transaction.notes !== undefined && !isEmpty(body.transaction.notes)) {
        const kept = keepMeasured(measured, body.transaction.notes, 'transaction.notes', ctx.config.limits);
        if (!kept.ok) return errors.badRequest(kept.problem, [{ field: '/transaction/notes', issue: kept.issue }]);
        notes = kept.kept;
      }
      const refused = engine.admit(merchantId, notes?.bytes ?? 0);
      if (refused !== undefined) return refused;

      // A transaction that is not eligible or differs from its check starts in `failure`.
      let failure: FailureReason | undefined;
      const amount = body.transaction.amount;
      // The number as +91 and ten digits, an empty email left out.
      const user = shopUser(body.user);
      if (check !== undefined && now < check.expiresAt) {
        if (check.phoneNumber !== user.phoneNumber || check.amount !== amount) failure = 'PRE_ELIGIBILITY_MISMATCH';
        else if (!check.eligible) failure = 'NOT_ELIGIBLE';
      } else {
        // No check, or an expired one (treated as absent): the checks run again (rule 2).
        if (!gatewayEligibility(user.phoneNumber, amount).eligible) failure = 'NOT_ELIGIBLE';
      }
      // Only one attempt on a check can succeed: once one has, a new attempt cannot.
      if (failure === undefined && check?.succeededTransactionId !== undefined) failure = 'OTHER_ATTEMPT_SUCCEEDED';

      // The request's fields kept as sent and returned as they are (records.ts, `EchoedFields`).
      const echoedInTransaction = unnamed(body.transaction, NAMED_IN_TRANSACTION);
      const echoedInBody = unnamed(body, NAMED_IN_BODY);
      const origin = ctx.publicUrl();
      // Every field named (EveryField, src/sandbox/records.ts): one forgotten here is a type error.
      const transaction: EveryField<TransactionRecord> = {
        merchantId,
        id: body.transaction.id,
        amount,
        notesJson: notes?.text,
        notesBytes: notes?.bytes ?? 0,
        user,
        deviceInformation: body.deviceInformation,
        mode: body.transaction.mode,
        // Hosted, the link carries the transaction's checkout token (access.ts).
        url: ctx.access.checkoutLink(
          `${origin}/sandbox/gateway/checkout/${encodeURIComponent(merchantId)}/${encodeURIComponent(body.transaction.id)}`,
          { merchant: merchantId },
          body.transaction.id,
        ),
        preEligibilityCheckId: body.preEligibilityCheckId,
        configuration: isEmpty(configuration) ? NONE : configuration,
        step: failure === undefined ? 'authenticate' : 'failure',
        failureReason: failure,
        // A merchant set to the alias answers its failures as FAILURE.
        failedStatus: state.merchants.get(merchantId)?.failedStatus,
        otp: failure === undefined ? newOtp(now) : undefined,
        downPaymentAmount: downPaymentFor(amount),
        downPayment: undefined,
        confirmsAt: undefined,
        refundCount: 0,
        refundedAmount: 0,
        nextPendingRefund: 0,
        createdAt: now,
        updatedAt: now,
        expiresAt: expiresAt ?? now + GATEWAY.defaultExpiryMs,
        finishedAt: failure === undefined ? undefined : now,
        echoed: echoedInBody === undefined ? echoedInTransaction : { ...echoedInTransaction, ...echoedInBody },
      };
      engine.create(transaction);
      // 200, as the integrations accept no other 2xx.
      return { status: 200, body: { transaction: transactionView(transaction, []) } };
    },
  });

  ctx.route<operations['getTransaction'], MerchantPrincipal>('getTransaction', {
    authenticate,
    handle({ params, query, principal }) {
      const transaction = engine.find(principal.merchantId, params.id);
      if (transaction === undefined) return notFound(params.id);
      if (query.include === 'stage') {
        const current = withFreshOtp(transaction);
        return { status: 200, body: stageView(current, state.refundsOf(current)) };
      }
      return { status: 200, body: { transaction: transactionView(transaction, state.refundsOf(transaction)) } };
    },
  });

  // The merchant gives up a PENDING transaction (a GET that changes state, as integrations call it; why: D37).
  ctx.route<operations['cancelTransaction'], MerchantPrincipal>('cancelTransaction', {
    authenticate,
    handle({ params, principal }) {
      const transaction = engine.find(principal.merchantId, params.transactionId);
      if (transaction === undefined) return notFound(params.transactionId);
      if (isFinal(transaction.step)) {
        return errors.error(
          409,
          'INVALID_STATE',
          `The transaction is already ${statusOf(transaction)}${transaction.failureReason === undefined ? '' : ` (${transaction.failureReason})`}; only a PENDING transaction can be cancelled.`,
        );
      }
      const cancelled = engine.fail(transaction, 'CANCELLED_BY_MERCHANT', clock.now());
      return { status: 200, body: { transaction: transactionView(cancelled, state.refundsOf(cancelled)) } };
    },
  });

  ctx.route<operations['submitUserInput'], MerchantPrincipal>('submitUserInput', {
    authenticate,
    handle({ params, body, principal }) {
      const { transactionId, referenceId } = params;
      const transaction = engine.find(principal.merchantId, transactionId);
      if (transaction === undefined) return notFound(transactionId);
      // D250: an OTP after the third wrong one is still an OTP that is not accepted, not a state conflict.
      if (transaction.failureReason === 'OTP_ATTEMPTS_EXCEEDED') {
        return errors.error(
          400,
          'INVALID_OTP',
          `No OTP attempts are left: the ${GATEWAY.maxOtpAttempts}rd wrong OTP failed the transaction (OTP_ATTEMPTS_EXCEEDED). Create a new transaction with a new id.`,
        );
      }
      if (transaction.step !== 'authenticate' || transaction.otp === undefined) {
        return errors.error(
          409,
          'INVALID_STATE',
          `The transaction is in step ${transaction.step}, not authenticate; no user input is expected.`,
        );
      }
      const otp = transaction.otp;
      if (otp.referenceId !== referenceId) {
        if (otp.previousReferenceIds.includes(referenceId)) {
          return errors.error(
            400,
            'OTP_EXPIRED',
            'The OTP of this referenceId expired and a new one was issued: read the stage (include=stage) for the current referenceId.',
          );
        }
        return errors.notFound(`The transaction has no user-input option with referenceId '${referenceId}'.`);
      }
      const now = clock.now();
      if (now >= otp.expiresAt || body.value === GATEWAY.expiredOtp) {
        const reissued = copyTransaction(transaction);
        reissued.otp = newOtp(now, otp);
        engine.save(reissued);
        return errors.error(
          400,
          'OTP_EXPIRED',
          'The OTP expired. A new OTP was sent with a new referenceId: read the stage (include=stage) for it.',
        );
      }
      if (body.value === GATEWAY.correctOtp) {
        const updated = copyTransaction(transaction);
        updated.step = 'payment';
        updated.updatedAt = now;
        engine.save(updated);
        return { status: 200, body: stageView(updated, state.refundsOf(updated)) };
      }
      const wrongAttempts = otp.wrongAttempts + 1;
      const withAttempt = copyTransaction(transaction);
      withAttempt.otp = copyOtp(otp);
      withAttempt.otp.wrongAttempts = wrongAttempts;
      engine.save(withAttempt);
      if (wrongAttempts >= GATEWAY.maxOtpAttempts) {
        engine.fail(withAttempt, 'OTP_ATTEMPTS_EXCEEDED', now);
        return errors.error(
          400,
          'INVALID_OTP',
          `The OTP does not match. That was the ${GATEWAY.maxOtpAttempts}rd wrong OTP: the transaction failed (OTP_ATTEMPTS_EXCEEDED).`,
        );
      }
      const left = GATEWAY.maxOtpAttempts - wrongAttempts;
      return errors.error(400, 'INVALID_OTP', `The OTP does not match; ${left} attempt${left === 1 ? '' : 's'} left.`);
    },
  });

  ctx.route<operations['registerExternalPayment'], MerchantPrincipal>('registerExternalPayment', {
    authenticate,
    handle({ params, body, principal }) {
      const transaction = engine.find(principal.merchantId, params.transactionId);
      if (transaction === undefined) return notFound(params.transactionId);
      if (transaction.step !== 'payment') {
        return errors.error(
          409,
          'INVALID_STATE',
          `A down payment can be registered only in step payment; the transaction is in step ${transaction.step}.`,
        );
      }
      if (body.metaData.amount !== transaction.downPaymentAmount) {
        return errors.error(
          400,
          'DOWN_PAYMENT_AMOUNT_MISMATCH',
          `metaData.amount is ${paiseAndRupees(body.metaData.amount)} but paymentOptions.amount is ${paiseAndRupees(transaction.downPaymentAmount)}.`,
          [{ field: '/metaData/amount', issue: `must equal paymentOptions.amount (${paiseAndRupees(transaction.downPaymentAmount)})` }],
        );
      }
      const now = clock.now();
      const updated = copyTransaction(transaction);
      updated.step = 'wait';
      updated.downPayment = { amount: body.metaData.amount, metaData: body.metaData, registeredAt: now };
      updated.confirmsAt = now + GATEWAY.confirmationDelayMs;
      updated.updatedAt = now;
      engine.save(updated);
      return { status: 200, body: stageView(updated, state.refundsOf(updated)) };
    },
  });

  ctx.route<operations['listTransactions'], MerchantPrincipal>('listTransactions', {
    authenticate,
    handle({ query, principal }) {
      let after: { createdAt: number; id: string } | undefined;
      if (query.cursor !== undefined) {
        after = decodeCursor(query.cursor);
        // A cursor this service issued names a transaction of this merchant, created at that time.
        const anchor = after === undefined ? undefined : transactions.get(transactionKey(principal.merchantId, after.id));
        if (after === undefined || anchor === undefined || anchor.createdAt !== after.createdAt) {
          return errors.badRequest('cursor is not a cursor this service issued; pass nextCursor of the previous page unchanged.', [
            { field: 'cursor', issue: 'is not a valid cursor' },
          ]);
        }
      }
      const from = query.createdFrom === undefined ? undefined : Date.parse(query.createdFrom);
      const to = query.createdTo === undefined ? undefined : Date.parse(query.createdTo);
      const limit = query.limit ?? GATEWAY.defaultListLimit;
      // Walk this merchant's transactions newest first, from the cursor or createdTo, whichever
      // comes first; each is caught up (due events applied) before the status filter looks at it.
      const bound = to === undefined ? undefined : { createdAt: to, id: '' };
      const start = after === undefined ? bound : bound === undefined || after.createdAt < to! ? after : bound;
      // At most `limit` transactions and about `limits.pageBytes` bytes of them (at least one).
      const page: TransactionRecord[] = [];
      let more = false;
      let bytes = 0;
      for (const id of state.index.newestFirst(principal.merchantId, start)) {
        const transaction = engine.find(principal.merchantId, id);
        if (transaction === undefined) continue;
        if (from !== undefined && transaction.createdAt < from) break;
        // FAILED and FAILURE name one status; either filter finds the merchant's failures.
        if (query.status !== undefined && statusOutcome(statusOf(transaction)) !== statusOutcome(query.status)) continue;
        const size = VIEW_BYTES + transaction.notesBytes + transaction.refundCount * REFUND_VIEW_BYTES;
        if (page.length === limit || (page.length > 0 && bytes + size > ctx.config.limits.pageBytes)) {
          more = true;
          break;
        }
        bytes += size;
        page.push(transaction);
      }
      const last = page[page.length - 1];
      return {
        status: 200,
        body: {
          transactions: page.map((transaction) => transactionView(transaction, state.refundsOf(transaction))),
          nextCursor: more && last !== undefined ? encodeCursor(last) : null,
        },
      };
    },
  });

  // The hosted page (`transaction.url`): what it shows and where it sends the user.
  // Hosted, only with the page's checkout token or a credential that owns the transaction (access.ts).
  const hostedPage = (request: Parameters<typeof ctx.access.shopperAllows>[0], merchantId: string, transactionId: string) => {
    const merchant = merchants.get(merchantId);
    const transaction = merchant === undefined ? undefined : engine.find(merchantId, transactionId);
    if (merchant === undefined || transaction === undefined) return undefined;
    return ctx.access.shopperAllows(request, { merchant: merchantId }, transactionId) ? { merchant, transaction } : undefined;
  };
  const pageNotFound = (merchantId: string, transactionId: string) =>
    ctx.sandboxErrors.notFound(`No gateway transaction '${transactionId}' of merchant '${merchantId}'.`, 'NO_SUCH_TRANSACTION');
  const pageView = (merchant: NonNullable<ReturnType<typeof hostedPage>>['merchant'], transaction: TransactionRecord) => {
    const config = transaction.configuration;
    const status = statusOf(transaction);
    // Success and failure to their URLs; the shopper's own cancel to cancelRedirectUrl.
    const redirectTo =
      status === 'SUCCESS'
        ? (config.successRedirectUrl ?? null)
        : transaction.failureReason === 'CANCELLED_BY_USER'
          ? (config.cancelRedirectUrl ?? config.failureRedirectUrl ?? null)
          : status === 'PENDING'
            ? null
            : (config.failureRedirectUrl ?? null);
    return {
      merchant: {
        id: merchant.id,
        brandName: merchant.brandName,
        brandHomePageUrl: merchant.brandHomePageUrl,
        color: config.colorOverride ?? merchant.defaultColor ?? null,
        logo: config.logoOverride ?? (merchant.hasLogo ? 'defaultLogo' : null),
      },
      transaction: transactionView(transaction, state.refundsOf(transaction)),
      nextStep: nextStepOf(transaction),
      final: isFinal(transaction.step),
      cancelRedirectUrl: config.cancelRedirectUrl ?? null,
      redirectTo,
      now: time.iso(clock.now()),
    };
  };
  ctx.sandboxRoute('GET', '/sandbox/gateway/checkout/{merchantId}/{transactionId}', (request) => {
    const merchantId = request.params.merchantId ?? '';
    const transactionId = request.params.transactionId ?? '';
    const found = hostedPage(request, merchantId, transactionId);
    if (found === undefined) return pageNotFound(merchantId, transactionId);
    return { status: 200, body: pageView(found.merchant, found.transaction) };
  }, { shopper: true });
  // The shopper cancels on the hosted page: CANCELLED (CANCELLED_BY_USER), the webhook sent,
  // the shopper sent to cancelRedirectUrl (the service's Magento module gives its return URL there).
  ctx.sandboxRoute('POST', '/sandbox/gateway/checkout/{merchantId}/{transactionId}/cancel', (request) => {
    const merchantId = request.params.merchantId ?? '';
    const transactionId = request.params.transactionId ?? '';
    const found = hostedPage(request, merchantId, transactionId);
    if (found === undefined) return pageNotFound(merchantId, transactionId);
    if (isFinal(found.transaction.step)) {
      return ctx.sandboxErrors.error(
        409,
        'INVALID_STATE',
        `The transaction is already ${statusOf(found.transaction)}; only a PENDING transaction can be cancelled on its page.`,
      );
    }
    const cancelled = engine.fail(found.transaction, 'CANCELLED_BY_USER', clock.now());
    return { status: 200, body: pageView(found.merchant, cancelled) };
  }, { shopper: true });
}

/** What a transaction's view takes in a list besides its notes, and each refund, about (bytes). */
const VIEW_BYTES = 1024;
const REFUND_VIEW_BYTES = 200;

/** One frozen empty object for the transactions without configuration (most of them). */
const NONE: Record<string, never> = Object.freeze({});

/**
 * The fields of `sent` that `named` does not list, or undefined when there are none (every request
 * while the contract has no field kept as sent). Rest destructuring would give the same fields, but
 * makes an object for every request and needs the names written out in the pattern; here they are
 * the lists the record's types are computed from.
 */
function unnamed<T extends object, K extends keyof T>(sent: T, named: readonly K[]): Omit<T, K> | undefined {
  let rest: Record<string, unknown> | undefined;
  for (const key in sent) {
    if ((named as readonly PropertyKey[]).includes(key)) continue;
    (rest ??= {})[key] = sent[key];
  }
  return rest as Omit<T, K> | undefined;
}

function isEmpty(value: object): boolean {
  for (const _key in value) return false;
  return true;
}
