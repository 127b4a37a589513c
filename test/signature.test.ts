import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  SIGNATURE_PATTERN,
  SignatureArgumentError,
  sdkSignature,
  statusSignature,
  verifySdkSignature,
  verifyStatusSignature,
  verifyWebSignature,
  webSignature,
  type SignatureBody,
} from '../src/signature.js';
import {
  bodyBytes,
  vectorNamed,
  vectors,
  type SdkVector,
  type StatusVector,
  type WebVector,
} from './support/signature-vectors.js';

const webVectors = vectors.filter((v): v is WebVector => v.kind === 'web');
const sdkVectors = vectors.filter((v): v is SdkVector => v.kind === 'sdk');
const statusVectors = vectors.filter((v): v is StatusVector => v.kind === 'status');

/** The same bytes as every accepted body type: Buffer, plain Uint8Array, offset view, ArrayBuffer. */
function bodyForms(bytes: Buffer): [string, SignatureBody][] {
  const plain = new Uint8Array(bytes);
  const backing = new Uint8Array(bytes.length + 16).fill(0x5a);
  backing.set(bytes, 7);
  const view = backing.subarray(7, 7 + bytes.length);
  const arrayBuffer = plain.slice().buffer;
  return [
    ['Buffer', bytes],
    ['Uint8Array', plain],
    ['Uint8Array view at an offset', view],
    ['ArrayBuffer', arrayBuffer],
  ];
}

describe('the test vectors', () => {
  it('cover every kind, status and edge case they are meant to', () => {
    expect(webVectors.length).toBeGreaterThan(0);
    expect(sdkVectors.length).toBeGreaterThan(0);
    expect(new Set(statusVectors.map((v) => v.status))).toEqual(
      new Set(['SUCCESS', 'FAILURE', 'CANCELLED', 'PENDING']),
    );

    const bodies = [...webVectors, ...sdkVectors].map((v) => v.body);
    const texts = bodies.flatMap((b) => ('utf8' in b ? [b.utf8] : []));
    expect(texts).toContain('');
    expect(texts.some((t) => /\p{Script=Devanagari}/u.test(t))).toBe(true);
    expect(texts.some((t) => /\p{Extended_Pictographic}/u.test(t))).toBe(true);
    expect(texts.some((t) => /\p{Script=Latin}\p{M}/u.test(t))).toBe(true);
    const notUtf8 = bodies.filter((b) => 'base64' in b).map(bodyBytes);
    expect(notUtf8.some((bytes) => !isUtf8(bytes))).toBe(true);
    for (const kind of [webVectors, sdkVectors]) {
      expect(kind.some((v) => bodyBytes(v.body).length === 1024 * 1024)).toBe(true);
    }

    const paths = webVectors.map((v) => v.pathAndQuery);
    expect(paths.some((p) => /%[0-9A-Fa-f]{2}/.test(p))).toBe(true);
    expect(paths.some((p) => p.includes('+'))).toBe(true);
    expect(paths.some((p) => /[?&](\w+)=[^&]*&(?:.*&)?\1=/.test(p))).toBe(true);
    expect(paths).toContain('/sandbox/api/transaction?x=1');
    expect(paths.some((p) => p.endsWith('?'))).toBe(true);
  });

  it('have signatures of the D28 form, all different', () => {
    for (const vector of vectors) {
      expect(vector.signature).toMatch(SIGNATURE_PATTERN);
    }
    expect(new Set(vectors.map((v) => v.signature)).size).toBe(vectors.length);
  });
});

describe('webSignature', () => {
  it.each(webVectors.map((v) => [v.name, v] as const))('matches %s', (_, vector) => {
    const bytes = bodyBytes(vector.body);
    for (const [form, body] of bodyForms(bytes)) {
      expect(webSignature(body, vector.pathAndQuery, vector.key), form).toBe(vector.signature);
      expect(verifyWebSignature(vector.signature, body, vector.pathAndQuery, vector.key)).toBe(true);
    }
    if ('utf8' in vector.body) {
      expect(webSignature(vector.body.utf8, vector.pathAndQuery, vector.key)).toBe(
        vector.signature,
      );
    }
  });
});

