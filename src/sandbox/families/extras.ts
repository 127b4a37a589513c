/**
 * The extras (openapi/extras.yaml): a user's credit info, and identification and data pushes,
 * behind their own HTTP Basic credentials. Credit info comes from the documented test users
 * (test-users.ts); pushes are stored per phone number and can be read back at
 * `GET /sandbox/extras/users/{phoneNumber}` (the data pushes a page at a time).
 *
 * Bounded: each data push is its own record (appending never copies the earlier pushes), kept as
 * its JSON text (parsed, `[{},{},...]` costs 35 times its bytes); the newest
 * {@link MAX_STORED_PUSHES} pushes, at most `limits.pushBytes` bytes of text, are kept over all
 * phone numbers, and the `retention.transactions` most recently pushed phone numbers. A page of
 * the read is at most `limits.pageBytes` (at least one push) and is written as text, each push's
 * text as kept, without parsing it again.
 *
 * Errors are `{ errorCode, message, details? }`; bodies are at most 1 MiB; phone numbers are read
 * as +91 and ten digits.
 */
import Denque from 'denque';
import type { components, operations } from '../../../generated/types/extras.js';
import { TextParts } from '../../http/send.js';
import { extrasAuth } from '../auth.js';
import type { FamilyContext } from '../context.js';
import { RequestError } from '../router.js';
import { ChildRecords } from '../store.js';
import { keepMeasured } from '../stored-json.js';
import { creditInfo, findTestUser } from '../test-users.js';

type Identification = components['schemas']['ExtrasIdentification'];

