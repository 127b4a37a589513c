/**
 * `npm run mock` at its full size, in the slow group: with all four families, SIGTERM ends every
 * Prism process the CLI started, then the CLI itself. `npm test` checks the same with one family
 * (test/scripts/mock.test.ts); four Prism processes cost it several seconds of CPU.
 */
import { describe, it } from 'vitest';
import { FAMILIES } from '../../scripts/families.js';
import { expectCliStopsItsPrisms } from '../support/mock-processes.js';

describe('npm run mock (the CLI), every family', () => {
  it('leaves no Prism process behind after SIGTERM', async () => {
    await expectCliStopsItsPrisms(FAMILIES);
  }, 120_000);
});
