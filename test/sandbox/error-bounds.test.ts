/**
 * Error bodies stay within the contract's bounds (D24) whatever the client sent: an error text may
 * repeat a client's input (an unknown field's name, a header), so the sandbox cuts long texts and
 * replaces control characters. `t.request` checks every answer against the contract.
 */
import { describe, expect, it } from 'vitest';
import { boundedText, ERROR_FIELD_MAX, ERROR_TEXT_MAX } from '../../src/sandbox/errors.js';
import { sdkSignature } from '../../src/signature.js';
import { EXTRAS_AUTH, PRIVATE_KEY, useSandbox } from '../support/sandbox.js';

const t = useSandbox();

describe('error bodies within the contract bounds', () => {
  it('boundedText cuts at the bound and replaces control characters, keeping tabs and line breaks', () => {
    expect(boundedText('a\u0000b\tc\nd\re\u001b', 100)).toBe('a?b\tc\nd\re?');
    const long = boundedText('x'.repeat(5_000), 2_000);
    expect(long).toHaveLength(2_000);
    expect(long.endsWith('...')).toBe(true);
    expect(boundedText('short', 2_000)).toBe('short');
  });

  it('an unknown field with a 5,000-character name is answered 400 within the bounds (gateway format)', async () => {
    const name = `f${'x'.repeat(5_000)}`;
    const answer = await t.request('POST', '/service/database/merchant/user/feed/identification', {
      body: JSON.stringify({ userPhoneNumber: '+919000000001', identification: { panNumber: 'ABCDE1234F' }, [name]: 1 }),
      headers: { 'Content-Type': 'application/json', Authorization: EXTRAS_AUTH },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.errorCode).toBe('BAD_REQUEST');
    expect(answer.body.message.length).toBeLessThanOrEqual(ERROR_TEXT_MAX);
    for (const detail of answer.body.details ?? []) expect(detail.field.length).toBeLessThanOrEqual(ERROR_FIELD_MAX);
  });

  it('a body that is not JSON, with control characters, is answered without them (web and SDK format)', async () => {
    const body = `{"merchantTransactionId":"\u0001\u0002${'z'.repeat(3_000)}`;
    const answer = await t.request('POST', '/merchant/credit/checkTransactionStatus', {
      body,
      headers: { 'Content-Type': 'application/json', 'X-Partnerid': 'partner_test', 'X-Signature': sdkSignature(body, PRIVATE_KEY) },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toBe('BAD_REQUEST');
    expect(answer.body.detail.length).toBeLessThanOrEqual(ERROR_TEXT_MAX);
    expect(answer.body.detail).not.toMatch(/[\u0000-\u0008]/);
  });
});