describe('sdkSignature', () => {
  it.each(sdkVectors.map((v) => [v.name, v] as const))('matches %s', (_, vector) => {
    const bytes = bodyBytes(vector.body);
    for (const [form, body] of bodyForms(bytes)) {
      expect(sdkSignature(body, vector.key), form).toBe(vector.signature);
      expect(verifySdkSignature(vector.signature, body, vector.key)).toBe(true);
    }
    if ('utf8' in vector.body) {
      expect(sdkSignature(vector.body.utf8, vector.key)).toBe(vector.signature);
    }
  });
});

describe('statusSignature', () => {
  it.each(statusVectors.map((v) => [v.name, v] as const))('matches %s', (_, vector) => {
    expect(statusSignature(vector.transactionId, vector.status, vector.key)).toBe(vector.signature);
    expect(
      verifyStatusSignature(vector.signature, vector.transactionId, vector.status, vector.key),
    ).toBe(true);
  });

  it('joins the id, the status and the key without a separator (D22, changed in 2.0.0)', () => {
    const key = 'k';
    expect(statusSignature('tx1', 'SUCCESS', key)).toBe(
      createHash('sha256').update('tx1SUCCESSk').digest('base64'),
    );
    // The 1.0.0 recipe put "|" between the id and the status; its signatures no longer verify.
    const withSeparator = createHash('sha256').update('tx1|SUCCESSk').digest('base64');
    expect(verifyStatusSignature(withSeparator, 'tx1', 'SUCCESS', key)).toBe(false);
  });
});

