/**
 * The fuzzer of fuzz.test.ts (its header says what is mutated and how to reproduce a case) at
 * volume, in the slow group: 10,000 more mutated requests from another seed than `npm test`'s
 * 3,000, against a fresh sandbox of every family.
 */
import { describe, it } from 'vitest';
import { expectFuzzClean, fuzzSandbox, VOLUME_RUN } from '../support/fuzz.js';

const fuzz = fuzzSandbox();

describe('fuzzing every family at volume', () => {
  it(`answers ${VOLUME_RUN.count} mutated requests with documented statuses and bodies, never 5xx (seed ${VOLUME_RUN.seed})`, async () => {
    await expectFuzzClean(fuzz.t, fuzz.state, fuzz.specs, VOLUME_RUN);
  }, 480_000);
});