/** Collection `extras.identifications`, keyed by phone number. */
interface StoredIdentification {
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
interface StoredMerchantData {
  userPhoneNumber: string;
  /** Pushes received for the number. */
  count: number;
  /** The oldest push still kept. */
  first: number;
}

interface StoredPush {
  /** The pushed `data`, as JSON text. */
  dataJson: string;
  /** Virtual epoch milliseconds (shown as RFC 3339). */
  receivedAt: number;
}

const EXTRAS_IDENTIFICATIONS = 'extras.identifications';
const EXTRAS_MERCHANT_DATA = 'extras.merchantData';
const EXTRAS_MERCHANT_DATA_PUSHES = 'extras.merchantDataPushes';
/** Data pushes kept over all phone numbers, at most; the oldest go first. */
const MAX_STORED_PUSHES = 100_000;
/** The default and the largest page of pushes of `GET /sandbox/extras/users/{phoneNumber}`. */
const DEFAULT_PUSH_PAGE = 100;
const MAX_PUSH_PAGE = 1000;

export function registerExtras(ctx: FamilyContext): void {
  const { errors, clock, config } = ctx;
  const identifications = ctx.store.collection<StoredIdentification>(EXTRAS_IDENTIFICATIONS);
  const merchantData = ctx.store.collection<StoredMerchantData>(EXTRAS_MERCHANT_DATA);
  const pushes = new ChildRecords(ctx.store.collection<StoredPush>(EXTRAS_MERCHANT_DATA_PUSHES));
  const authenticate = extrasAuth(config, errors);

  // Retention: every push kept, oldest first, as phone number, position and size in a ring buffer
  // (three values a push, no object); and the phone numbers, least recently pushed first (a Map
  // iterates in insertion order; a push moves its number to the end).
  const queue = new Denque<string | number>();
  let keptBytes = 0;
  const numbers = new Map<string, true>();
  // The UTF-8 bytes of each kept push's text, counted once when it is stored: a read's answer gives
  // its length without reading its 1 MiB texts again (send.ts, TextParts).
  const textBytes = new WeakMap<StoredPush, number>();

  const forgetOldestPush = () => {
    const phoneNumber = queue.shift() as string;
    const position = queue.shift() as number;
    keptBytes -= queue.shift() as number;
    const record = merchantData.get(phoneNumber);
    if (record === undefined || record.first !== position) return;
    pushes.delete(phoneNumber, position);
    merchantData.set(phoneNumber, { userPhoneNumber: phoneNumber, count: record.count, first: record.first + 1 });
  };

  /** Forgets the phone numbers least recently pushed beyond the retention limit (after a push is stored). */
  const forgetBeyondLimit = () => {
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

  // The retention order, kept here only (store.ts `observe`): told of every push and identification
  // stored, its own, and those a shared sandbox reads at start. (A push forgotten leaves the queue
  // as it is shifted, by forgetOldestPush.)
  ctx.store.observe<StoredPush>(EXTRAS_MERCHANT_DATA_PUSHES, (key, value, previous) => {
    if (value === undefined || previous !== undefined) return;
    const at = key.lastIndexOf('#');
    const phoneNumber = key.slice(0, at);
    const bytes = Buffer.byteLength(value.dataJson, 'utf8');
    textBytes.set(value, bytes);
    numbers.delete(phoneNumber);
    numbers.set(phoneNumber, true);
    queue.push(phoneNumber);
    queue.push(Number(key.slice(at + 1)));
    queue.push(bytes);
    keptBytes += bytes;
  });
  ctx.store.observe<StoredIdentification>(EXTRAS_IDENTIFICATIONS, (phoneNumber, value) => {
    if (value === undefined) return;
    numbers.delete(phoneNumber);
    numbers.set(phoneNumber, true);
  });

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
      forgetBeyondLimit();
      return { status: 200, body: { message: 'ok' } };
    },
  });

  ctx.route<operations['pushMerchantData'], true>('pushMerchantData', {
    authenticate,
    // A large body is parsed off the event loop and its data kept as text there (json-offload.ts).
    freeJson: ['/data'],
    handle({ body, kept: measured }) {
      const phoneNumber = body.userPhoneNumber;
      const kept = keepMeasured(measured?.get('/data'), body.data, 'data', config.limits);
      if (!kept.ok) return errors.badRequest(`Request body is invalid: ${kept.problem}`, [{ field: '/data', issue: kept.issue }]);
      const previous = merchantData.get(phoneNumber);
      const count = previous?.count ?? 0;
      // One new record: the earlier pushes are not copied. (Written out, not spread: a spread copy
      // of a record gets a hidden class of its own.)
      pushes.set(phoneNumber, count, { dataJson: kept.kept.text, receivedAt: clock.now() });
      merchantData.set(phoneNumber, { userPhoneNumber: phoneNumber, count: count + 1, first: previous?.first ?? 0 });
      forgetBeyondLimit();
      while (queue.length > 3 * MAX_STORED_PUSHES || (keptBytes > config.limits.pushBytes && queue.length > 3)) forgetOldestPush();
      return { status: 200, body: { message: 'ok' } };
    },
  });

  // What the service knows about a phone number: for checking the pushes.
  // ?limit=1..1000 (default 100) and ?after=<merchantDataNextCursor> page through the data pushes.
  ctx.sandboxRoute('GET', '/sandbox/extras/users/{phoneNumber}', (request) => {
    const phoneNumber = request.params.phoneNumber ?? '';
    if (!ctx.access.allows(request, { extras: true })) return ctx.sandboxErrors.notFound(`No extras user ${phoneNumber} is known to you.`);
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
    // The page: up to `limit` pushes and `limits.pageBytes` bytes of their text (at least one),
    // written as JSON text around each push's kept text, as parts never joined (send.ts: a page of
    // 1 MiB texts, joined and measured again for each read asked at once, held every other request).
    const items: string[] = [];
    let listed = 0;
    let bytes = 0;
    // The answer's UTF-8 bytes, while every push's are known (NaN once one is not).
    let answerBytes = 0;
    let to = from;
    for (; to < count && listed < limit; to++) {
      const push = pushes.get(phoneNumber, to);
      if (push === undefined) continue;
      const after = `,"receivedAt":${JSON.stringify(clock.iso(push.receivedAt))}}`;
      const size = '{"data":'.length + push.dataJson.length + after.length;
      if (listed > 0 && bytes + size > config.limits.pageBytes) break;
      items.push(listed === 0 ? '{"data":' : ',{"data":', push.dataJson, after);
      // The text around a push is ASCII: a character a byte.
      answerBytes += (listed === 0 ? 8 : 9) + (textBytes.get(push) ?? Number.NaN) + after.length;
      listed++;
      bytes += size;
    }
    const testUser = findTestUser(phoneNumber);
    const rest = JSON.stringify({
      userPhoneNumber: phoneNumber,
      testUser: testUser === undefined ? null : { name: testUser.name, summary: testUser.summary },
      creditInfo: creditInfo(phoneNumber, clock.date()),
      identification: identifications.get(phoneNumber)?.identification ?? null,
      merchantDataCount: count - first,
      merchantDataNextCursor: to < count ? pushCursor(to) : null,
    });
    const head = `${rest.slice(0, -1)},"merchantData":[`;
    return {
      status: 200,
      body: new TextParts([head, ...items, ']}'], Number.isNaN(answerBytes) ? undefined : Buffer.byteLength(head) + answerBytes + 2),
      headers: { 'Content-Type': 'application/json; charset=utf-8' },
    };
  });
}

function pushCursor(position: number): string {
  return Buffer.from(`push:${position}`, 'utf8').toString('base64url');
}
