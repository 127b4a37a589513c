/**
 * The extras (openapi/extras.yaml): a user's credit info, and identification and data pushes,
 * behind their own HTTP Basic credentials (D26). Credit info comes from the documented test users
 * (test-users.ts); pushes are stored per phone number and can be read back at
 * `GET /sandbox/extras/users/{phoneNumber}` (the data pushes a page at a time).
 *
 * Bounded: each data push is its own record (appending never copies the earlier pushes); the
 * newest {@link MAX_STORED_PUSHES} pushes, at most {@link MAX_STORED_PUSH_BYTES} bytes of them, are
 * kept over all phone numbers, and the `retention.transactions` most recently pushed phone numbers.
 *
 * Rules: D02 (errors), D24 (1 MiB), D25 (phone numbers), D26.
 */
import Denque from 'denque';
import type { components, operations } from '../../../generated/types/extras.js';
import { extrasAuth } from '../auth.js';
import type { FamilyContext } from '../context.js';
import { RequestError } from '../router.js';
import { ChildRecords } from '../store.js';
import { creditInfo, findTestUser } from '../test-users.js';

type Identification = components['schemas']['ExtrasIdentification'];

/** Collection `extras.identifications`, keyed by phone number. */
export interface StoredIdentification {
  userPhoneNumber: string;
  /** The latest value of each field: a later push replaces the fields it carries, keeps the others. */
  identification: Identification;
  updatedAt: string;
}

/**
 * Collection `extras.merchantData`, keyed by phone number: the pushes kept are the records of
 * `extras.merchantDataPushes` at positions `first` to `count - 1` ({@link ChildRecords}), each as
 * sent, never merged.
 */
export interface StoredMerchantData {
  userPhoneNumber: string;
  /** Pushes received for the number. */
  count: number;
  /** The oldest push still kept. */
  first: number;
}

export interface StoredPush {
  data: unknown;
  /** Virtual epoch milliseconds (shown as RFC 3339). */
  receivedAt: number;
}

export const EXTRAS_IDENTIFICATIONS = 'extras.identifications';
export const EXTRAS_MERCHANT_DATA = 'extras.merchantData';
export const EXTRAS_MERCHANT_DATA_PUSHES = 'extras.merchantDataPushes';
/** Data pushes kept over all phone numbers, at most; the oldest go first. */
export const MAX_STORED_PUSHES = 100_000;
/** Bytes of data pushes (as received) kept over all phone numbers, at most. */
export const MAX_STORED_PUSH_BYTES = 64 * 1024 * 1024;
/** The default and the largest page of pushes of `GET /sandbox/extras/users/{phoneNumber}`. */
export const DEFAULT_PUSH_PAGE = 100;
export const MAX_PUSH_PAGE = 1000;

