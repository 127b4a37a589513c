/**
 * Paths that the service's own public code calls but the interface description does not have:
 * a request to one of them gets the 404 every unknown path gets, with a message that says
 * where the path comes from and that it is outside the description, so that a reader of that code
 * learns why rather than guessing at a typo. One lookup in a fixed map per unrouted request.
 */

const UPI_SAMPLE =
  "is an endpoint of the service's UPI sample (bharatx-in/BharatX-Sample-UPI-Credit-Integration, NetworkManager.kt), " +
  'which the interface description does not have: this contract and its sandbox answer only the extras under /service/ ' +
  '(credit info, identification and merchant-data pushes). See docs/compatibility.md, "The UPI sample".';

/** `METHOD path` of each such endpoint, and what the 404 says about it. */
const OUTSIDE: ReadonlyMap<string, string> = new Map([
  ['GET /service/payments/merchant/user/registration/status', UPI_SAMPLE],
  ['POST /service/payments/merchant/user/registration/otp/request', UPI_SAMPLE],
  ['POST /service/payments/merchant/user/registration/otp/verify', UPI_SAMPLE],
  ['POST /service/payments/merchant/transactions/instant', UPI_SAMPLE],
  ['GET /service/payments/merchant/transactions/status', UPI_SAMPLE],
]);

/** The 404's message for a path of the service's code outside the description, else undefined. */
export function outsideDescription(method: string, pathname: string): string | undefined {
  const why = OUTSIDE.get(`${method === 'HEAD' ? 'GET' : method} ${pathname}`);
  return why === undefined ? undefined : `${method} ${pathname} ${why}`;
}
