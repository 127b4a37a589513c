import { describe, expect, it } from 'vitest';
import { isoTime } from '../../src/sandbox/iso-time.js';

describe('isoTime', () => {
  it('writes what toISOString writes, for values that share a slot of the table and for repeats', () => {
    const base = Date.UTC(2026, 10, 28, 6, 40, 4, 123);
    // 4096 apart: the same slot, so each replaces the one before.
    const values = [base, base + 4096, base + 2 * 4096, base, 0, -1, -4096, 1.5, 253_402_300_799_999, -62_198_755_200_000];
    for (let round = 0; round < 3; round++) {
      for (const value of values) expect(isoTime(value)).toBe(new Date(value).toISOString());
    }
  });

  it('keeps a value apart from another that differs only above the low bits or after the point', () => {
    expect(isoTime(1.25)).toBe('1970-01-01T00:00:00.001Z');
    expect(isoTime(1)).toBe('1970-01-01T00:00:00.001Z');
    expect(isoTime(2 ** 32 + 1)).toBe(new Date(2 ** 32 + 1).toISOString());
    expect(isoTime(1)).toBe('1970-01-01T00:00:00.001Z');
  });

  it('throws as toISOString does for a time that is not one, and keeps nothing for it', () => {
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
    expect(() => isoTime(8.64e15 + 1)).toThrow(RangeError);
    expect(() => isoTime(Number.POSITIVE_INFINITY)).toThrow(RangeError);
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
    expect(isoTime(0)).toBe('1970-01-01T00:00:00.000Z');
  });
});