export function registerExtras(ctx: FamilyContext): void {
  const { errors, clock, config } = ctx;
  const identifications = ctx.store.collection<StoredIdentification>(EXTRAS_IDENTIFICATIONS);
  const merchantData = ctx.store.collection<StoredMerchantData>(EXTRAS_MERCHANT_DATA);
  const pushes = new ChildRecords(ctx.store.collection<StoredPush>(EXTRAS_MERCHANT_DATA_PUSHES));
  const authenticate = extrasAuth(config, errors);

  // Retention: every push kept, oldest first, as phone number, position and size in a ring buffer
  // (three values a push, no object); and the phone numbers, least recently pushed first (a Map
  // iterates in insertion order; a push moves its number to the end).
  const kept = new Denque<string | number>();
  let keptBytes = 0;
  const numbers = new Map<string, true>();

  const forgetOldestPush = () => {
    const phoneNumber = kept.shift() as string;
    const position = kept.shift() as number;
    keptBytes -= kept.shift() as number;
    const record = merchantData.get(phoneNumber);
    if (record === undefined || record.first !== position) return;
    pushes.delete(phoneNumber, position);
    merchantData.set(phoneNumber, { userPhoneNumber: phoneNumber, count: record.count, first: record.first + 1 });
  };

  const touch = (phoneNumber: string) => {
    numbers.delete(phoneNumber);
    numbers.set(phoneNumber, true);
    while (numbers.size > config.retention.transactions) {
      const oldest = numbers.keys().next().value as string;
      numbers.delete(oldest);
      identifications.delete(oldest);
      const record = merchantData.get(oldest);
      if (record !== undefined) {
        pushes.deleteRange(oldest, record.first, record.count);
        merchantData.delete(oldest);
      }
    }
  };

  ctx.route<operations['getCreditInfo'], true>('getCreditInfo', {
    authenticate,
    handle({ query }) {
      return { status: 200, body: creditInfo(query.userPhoneNumber, clock.date()) };
    },
  });

  ctx.route<operations['pushIdentification'], true>('pushIdentification', {
    authenticate,
    handle({ body }) {
      touch(body.userPhoneNumber);
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
    handle({ body, rawBody }) {
      const phoneNumber = body.userPhoneNumber;
      touch(phoneNumber);
      const previous = merchantData.get(phoneNumber);
      const count = previous?.count ?? 0;
      // One new record: the earlier pushes are not copied. (Written out, not spread: a spread copy
      // of a record gets a hidden class of its own.)
      pushes.set(phoneNumber, count, { data: body.data, receivedAt: clock.now() });
      merchantData.set(phoneNumber, { userPhoneNumber: phoneNumber, count: count + 1, first: previous?.first ?? 0 });
      kept.push(phoneNumber);
      kept.push(count);
      kept.push(rawBody.length);
      keptBytes += rawBody.length;
      while (kept.length > 3 * MAX_STORED_PUSHES || (keptBytes > MAX_STORED_PUSH_BYTES && kept.length > 3)) forgetOldestPush();
      return { status: 200, body: { message: 'ok' } };
    },
  });

  // What the service knows about a phone number: for checking the pushes.
  // ?limit=1..1000 (default 100) and ?after=<merchantDataNextCursor> page through the data pushes.
  ctx.sandboxRoute('GET', '/sandbox/extras/users/{phoneNumber}', (request) => {
    const phoneNumber = request.params.phoneNumber ?? '';
    if (!/^\+91[0-9]{10}$/.test(phoneNumber)) {
      return ctx.sandboxErrors.badRequest('The phone number must be +91 and ten digits (write + as %2B or +).', [
        { field: 'phoneNumber', issue: 'must match ^\\+91[0-9]{10}$' },
      ]);
    }
    const bad = (field: string, text: string): never => {
      throw new RequestError(ctx.sandboxErrors.badRequest(text, [{ field, issue: 'is not valid' }]));
    };
    const rawLimit = request.query.get('limit');
    const limit = rawLimit === null ? DEFAULT_PUSH_PAGE : /^[0-9]{1,4}$/.test(rawLimit) ? Number(rawLimit) : 0;
    if (limit < 1 || limit > MAX_PUSH_PAGE) bad('limit', `limit must be a whole number from 1 to ${MAX_PUSH_PAGE} (default ${DEFAULT_PUSH_PAGE}).`);
    const record = merchantData.get(phoneNumber);
    const first = record?.first ?? 0;
    const count = record?.count ?? 0;
    let from = first;
    const after = request.query.get('after');
    if (after !== null) {
      const match = /^push:([0-9]{1,15})$/.exec(Buffer.from(after, 'base64url').toString('utf8'));
      const position = match === null ? Number.NaN : Number(match[1]);
      if (!(position >= first && position <= count) || pushCursor(position) !== after) {
        bad('after', 'after is not a cursor of this phone number (or the pushes it pointed at were forgotten); pass merchantDataNextCursor unchanged, or start again without it.');
      }
      from = position;
    }
    const to = Math.min(count, from + limit);
    const testUser = findTestUser(phoneNumber);
    return {
      status: 200,
      body: {
        userPhoneNumber: phoneNumber,
        testUser: testUser === undefined ? null : { name: testUser.name, summary: testUser.summary },
        creditInfo: creditInfo(phoneNumber, clock.date()),
        identification: identifications.get(phoneNumber)?.identification ?? null,
        merchantData: pushes.range(phoneNumber, from, to).map((push) => ({ data: push.data, receivedAt: clock.iso(push.receivedAt) })),
        merchantDataCount: count - first,
        merchantDataNextCursor: to < count ? pushCursor(to) : null,
      },
    };
  });
}

function pushCursor(position: number): string {
  return Buffer.from(`push:${position}`, 'utf8').toString('base64url');
}
