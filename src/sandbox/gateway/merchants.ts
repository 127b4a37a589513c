/**
 * The Merchant API (Merchant API credentials): create, read, upload documents, disable, dashboard
 * access; automated verification on the virtual clock; and the sandbox helper
 * `POST /sandbox/gateway/merchants/{id}/verify`.
 *
 * Bounded (docs/sandbox.md, Limits): at most 10,000 merchants and 50 dashboard users per merchant
 * (409 INVALID_STATE beyond), and the newest 10,000 invitations.
 */
import { randomBytes } from 'node:crypto';
import Denque from 'denque';
import type { operations } from '../../../generated/types/gateway.js';
import type { FamilyContext } from '../context.js';
import { issueCredentials, merchantApiAuth } from './auth.js';
import type { EveryField } from '../records.js';
import { copyDocument, copyMerchant, type DocumentType, type GatewayState, type MerchantRecord, type StoredDocument } from './records.js';
import { GATEWAY, time } from './values.js';
import { ensurePublishedTestMerchant, PUBLISHED_TEST_MERCHANT_ID } from './published-merchant.js';
import { merchantView } from './views.js';
import { webhookUrlProblem } from './webhooks.js';

/** What the first bytes of a file say it is (only PDF, PNG and JPEG are accepted). */
function detectFormat(bytes: Buffer): StoredDocument['format'] | undefined {
  if (bytes.subarray(0, 5).toString('latin1') === '%PDF-') return 'PDF';
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'PNG';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'JPEG';
  return undefined;
}

export interface MerchantEngine {
  /** The merchant after applying a verification that is due. */
  find(id: string): MerchantRecord | undefined;
}

