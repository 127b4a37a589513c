/**
 * The sandbox's documented test values (docs/sandbox.md), in one place: the credentials it starts
 * with, the test OTPs, the down-payment rule and the test users. The sandbox, the contract kit,
 * the examples and the tests import them from here rather than writing them again.
 */

/** The default credentials of every family. */
export const TEST_CREDENTIALS = Object.freeze({
  /** Gateway Merchant API (HTTP Basic). */
  merchantApi: Object.freeze({ username: 'pg_test', password: 'pg_test_secret' }),
  /** Extras (HTTP Basic). */
  extras: Object.freeze({ username: 'extras_test', password: 'extras_test_secret' }),
  /** Web and SDK flows: `X-Partner-Id` / `X-Partnerid` and the key of `X-Signature`. */
  partner: Object.freeze({ id: 'partner_test', privateKey: 'test_private_key' }),
});

/**
 * The service's published test credentials ("a published test partner id and a test private key
 * exist"), accepted by the web and SDK flows and, as the gateway's Basic pair, for the ready-made
 * gateway merchant (why: D123), written into its own samples: `bharatx-in/BharatX-Sample-Web-SDK-Integration-PHP`
 * (`start-transaction.php`, `popup.html`, `redirect.html`) and
 * `bharatx-in/BharatX-Sample-Web-SDK-NodeJS-Integration` (`index.js`). The sandbox accepts them
 * beside its own partner, so that those samples run against it unchanged.
 */
export const PUBLISHED_TEST_PARTNER = Object.freeze({ id: 'testPartnerId', privateKey: 'testPrivateKey' });

/** The test OTPs of the gateway and of the web flow's hosted page: the same for both. */
export const TEST_OTP = Object.freeze({
  /** The OTP every user "receives". */
  correct: '123456',
  /** An OTP that always answers as expired. */
  expired: '000000',
  length: 6,
  /** The third wrong OTP fails the transaction. */
  maxWrong: 3,
} as const);

/** The down payment: this share of the amount (per cent), at least `min` paise (₹1), at most the amount. */
export const DOWN_PAYMENT = Object.freeze({ percent: 25, min: 100 } as const);

/** The down payment of an amount (paise): 25 %, rounded half up, at least 100 paise, at most the amount. */
export function downPaymentFor(amount: number): number {
  const share = Math.floor((amount * DOWN_PAYMENT.percent + 50) / 100);
  return Math.min(amount, Math.max(DOWN_PAYMENT.min, share));
}

export interface TestUser {
  phoneNumber: string;
  name: string;
  /** One line for the documentation. */
  summary: string;
  /** Paise; 0 means not approved (the credit info then holds defaults). */
  creditLimit: number;
  creditTaken: number;
  outstandingAmount: number;
  dueAmount: number;
  paymentLink: string;
  /** The day of the month payments fall due; `undefined` when nothing is due. */
  dueDayOfMonth: number | undefined;
  /** Pre-eligibility declines the user for risk (`RISK_DECLINED`). */
  riskDeclined: boolean;
  /** The user is blocked (`USER_BLOCKED`); the credit info shows no credit. */
  blocked: boolean;
  /** Whether an external down payment of this user gets confirmed (gateway flow). */
  downPaymentConfirmed: boolean;
}

const user = (fields: Partial<TestUser> & Pick<TestUser, 'phoneNumber' | 'name' | 'summary'>): TestUser =>
  Object.freeze({
    creditLimit: 0,
    creditTaken: 0,
    outstandingAmount: 0,
    dueAmount: 0,
    paymentLink: '',
    dueDayOfMonth: undefined,
    riskDeclined: false,
    blocked: false,
    downPaymentConfirmed: true,
    ...fields,
  });

export const TEST_USERS: readonly TestUser[] = Object.freeze([
  user({
    phoneNumber: '+919000000001',
    name: 'Asha Rao',
    summary: 'Registered and approved: limit ₹50,000, ₹12,500 taken, ₹4,000 due on the coming 5th of a month.',
    creditLimit: 5_000_000,
    creditTaken: 1_250_000,
    outstandingAmount: 1_250_000,
    dueAmount: 400_000,
    paymentLink: 'https://pay.paylater.example/u/9000000001',
    dueDayOfMonth: 5,
  }),
  user({
    phoneNumber: '+919000000002',
    name: 'Vikram Shah',
    summary: 'Registered with a limit of ₹20,000, but never eligible: pre-eligibility answers RISK_DECLINED.',
    creditLimit: 2_000_000,
    paymentLink: 'https://pay.paylater.example/u/9000000002',
    riskDeclined: true,
  }),
  user({
    phoneNumber: '+919000000003',
    name: 'Meera Iyer',
    summary: 'Registered and approved: limit ₹10,000, nothing taken (amounts above ₹10,000: CREDIT_LIMIT_EXCEEDED).',
    creditLimit: 1_000_000,
    paymentLink: 'https://pay.paylater.example/u/9000000003',
  }),
  user({
    phoneNumber: '+919000000004',
    name: 'Rohan Das',
    summary: 'Registered and approved (limit ₹50,000), but a down payment is never confirmed (gateway: PAYMENT_NOT_CONFIRMED).',
    creditLimit: 5_000_000,
    paymentLink: 'https://pay.paylater.example/u/9000000004',
    downPaymentConfirmed: false,
  }),
  user({
    phoneNumber: '+919000000005',
    name: 'Kiran Patel',
    summary: 'Registered but not approved: creditLimit 0, every other field a default.',
  }),
  user({
    phoneNumber: '+919000000009',
    name: 'Blocked User',
    summary: 'Registered but blocked: credit info shows creditLimit 0 and defaults; pre-eligibility answers USER_BLOCKED.',
    blocked: true,
  }),
]);

export function findTestUser(phoneNumber: string): TestUser | undefined {
  return TEST_USERS.find((candidate) => candidate.phoneNumber === phoneNumber);
}

/** The registered, approved test user whose down payments are confirmed (`+919000000001`). */
export const APPROVED_TEST_USER: TestUser = TEST_USERS[0]!;