describe('verification', () => {
  const web = vectorNamed('web: percent-encoded space') as WebVector;
  const body = bodyBytes(web.body);
  const sdk = vectorNamed('sdk: ASCII JSON') as SdkVector;
  const sdkBody = bodyBytes(sdk.body);
  const status = vectorNamed('status: SUCCESS') as StatusVector;
  const digest = Buffer.from(web.signature, 'base64');

  /** Runs all three verifiers with `candidate`, none of which may throw or accept it. */
  function expectRejected(candidate: unknown): void {
    let results: boolean[] = [];
    expect(() => {
      results = [
        verifyWebSignature(candidate, body, web.pathAndQuery, web.key),
        verifySdkSignature(candidate, sdkBody, sdk.key),
        verifyStatusSignature(candidate, status.transactionId, status.status, status.key),
      ];
    }).not.toThrow();
    expect(results).toEqual([false, false, false]);
  }

  it('accepts the right signature', () => {
    expect(verifyWebSignature(web.signature, body, web.pathAndQuery, web.key)).toBe(true);
    expect(verifySdkSignature(sdk.signature, sdkBody, sdk.key)).toBe(true);
    expect(
      verifyStatusSignature(status.signature, status.transactionId, status.status, status.key),
    ).toBe(true);
  });

  it('rejects a tampered body', () => {
    const tampered = Buffer.from(body);
    tampered[10] = (tampered[10] ?? 0) ^ 0x01;
    expect(verifyWebSignature(web.signature, tampered, web.pathAndQuery, web.key)).toBe(false);
    expect(verifySdkSignature(sdk.signature, `${sdkBody.toString()} `, sdk.key)).toBe(false);
    expect(verifySdkSignature(sdk.signature, sdkBody.subarray(1), sdk.key)).toBe(false);
  });

  it('rejects a wrong key', () => {
    expect(verifyWebSignature(web.signature, body, web.pathAndQuery, `${web.key}x`)).toBe(false);
    expect(verifySdkSignature(sdk.signature, sdkBody, 'another-key')).toBe(false);
    expect(
      verifyStatusSignature(status.signature, status.transactionId, status.status, 'K'),
    ).toBe(false);
  });

  it('rejects a wrong path or query', () => {
    for (const path of [
      '/api/transaction?a=b c',
      '/api/transaction?a=b+c',
      '/api/transaction?a=b%20C',
      '/sandbox/api/transaction?a=b%20c',
      'https://pay.example/api/transaction?a=b%20c',
      '/api/transaction?a=b%20c&',
    ]) {
      expect(verifyWebSignature(web.signature, body, path, web.key), path).toBe(false);
    }
  });

  it('rejects a wrong id or status', () => {
    expect(verifyStatusSignature(status.signature, status.transactionId, 'FAILURE', status.key)).toBe(
      false,
    );
    expect(verifyStatusSignature(status.signature, 'txn_002', status.status, status.key)).toBe(false);
    expect(verifyStatusSignature(status.signature, status.transactionId, 'success', status.key)).toBe(
      false,
    );
  });

  it('rejects a signature of another kind', () => {
    expect(verifySdkSignature(web.signature, body, web.key)).toBe(false);
    expect(verifyWebSignature(sdk.signature, sdkBody, '/api/transaction', sdk.key)).toBe(false);
  });

  it('rejects truncated, padded and re-encoded forms without throwing', () => {
    const forms = {
      truncated: web.signature.slice(0, 43),
      'truncated by one character before the padding': `${web.signature.slice(0, 42)}=`,
      'without padding': web.signature.replace(/=$/, ''),
      'double padding': `${web.signature}=`,
      hex: digest.toString('hex'),
      'upper-case hex': digest.toString('hex').toUpperCase(),
      base64url: digest.toString('base64url'),
      'base64url with padding': `${digest.toString('base64url')}=`,
      'leading space': ` ${web.signature}`,
      'trailing space': `${web.signature} `,
      'trailing newline': `${web.signature}\n`,
      'inner space': `${web.signature.slice(0, 20)} ${web.signature.slice(20)}`,
      'two header values joined': `${web.signature}, ${web.signature}`,
      'sha256= prefix': `sha256=${web.signature}`,
      'lower-cased': web.signature.toLowerCase(),
      'empty string': '',
      'non-ASCII': `${web.signature.slice(0, 42)}é=`,
      'NUL byte': `${web.signature.slice(0, 43)}\u0000`,
      'very long string': 'A'.repeat(1_000_000),
    };
    for (const [name, candidate] of Object.entries(forms)) {
      expect(candidate === web.signature, name).toBe(false);
      expectRejected(candidate);
    }
  });

  it('rejects a signature whose unused padding bits are set', () => {
    // The 43rd character carries 2 bits beyond the digest; another character with the same
    // leading 4 bits decodes to the same bytes but is not the canonical encoding.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const last = alphabet.indexOf(web.signature[42] ?? '');
    const variant = `${web.signature.slice(0, 42)}${alphabet[last + 1]}=`;
    expect(Buffer.from(variant, 'base64').equals(digest)).toBe(true);
    expect(variant).toMatch(SIGNATURE_PATTERN);
    expect(verifyWebSignature(variant, body, web.pathAndQuery, web.key)).toBe(false);
  });

  it('rejects values that are not strings without throwing', () => {
    for (const candidate of [
      undefined,
      null,
      42,
      Number.NaN,
      true,
      {},
      [],
      [web.signature],
      [web.signature, web.signature],
      [sdk.signature],
      digest,
      Buffer.from(web.signature),
      new String(web.signature),
      { toString: () => web.signature },
      Symbol('signature'),
      () => web.signature,
    ]) {
      expectRejected(candidate);
    }
  });

  it('accepts what it signs and rejects any one changed character (property)', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 256 }),
        fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }),
        fc.nat({ max: 42 }),
        (bytes, key, position) => {
          const signature = sdkSignature(bytes, key);
          expect(signature).toMatch(SIGNATURE_PATTERN);
          expect(verifySdkSignature(signature, bytes, key)).toBe(true);
          const original = signature[position] ?? 'A';
          const changed = `${signature.slice(0, position)}${original === 'A' ? 'B' : 'A'}${signature.slice(position + 1)}`;
          expect(verifySdkSignature(changed, bytes, key)).toBe(false);
        },
      ),
    );
  });
});

