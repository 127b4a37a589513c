/**
 * How amounts are worded for people: every amount of the contract is an integer number of paise
 * (₹1 = 100 paise), and an error about one says so, with its bounds in paise and in rupees.
 * The sandbox's validation (validation.ts), its business rules and the mock's error proxy
 * (scripts/mock-proxy.ts) use these words.
 *
 * Rupees are grouped the Indian way (₹1,00,000) by hand: `Intl.NumberFormat('en-IN')` gives the
 * same only on a Node built with full ICU, which a small-ICU build is not.
 */

/** The unit in one phrase, with an example. */
const AMOUNT_UNIT = 'amounts are integers in paise (₹1 = 100 paise: ₹1,500 is 150000)';

/** Below this many paise (₹100), an amount may have been meant in rupees. */
const RUPEE_LOOKING_BELOW = 10_000;

/** Whether a field (a JSON pointer, or a parameter name) holds an amount: its name ends in `amount`. */
export function isAmountField(field: string): boolean {
  const name = field.slice(field.lastIndexOf('/') + 1);
  return /amount$/i.test(name);
}

/** `₹1,500`, `₹15.50`, `₹1,00,000`: paise as rupees, Indian digit grouping. */
export function rupees(paise: number): string {
  if (!Number.isFinite(paise)) return `₹${String(paise)}`;
  const sign = paise < 0 ? '-' : '';
  const whole = Math.trunc(Math.abs(paise));
  const rupeePart = Math.floor(whole / 100);
  const paisePart = whole % 100;
  const digits = String(rupeePart);
  const last3 = digits.slice(-3);
  const rest = digits.slice(0, -3).replace(/\B(?=(\d{2})+$)/g, ',');
  const grouped = rest === '' ? last3 : `${rest},${last3}`;
  return `${sign}₹${grouped}${paisePart === 0 ? '' : `.${String(paisePart).padStart(2, '0')}`}`;
}

/** `150000 paise (₹1,500)`; the paise grouped by thousands: `10,000,000 paise (₹1,00,000)`. */
export function paiseAndRupees(paise: number): string {
  const grouped = Number.isSafeInteger(paise) ? paise.toLocaleString('en-US') : String(paise);
  return `${grouped} paise (${rupees(paise)})`;
}

/** What a validation keyword found wrong with an amount. */
export type AmountProblem =
  | { kind: 'notWhole' }
  | { kind: 'below'; limit: number; exclusive?: boolean }
  | { kind: 'above'; limit: number; exclusive?: boolean };

/** The issue for an amount field: `must be at least 100 paise (₹1); amounts are integers in paise ...`. */
export function amountIssue(problem: AmountProblem): string {
  switch (problem.kind) {
    case 'notWhole':
      return 'must be a whole number of paise, an integer (₹1 = 100 paise: ₹1,500 is 150000)';
    case 'below':
      return `must be ${problem.exclusive === true ? 'more than' : 'at least'} ${paiseAndRupees(problem.limit)}; ${AMOUNT_UNIT}`;
    case 'above':
      return `must be ${problem.exclusive === true ? 'less than' : 'at most'} ${paiseAndRupees(problem.limit)}; ${AMOUNT_UNIT}`;
  }
}

/**
 * The amount problem of a JSON Schema keyword (Ajv's, or Prism's `code`), its limit from Ajv's
 * params or from Prism's message (`must be >= 100`); undefined for a keyword that is not about the
 * number (`required`, ...).
 */
export function amountProblemOf(keyword: string, limit?: unknown, message = ''): AmountProblem | undefined {
  const fromMessage = /(?:>=|<=|>|<)\s*(-?\d+(?:\.\d+)?)/.exec(message)?.[1];
  const bound = typeof limit === 'number' ? limit : fromMessage === undefined ? undefined : Number(fromMessage);
  switch (keyword) {
    case 'type':
    case 'format':
    case 'multipleOf':
      return { kind: 'notWhole' };
    case 'minimum':
    case 'exclusiveMinimum':
      return bound === undefined ? undefined : { kind: 'below', limit: bound, exclusive: keyword === 'exclusiveMinimum' };
    case 'maximum':
    case 'exclusiveMaximum':
      return bound === undefined ? undefined : { kind: 'above', limit: bound, exclusive: keyword === 'exclusiveMaximum' };
    default:
      return undefined;
  }
}

/**
 * The log line for an accepted amount that may have been meant in rupees (under ₹100), or
 * undefined. The service accepts such amounts, so the sandbox does too; it only says so.
 */
export function rupeeLookingWarning(what: string, amount: number): string | undefined {
  if (!Number.isInteger(amount) || amount <= 0 || amount >= RUPEE_LOOKING_BELOW) return undefined;
  return (
    `${what}: amount ${amount} is ${paiseAndRupees(amount)}. Accepted, as the service does; if ${rupees(amount * 100)} was meant, ` +
    `send ${amount * 100} (${AMOUNT_UNIT}).`
  );
}
