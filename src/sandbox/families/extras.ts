/**
 * The extras (openapi/extras.yaml): a user's credit info, and identification and data pushes,
 * behind their own HTTP Basic credentials (D26). Credit info comes from the documented test users
 * (test-users.ts); pushes are stored per phone number and can be read back at
 * `GET /sandbox/extras/users/{phoneNumber}`.
 *
 * Rules: D02 (errors), D24 (1 MiB), D25 (phone numbers), D26.
 */
import type { components, operations } from '../../../generated/types/extras.js';
import { extrasAuth } from '../auth.js';
import type { FamilyContext } from '../context.js';
import { creditInfo, findTestUser } from '../test-users.js';

type Identification = components['schemas']['ExtrasIdentification'];

/** Collection `extras.identifications`, keyed by phone number. */
export interface StoredIdentification {
  userPhoneNumber: string;
  /** The latest value of each field: a later push replaces the fields it carries, keeps the others. */
  identification: Identification;
  updatedAt: string;
}

/** Collection `extras.merchantData`, keyed by phone number: every push as sent, never merged. */
export interface StoredMerchantData {
  userPhoneNumber: string;
  pushes: { data: unknown; receivedAt: string }[];
}

export const EXTRAS_IDENTIFICATIONS = 'extras.identifications';
export const EXTRAS_MERCHANT_DATA = 'extras.merchantData';

export function registerExtras(ctx: FamilyContext): void {
  const { errors, clock, config } = ctx;
  const identifications = ctx.store.collection<StoredIdentification>(EXTRAS_IDENTIFICATIONS);
  const merchantData = ctx.store.collection<StoredMerchantData>(EXTRAS_MERCHANT_DATA);
  const authenticate = extrasAuth(config, errors);

  ctx.route<operations['getCreditInfo'], true>('getCreditInfo', {
    authenticate,
    handle({ query }) {
      return { status: 200, body: creditInfo(query.userPhoneNumber, clock.date()) };
    },
  });

  ctx.route<operations['pushIdentification'], true>('pushIdentification', {
    authenticate,
    handle({ body }) {
      const previous = identifications.get(body.userPhoneNumber);
      identifications.set(body.userPhoneNumber, {
        userPhoneNumber: body.userPhoneNumber,
        identification: { ...previous?.identification, ...body.identification },
        updatedAt: clock.iso(),
      });
      return { status: 200, body: { message: 'ok' } };
    },
  });

  ctx.route<operations['pushMerchantData'], true>('pushMerchantData', {
    authenticate,
    handle({ body }) {
      const previous = merchantData.get(body.userPhoneNumber);
      merchantData.set(body.userPhoneNumber, {
        userPhoneNumber: body.userPhoneNumber,
        pushes: [...(previous?.pushes ?? []), { data: body.data, receivedAt: clock.iso() }],
      });
      return { status: 200, body: { message: 'ok' } };
    },
  });

  // What the service knows about a phone number: for checking the pushes.
  ctx.sandboxRoute('GET', '/sandbox/extras/users/{phoneNumber}', (request) => {
    const phoneNumber = request.params.phoneNumber ?? '';
    if (!/^\+91[0-9]{10}$/.test(phoneNumber)) {
      return ctx.sandboxErrors.badRequest('The phone number must be +91 and ten digits (write + as %2B or +).', [
        { field: 'phoneNumber', issue: 'must match ^\\+91[0-9]{10}$' },
      ]);
    }
    const testUser = findTestUser(phoneNumber);
    return {
      status: 200,
      body: {
        userPhoneNumber: phoneNumber,
        testUser: testUser === undefined ? null : { name: testUser.name, summary: testUser.summary },
        creditInfo: creditInfo(phoneNumber, clock.date()),
        identification: identifications.get(phoneNumber)?.identification ?? null,
        merchantData: merchantData.get(phoneNumber)?.pushes ?? [],
      },
    };
  });
}