describe('arguments', () => {
  const key = 'super-secret-private-key-Zq9';

  function thrown(action: () => unknown): unknown {
    try {
      action();
    } catch (error) {
      return error;
    }
    throw new Error('expected the call to throw');
  }

  function expectArgumentError(action: () => unknown, argument: string): void {
    const error = thrown(action);
    expect(error).toBeInstanceOf(TypeError);
    expect(error).toBeInstanceOf(SignatureArgumentError);
    const { message, stack } = error as SignatureArgumentError;
    expect((error as SignatureArgumentError).argument).toBe(argument);
    expect(message).toContain(argument);
    expect(message).not.toContain(key);
    expect(stack ?? '').not.toContain(key);
  }

  it('reject a key that is not a string, with a TypeError that never contains the key', () => {
    const keyLike: unknown[] = [
      undefined,
      null,
      42,
      Buffer.from(key),
      new TextEncoder().encode(key),
      [key],
      { toString: () => key },
      new String(key),
    ];
    for (const bad of keyLike) {
      const k = bad as string;
      expectArgumentError(() => webSignature('{}', '/api/transaction', k), 'privateKey');
      expectArgumentError(() => sdkSignature('{}', k), 'privateKey');
      expectArgumentError(() => statusSignature('txn_001', 'SUCCESS', k), 'privateKey');
      expectArgumentError(
        () => verifyWebSignature('x', '{}', '/api/transaction', k),
        'privateKey',
      );
      expectArgumentError(() => verifySdkSignature('x', '{}', k), 'privateKey');
      expectArgumentError(() => verifyStatusSignature('x', 'txn_001', 'SUCCESS', k), 'privateKey');
    }
  });

  it('reject an empty key', () => {
    expectArgumentError(() => sdkSignature('{}', ''), 'privateKey');
    expectArgumentError(() => verifySdkSignature('x', '{}', ''), 'privateKey');
  });

  it('reject a body, path, id or status of the wrong type, without the key in the message', () => {
    for (const bad of [undefined, null, 7, { amount: 100 }, [1, 2], new Uint16Array(2)]) {
      const b = bad as unknown as SignatureBody;
      expectArgumentError(() => sdkSignature(b, key), 'body');
      expectArgumentError(() => webSignature(b, '/api/transaction', key), 'body');
      expectArgumentError(() => verifySdkSignature('x', b, key), 'body');
    }
    expectArgumentError(() => webSignature('{}', undefined as unknown as string, key), 'pathAndQuery');
    expectArgumentError(
      () => verifyWebSignature('x', '{}', new URL('https://a.example/') as unknown as string, key),
      'pathAndQuery',
    );
    expectArgumentError(() => statusSignature(1 as unknown as string, 'SUCCESS', key), 'transactionId');
    expectArgumentError(() => statusSignature('txn_001', null as unknown as string, key), 'status');
  });

  it('hash strings as UTF-8 without normalisation', () => {
    expect(sdkSignature('é', key)).toBe(sdkSignature(Buffer.from([0xc3, 0xa9]), key));
    expect(sdkSignature('é', key)).not.toBe(sdkSignature('e\u0301', key));
    expect(statusSignature('txn', 'SUCCESS', 'ключ')).toBe(
      createHash('sha256').update(Buffer.from('txnSUCCESSключ', 'utf8')).digest('base64'),
    );
  });

  it('leave the body untouched', () => {
    const bytes = Buffer.from('{"amount":100}');
    const copy = Buffer.from(bytes);
    sdkSignature(bytes, key);
    webSignature(bytes, '/api/transaction', key);
    expect(bytes.equals(copy)).toBe(true);
  });
});

function isUtf8(bytes: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

describe('parts are hashed as separate UTF-8 strings', () => {
  // Each part is encoded on its own, so a lone surrogate at the end of one part and at the start
  // of the next stay two replaced characters: joined, they would form one character.
  const incremental = (...parts: (string | Uint8Array)[]) => {
    const h = createHash('sha256');
    for (const part of parts) h.update(part);
    return h.digest('base64');
  };

  it('keeps a high surrogate at the end of the body apart from a low surrogate starting the key', () => {
    const body = 'abc\uD83D';
    const key = '\uDE00key';
    expect(sdkSignature(body, key)).toBe(incremental(body, key));
    expect(sdkSignature(body, key)).not.toBe(incremental(`${body}${key}`));
    expect(webSignature(body, '/p\uD83D', key)).toBe(incremental(body, '/p\uD83D', key));
    expect(statusSignature('id\uD83D', '\uDE00', key)).toBe(incremental('id\uD83D', '\uDE00', key));
  });

  it('gives the same signature for a body as a string, as bytes, small or large', () => {
    for (const size of [0, 10, 16 * 1024, 16 * 1024 + 1, 100_000]) {
      const text = 'ü'.repeat(size);
      const bytes = new TextEncoder().encode(text);
      const expected = incremental(text, '/a?b=1', 'k');
      expect(webSignature(text, '/a?b=1', 'k')).toBe(expected);
      expect(webSignature(bytes, '/a?b=1', 'k')).toBe(expected);
      expect(webSignature(bytes.buffer, '/a?b=1', 'k')).toBe(expected);
      expect(verifyWebSignature(expected, bytes, '/a?b=1', 'k')).toBe(true);
    }
  });
});
