/**
 * The user of a web initiate or a gateway create as a shop sends it, read into the one form the
 * records keep: the phone number as +91 and ten digits, whatever separators the shopper
 * typed or whichever country-code prefix the shop added, and an empty email left out. The
 * contract's pattern has already checked the form, so only the digits are read here.
 */
import type { components } from '../../generated/types/web.js';

type User = components['schemas']['User'];

/** +91 and ten digits, from a number the contract's `GatewayPhoneNumber` accepted. */
export function tenDigitPhone(phoneNumber: string): string {
  const digits = phoneNumber.replace(/[^0-9]/g, '');
  // `9191` and ten digits: the country code added to a number stored with it.
  return `+91${digits.slice(digits.length - 10)}`;
}

/** The user as the records keep it. */
export function shopUser(user: User): User {
  const kept: User = { name: user.name, phoneNumber: tenDigitPhone(user.phoneNumber) };
  if (user.email !== undefined && user.email !== '') kept.email = user.email;
  return kept;
}