export function registerMerchants(ctx: FamilyContext, state: GatewayState): MerchantEngine {
  const { errors, clock } = ctx;
  const { merchants, credentials, invitations } = state;
  const authenticate = merchantApiAuth(ctx);

  const notFound = (id: string) => errors.notFound(`No merchant with id '${id}' exists.`);

  // The newest GATEWAY.keptInvitations invitations are kept, oldest first in a ring buffer; those
  // already in the store (a store that outlives the process) join it in the order they were made.
  const keptInvitations = new Denque<string>(
    invitations
      .values()
      .sort((a, b) => a.createdAt - b.createdAt)
      .map((invitation) => invitation.token),
  );
  const keepInvitation = (token: string): void => {
    keptInvitations.push(token);
    while (keptInvitations.length > GATEWAY.keptInvitations) invitations.delete(keptInvitations.shift()!);
  };

  /** Applies the automated verification when it is due (timers call it too). */
  const find = (id: string): MerchantRecord | undefined => {
    if (id === PUBLISHED_TEST_MERCHANT_ID) ensurePublishedTestMerchant(ctx, state);
    const merchant = merchants.get(id);
    if (merchant === undefined) return undefined;
    if (
      merchant.stage === 'verificationInProgress' &&
      merchant.verificationDueAt !== undefined &&
      merchant.verificationDueAt <= clock.now()
    ) {
      return verify(merchant, undefined, merchant.verificationDueAt);
    }
    return merchant;
  };

  /**
   * Runs verification: the first verification of a merchant whose entityName contains "Reject"
   * rejects its PAN (back to `documentsPending`); otherwise every document is verified, the
   * merchant becomes `enabled` and its Transactional API credentials are issued.
   */
  const verify = (merchant: MerchantRecord, outcome: 'pass' | 'reject' | undefined, at: number): MerchantRecord => {
    const reject = outcome === undefined
      ? merchant.verifications === 0 && merchant.entityName.toLowerCase().includes(GATEWAY.rejectTrigger)
      : outcome === 'reject';
    const updated = copyMerchant(merchant);
    updated.verifications = merchant.verifications + 1;
    updated.updatedAt = at;
    updated.verificationDueAt = undefined;
    if (reject) {
      updated.stage = 'documentsPending';
      updated.documents = merchant.documents.map((document) => {
        const checked = copyDocument(document);
        if (document.documentType === 'PAN') {
          checked.status = 'rejected';
          checked.rejectionReason = 'The name on the PAN does not match the legal entity name. Upload a PAN of the entity.';
        } else {
          checked.status = 'verified';
        }
        return checked;
      });
    } else {
      updated.stage = 'enabled';
      updated.documents = merchant.documents.map((document) => {
        const verified = copyDocument(document);
        verified.status = 'verified';
        verified.rejectionReason = undefined;
        return verified;
      });
      const issued = issueCredentials(merchant.id);
      updated.credentials = issued;
      credentials.set(issued.username, { ...issued, merchantId: merchant.id });
    }
    merchants.set(updated.id, updated);
    return updated;
  };

  ctx.route<operations['createMerchant'], true>('createMerchant', {
    authenticate,
    handle({ body }) {
      const input = body.merchant;
      // The schema already rejects the reserved ids `transaction`, `settlement` and `configuration`.
      const badUrl = webhookUrlProblem(ctx, input.defaultWebhookUrl, '/merchant/defaultWebhookUrl');
      if (badUrl !== undefined) return badUrl;
      if (find(input.id) !== undefined) {
        return errors.error(400, 'DUPLICATE_ID', `A merchant with id '${input.id}' exists already.`);
      }
      if (merchants.size >= GATEWAY.maxMerchants) {
        return errors.error(
          409,
          'INVALID_STATE',
          `The sandbox holds ${GATEWAY.maxMerchants} merchants, its limit; restart it (or use another sandbox) to onboard more.`,
        );
      }
      const now = clock.now();
      // Every field named (EveryField, src/sandbox/records.ts): one forgotten here is a type error.
      const merchant: EveryField<MerchantRecord> = {
        id: input.id,
        brandName: input.brandName,
        entityName: input.entityName,
        brandHomePageUrl: input.brandHomePageUrl,
        mccCode: input.mccCode,
        defaultWebhookUrl: input.defaultWebhookUrl,
        defaultColor: input.defaultColor,
        settlementDetails: input.settlementDetails,
        hasLogo: input.defaultLogo !== undefined,
        hasFavicon: input.defaultFavicon !== undefined,
        stage: 'documentsPending',
        documents: [],
        verificationDueAt: undefined,
        verifications: 0,
        credentials: undefined,
        disabledReason: undefined,
        failedStatus: undefined,
        dashboardUsers: [],
        createdAt: now,
        updatedAt: now,
      };
      merchants.set(merchant.id, merchant);
      return { status: 201, body: { merchant: merchantView(merchant) } };
    },
  });

  ctx.route<operations['getMerchant'], true>('getMerchant', {
    authenticate,
    handle({ params }) {
      const merchant = find(params.id);
      if (merchant === undefined) return notFound(params.id);
      return { status: 200, body: { merchant: merchantView(merchant) } };
    },
  });

  ctx.route<operations['uploadMerchantDocument'], true>('uploadMerchantDocument', {
    authenticate,
    handle({ params, body }) {
      const merchant = find(params.id);
      if (merchant === undefined) return notFound(params.id);
      if (merchant.stage !== 'documentsPending') {
        return errors.error(
          409,
          'INVALID_STATE',
          `Documents can be uploaded only while the merchant is documentsPending; it is ${merchant.stage}.`,
        );
      }
      const value = body.document.value;
      const field = '/document/value';
      if (value.length % 4 !== 0) {
        return errors.badRequest('document.value is not valid base64: its length must be a multiple of 4 (with = padding).', [
          { field, issue: 'must be standard base64 with padding' },
        ]);
      }
      const bytes = Buffer.from(value, 'base64');
      if (bytes.length > GATEWAY.maxDocumentBytes) {
        return errors.badRequest(`The document is ${bytes.length} bytes; at most ${GATEWAY.maxDocumentBytes} bytes (700 KiB) are accepted.`, [
          { field, issue: 'must decode to at most 700 KiB' },
        ]);
      }
      const format = detectFormat(bytes);
      if (format === undefined) {
        return errors.badRequest(
          'The document must be a PDF, PNG or JPEG file; its first bytes match none of them (checked by content, not by name).',
          [{ field, issue: 'must be the base64 of a PDF, PNG or JPEG file' }],
        );
      }
      const now = clock.now();
      const stored: EveryField<StoredDocument> = {
        documentType: body.documentType,
        status: 'uploaded',
        rejectionReason: undefined,
        format,
        bytes: bytes.length,
        uploadedAt: now,
      };
      const documents = [...merchant.documents.filter((document) => document.documentType !== body.documentType), stored];
      const updated = copyMerchant(merchant);
      updated.documents = documents;
      updated.updatedAt = now;
      const complete = GATEWAY.requiredDocumentTypes.every((type: DocumentType) =>
        documents.some((document) => document.documentType === type && document.status !== 'rejected'),
      );
      if (complete) {
        updated.stage = 'verificationInProgress';
        updated.verificationDueAt = now + GATEWAY.verificationDelayMs;
        clock.schedule(updated.verificationDueAt, () => find(updated.id));
      }
      merchants.set(updated.id, updated);
      return { status: 200, body: { merchant: merchantView(updated) } };
    },
  });

  ctx.route<operations['disableMerchant'], true>('disableMerchant', {
    authenticate,
    handle({ params, body }) {
      const merchant = find(params.id);
      if (merchant === undefined) return notFound(params.id);
      if (merchant.stage === 'disabled') return { status: 200, body: { merchant: merchantView(merchant) } };
      const updated = copyMerchant(merchant);
      updated.stage = 'disabled';
      updated.updatedAt = clock.now();
      updated.verificationDueAt = undefined;
      if (body?.reason !== undefined) updated.disabledReason = body.reason;
      // Revoked at once; the password stays on the record to sign late webhooks.
      if (merchant.credentials !== undefined) credentials.delete(merchant.credentials.username);
      merchants.set(updated.id, updated);
      return { status: 200, body: { merchant: merchantView(updated) } };
    },
  });

  ctx.route<operations['createDashboardAccess'], true>('createDashboardAccess', {
    authenticate,
    handle({ params, body }) {
      const merchant = find(params.id);
      if (merchant === undefined) return notFound(params.id);
      if (merchant.stage === 'disabled') {
        return errors.error(409, 'INVALID_STATE', 'The merchant is disabled; dashboard access cannot be created.');
      }
      const { name, email } = body.dashboardUser;
      if (merchant.dashboardUsers.some((user) => user.email.toLowerCase() === email.toLowerCase())) {
        return errors.error(400, 'DUPLICATE_ID', `${email} already has access to this merchant's dashboard.`);
      }
      if (merchant.dashboardUsers.length >= GATEWAY.maxDashboardUsers) {
        return errors.error(
          409,
          'INVALID_STATE',
          `The merchant has ${GATEWAY.maxDashboardUsers} dashboard users, the sandbox's limit; no more can be invited.`,
        );
      }
      const now = clock.now();
      const token = randomBytes(16).toString('hex');
      const expiresAt = now + GATEWAY.invitationValidityMs;
      const updated = copyMerchant(merchant);
      updated.dashboardUsers = [...merchant.dashboardUsers, { email, name, token, invitedAt: now, expiresAt }];
      updated.updatedAt = now;
      merchants.set(merchant.id, updated);
      invitations.set(token, { token, merchantId: merchant.id, email, name, createdAt: now, expiresAt });
      keepInvitation(token);
      return {
        status: 201,
        body: {
          dashboardAccess: {
            email,
            name,
            loginUrl: `${ctx.publicUrl()}/sandbox/gateway/dashboard/invitations/${token}`,
            invitationExpiresAt: time.iso(expiresAt),
          },
        },
      };
    },
  });

  // --- Sandbox helpers -------------------------------------------------------------------------

  // Finish the automated verification at once: {"outcome": "pass" | "reject"} (default: the rule).
  ctx.sandboxRoute('POST', '/sandbox/gateway/merchants/{id}/verify', (request) => {
    const id = request.params.id ?? '';
    const body = request.json();
    const outcome =
      body === undefined ? undefined : body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as { outcome?: unknown }).outcome : null;
    if (outcome !== undefined && outcome !== 'pass' && outcome !== 'reject') {
      return ctx.sandboxErrors.badRequest('The body is optional; when sent it is {"outcome": "pass"} or {"outcome": "reject"}.', [
        { field: '/outcome', issue: 'must be "pass" or "reject"' },
      ]);
    }
    const merchant = ctx.access.allows(request, { merchant: id }) ? find(id) : undefined;
    if (merchant === undefined) return ctx.sandboxErrors.notFound(`No merchant with id '${id}' exists.`);
    if (merchant.stage !== 'verificationInProgress') {
      return ctx.sandboxErrors.error(
        409,
        'INVALID_STATE',
        `Only a merchant in verificationInProgress can be verified; this one is ${merchant.stage}.`,
      );
    }
    const updated = verify(merchant, outcome, clock.now());
    return { status: 200, body: { merchant: merchantView(updated) } };
  });

  // Where `dashboardAccess.loginUrl` points: the invitation, as the dashboard would show it.
  // The merchant's failed transactions answer FAILURE (the alias the Magento module reads) or FAILED.
  ctx.sandboxRoute('POST', '/sandbox/gateway/merchants/{id}/failed-status', (request) => {
    const id = request.params.id ?? '';
    const body = request.json();
    const status = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as { status?: unknown }).status : undefined;
    if (status !== 'FAILED' && status !== 'FAILURE') {
      return ctx.sandboxErrors.badRequest(
        'Send {"status": "FAILURE"} (failed transactions answer the alias, as the Magento module reads it) or {"status": "FAILED"} (the description\'s word, the default).',
        [{ field: '/status', issue: 'must be "FAILED" or "FAILURE"' }],
      );
    }
    const merchant = find(id);
    if (merchant === undefined) return ctx.sandboxErrors.notFound(`No merchant with id '${id}' exists.`);
    const updated = copyMerchant(merchant);
    updated.updatedAt = clock.now();
    updated.failedStatus = status === 'FAILURE' ? 'FAILURE' : undefined;
    merchants.set(id, updated);
    return { status: 200, body: { merchantId: id, failedStatus: status, appliesTo: 'transactions created from now on' } };
  });

  ctx.sandboxRoute('GET', '/sandbox/gateway/dashboard/invitations/{token}', (request) => {
    const found = invitations.get(request.params.token ?? '');
    const invitation = found !== undefined && ctx.access.allows(request, { merchant: found.merchantId }) ? found : undefined;
    if (invitation === undefined) return ctx.sandboxErrors.notFound('No such invitation.');
    const merchant = merchants.get(invitation.merchantId);
    return {
      status: 200,
      body: {
        merchantId: invitation.merchantId,
        brandName: merchant?.brandName ?? null,
        name: invitation.name,
        email: invitation.email,
        valid: clock.now() < invitation.expiresAt && merchant?.stage !== 'disabled',
        invitationExpiresAt: time.iso(invitation.expiresAt),
      },
    };
  });

  return { find };
}
