/** What the two signing clients (web and SDK flow) check about their credentials. */

export interface PartnerCredentials {
  /** The merchant's partner id. */
  partnerId: string;
  /** The private API key. It stays on the merchant's servers; it is never sent. */
  privateKey: string;
}

/**
 * Throws a TypeError naming what is wrong. An empty string is told apart from a missing value: it
 * usually comes from an environment variable that is set but empty (`PAYLATER_PRIVATE_KEY=`),
 * which `??` does not replace with a default.
 */
export function checkPartnerCredentials(credentials: PartnerCredentials, what: string): void {
  for (const [name, variable] of [
    ['partnerId', 'PAYLATER_PARTNER_ID'],
    ['privateKey', 'PAYLATER_PRIVATE_KEY'],
  ] as const) {
    const value = (credentials as Partial<PartnerCredentials> | undefined)?.[name];
    if (value === '') {
      throw new TypeError(
        `${what}: ${name} is an empty string; an environment variable set but empty (such as ${variable}=) is the usual cause: ` +
          `set it, unset it, or fall back with || rather than ?? (process.env.${variable} || ...)`,
      );
    }
    if (typeof value !== 'string') throw new TypeError(`${what}: ${name} must be a non-empty string`);
  }
}
