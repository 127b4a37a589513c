/** What the two signing clients (web and SDK flow) check about their credentials. */

export interface PartnerCredentials {
  /** The merchant's partner id. */
  partnerId: string;
  /** The private API key. It stays on the merchant's servers; it is never sent. */
  privateKey: string;
}

export function checkPartnerCredentials(credentials: PartnerCredentials, what: string): void {
  if (typeof credentials?.partnerId !== 'string' || credentials.partnerId === '') {
    throw new TypeError(`${what}: partnerId must be a non-empty string`);
  }
  if (typeof credentials.privateKey !== 'string' || credentials.privateKey === '') {
    throw new TypeError(`${what}: privateKey must be a non-empty string`);
  }
}
