/**
 * The parsed `Authorization: Basic` values kept per distinct header (auth.ts): the same header gives
 * the same credentials without a second parse, the cache holds at most 1,024 values, and the
 * digests kept for the constant-time compare are never shown. The same for the digest of a presented
 * value (a partner id header).
 */
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseBasicAuthorization } from '../../src/sandbox/auth.js';
import { credentialsEqual, partEquals, presentedDigest, secretDigest } from '../../src/sandbox/config.js';

const header = (username: string, password: string): string => `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;

describe('parseBasicAuthorization', () => {
  it('parses a header once: the same value gives the same credentials, another value its own', () => {
    const first = parseBasicAuthorization(header('pg_test', 'pg_test_secret'));
    expect(first).toMatchObject({ username: 'pg_test', password: 'pg_test_secret' });
    expect(parseBasicAuthorization(header('pg_test', 'pg_test_secret'))).toBe(first);
    const other = parseBasicAuthorization(header('pg_test', 'pg_test_secreT'));
    expect(other).toMatchObject({ username: 'pg_test', password: 'pg_test_secreT' });
    expect(other).not.toBe(first);
  });

  it('compares kept credentials as before: both parts, right and wrong', () => {
    const expected = { username: 'pg_test', password: 'pg_test_secret' };
    for (let round = 0; round < 2; round++) {
      expect(credentialsEqual(parseBasicAuthorization(header('pg_test', 'pg_test_secret'))!, expected)).toBe(true);
      expect(credentialsEqual(parseBasicAuthorization(header('pg_test', 'pg_test_secre'))!, expected)).toBe(false);
      expect(credentialsEqual(parseBasicAuthorization(header('pg_tes', 'pg_test_secret'))!, expected)).toBe(false);
      expect(partEquals(parseBasicAuthorization(header('a', 'b'))!, 'password', secretDigest('b'))).toBe(true);
      expect(partEquals({ username: 'a', password: 'c' }, 'password', secretDigest('b'))).toBe(false);
    }
  });

  it('keeps at most 1,024 values, dropping the least recently used', () => {
    const kept = parseBasicAuthorization(header('kept', 'secret'));
    const dropped = parseBasicAuthorization(header('dropped', 'secret'));
    for (let index = 0; index < 1_023; index++) {
      parseBasicAuthorization(header(`user${index}`, 'secret'));
      // Used again all along: the most recently used, never dropped.
      if (index % 100 === 0) expect(parseBasicAuthorization(header('kept', 'secret'))).toBe(kept);
    }
    expect(parseBasicAuthorization(header('kept', 'secret'))).toBe(kept);
    const again = parseBasicAuthorization(header('dropped', 'secret'));
    expect(again).toMatchObject({ username: 'dropped', password: 'secret' });
    expect(again).not.toBe(dropped);
  });

  it('finds a value sent again at once as it is, and keeps the order of use exact', () => {
    const repeated = parseBasicAuthorization(header('again', 'secret'));
    for (let round = 0; round < 3; round++) expect(parseBasicAuthorization(header('again', 'secret'))).toBe(repeated);
    // 1,023 newer values: it is the oldest of the 1,024 kept, still kept.
    const later = Array.from({ length: 1_023 }, (_, index) => parseBasicAuthorization(header(`later${index}`, 'secret')));
    expect(parseBasicAuthorization(header('again', 'secret'))).toBe(repeated);
    // Used again just now, so the oldest is later0: one more value drops it, not this one.
    parseBasicAuthorization(header('newest', 'secret'));
    expect(parseBasicAuthorization(header('again', 'secret'))).toBe(repeated);
    expect(parseBasicAuthorization(header('later1', 'secret'))).toBe(later[1]);
    expect(parseBasicAuthorization(header('later0', 'secret'))).not.toBe(later[0]);
  });

  it('keeps nothing for a malformed value, and answers it undefined every time', () => {
    for (let round = 0; round < 2; round++) {
      expect(parseBasicAuthorization('Basic !!!')).toBeUndefined();
      expect(parseBasicAuthorization(`Basic ${Buffer.from('no colon').toString('base64')}`)).toBeUndefined();
      expect(parseBasicAuthorization('Bearer abc')).toBeUndefined();
      expect(parseBasicAuthorization(undefined)).toBeUndefined();
    }
  });

  it('never shows the kept digests: not in JSON, not when inspected, not as a property', () => {
    const credentials = parseBasicAuthorization(header('shown', 'hidden-secret'))!;
    expect(credentialsEqual(credentials, { username: 'shown', password: 'hidden-secret' })).toBe(true);
    const digestHex = secretDigest('hidden-secret').toString('hex');
    expect(JSON.parse(JSON.stringify(credentials))).toEqual({ username: 'shown', password: 'hidden-secret' });
    expect(Object.keys(credentials).sort()).toEqual(['password', 'username']);
    expect(inspect(credentials, { showHidden: true, depth: 5 })).not.toContain(digestHex.slice(0, 16));
    expect(inspect(credentials, { showHidden: true, depth: 5 })).not.toMatch(/Buffer|<Buffer/);
  });
});

describe('presentedDigest', () => {
  it('is the secret digest of the value, made once per distinct value among the latest 1,024', () => {
    const first = presentedDigest('partner_test');
    expect(first.equals(secretDigest('partner_test'))).toBe(true);
    expect(presentedDigest('partner_test')).toBe(first);
    expect(presentedDigest('partner_tesT').equals(secretDigest('partner_tesT'))).toBe(true);
    for (let index = 0; index < 1_024; index++) presentedDigest(`other_${index}`);
    const again = presentedDigest('partner_test');
    expect(again).not.toBe(first);
    expect(again.equals(first)).toBe(true);
    // Kept again now, and still while others come as long as it is used.
    for (let index = 0; index < 2_000; index++) {
      presentedDigest(`more_${index}`);
      if (index % 500 === 0) expect(presentedDigest('partner_test')).toBe(again);
    }
  });
});
