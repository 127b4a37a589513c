/**
 * Complete flows of the integrations in integrations.ts, as data: the calls each integration makes
 * in order, what the shopper, the payment gateway and the service do in between, and what each
 * step must lead to. Values flow from step to step (the transaction id the plugin made, the
 * redirectUrl it got, the txnId the return URL carried, the credentials the gateway issued).
 *
 * The same flows run against the sandbox (every step) and against the Prism mock (the calls only:
 * the mock keeps no state, so the steps that need state are left out and the answers are judged on
 * their status and on the presence and type of the fields the integration reads).
 */
import type { Flow } from './model.js';

/** The line of the WooCommerce examples: one item at ₹19.99. */
const LINE = { subtotal: 19.99, quantity: 1 };

/** PHP's round($value, 2) for the values here (a float; PHP pre-rounds, which changes none of them). */
const phpRound2 = (value: number): number => Math.round(value * 100) / 100;

/**
 * The WooCommerce order of the examples, its numbers computed as PHP computes them (double
 * arithmetic, `(int)` truncating): `amount` = floor(19.99 * 100) = 1998 paise, and the item's
 * `rate_per_item` = (int)(round(line_subtotal / qty, 2) * 100) = (int)(1998.9999999999998) = 1998
 * (bharatx-in/BharatX-WooCommerce-Plugin at 73462dc4,
 * bharatx-pay-in-3-plugin/admin/class-bharatx-pay-in-3-feature-plugin-gateway.php, get_redirect_url).
 */
export const WC_ORDER = (site: string, uuid: () => string) => ({
  site,
  orderId: 4711,
  orderKey: 'wc_order_Xq3vN8pLm2TzK',
  transactionId: uuid(),
  amount: Math.floor(LINE.subtotal * 100),
  ratePerItem: Math.trunc(phpRound2(LINE.subtotal / LINE.quantity) * 100),
  cartRupees: 19, // intval() of the cart total, compared with the configured limit
  color: '', // the "Primary Color" setting left empty
  phoneNumber: '+919000000001', // the billing phone "90000 00001": whitespace removed, "+91" prefixed
});

export const FLOWS: readonly Flow[] = [
  {
    id: 'woocommerce-1.6-web',
    integration: 'woocommerce-1.6',
    title: 'WooCommerce 1.6.x, a version 1 (web-only) partner: configuration falls back to version 1, checkout, return, status, webhook, two refunds',
    // As a real shop is set up: no partner-level webhook URL; the plugin's notes.webhook_url (D73).
    shop: 'wc16.webhook',
    given: ({ site, uuid }) => ({ ...WC_ORDER(site, uuid), partnerId: 'partner_test', privateKey: 'test_private_key' }),
    steps: [
      // A web-only partner's id and key are no Transactional credentials: 401 (G1), read as "version 1".
      { call: 'wc16.configuration', expect: { outcome: 'version 1', decided: { decision: 'G1', status: 401 } } },
      { call: 'wc16.web.create' },
      { service: { action: 'user-pays-web', page: '{{redirectUrl}}' } },
      { returnTo: 'wc16.return' },
      { call: 'wc16.configuration', expect: { outcome: 'version 1' } },
      { call: 'wc16.web.status', expect: { outcome: 'paid' } },
      { webhook: 'wc16.webhook', where: { field: 'txnId', equals: '{{transactionId}}' }, deliveredOnce: { decision: 'W8' } },
      { call: 'wc16.configuration', expect: { outcome: 'version 1' } },
      { call: 'wc16.web.refund', with: { refundAmount: 500 } },
      { call: 'wc16.configuration', expect: { outcome: 'version 1' } },
      { call: 'wc16.web.refund', with: { refundAmount: 1498 } },
    ],
  },
  {
    id: 'woocommerce-1.6-web-typed-phone',
    integration: 'woocommerce-1.6',
    title: 'WooCommerce 1.6.x, a shopper who typed "+91-9000000001": sent as typed, accepted and read as +919000000001 (D121)',
    shop: 'wc16.webhook',
    given: ({ site, uuid }) => ({ ...WC_ORDER(site, uuid), phoneNumber: '+91-9000000001', partnerId: 'partner_test', privateKey: 'test_private_key' }),
    steps: [
      { call: 'wc16.configuration', expect: { outcome: 'version 1' } },
      { call: 'wc16.web.create', expect: { decided: { decision: 'D121', status: 200 } } },
      { service: { action: 'user-pays-web', page: '{{redirectUrl}}' } },
      { returnTo: 'wc16.return' },
      { call: 'wc16.configuration', expect: { outcome: 'version 1' } },
      { call: 'wc16.web.status', expect: { outcome: 'paid' } },
    ],
  },
  {
    id: 'woocommerce-1.5-web',
    integration: 'woocommerce-1.5',
    shop: 'wc15.webhook',
    title: 'WooCommerce 1.4.2-1.5.x: checkout, return with txnId/txnStatus, status and its signature without separator, full refund',
    given: ({ site, uuid }) => ({ ...WC_ORDER(site, uuid), partnerId: 'partner_test', privateKey: 'test_private_key' }),
    steps: [
      { call: 'wc15.create' },
      { service: { action: 'user-pays-web', page: '{{redirectUrl}}' } },
      { returnTo: 'wc15.return', expect: { outcome: 'proceeds' } },
      { call: 'wc15.status', expect: { outcome: 'paid' } },
      // The plugin's notes.webhook_url, called with txnId and txnStatus in its query (D73).
      { webhook: 'wc15.webhook', where: { field: 'txnId', equals: '{{transactionId}}' }, expect: { outcome: 'checks the status' }, deliveredOnce: { decision: 'W8' } },
      { call: 'wc15.refund' },
      {
        call: 'wc15.refund',
        expect: {
          refused: 'the transaction was refunded in full already',
          decided: { decision: 'W4', status: 400, fields: { message: 'ALREADY_REFUNDED' } },
        },
      },
    ],
  },
  {
    id: 'woocommerce-1.5-web-cancelled',
    integration: 'woocommerce-1.5',
    shop: 'wc15.webhook',
    title: 'WooCommerce 1.4.2-1.5.x: the shopper cancels; the return URL says so',
    given: ({ site, uuid }) => ({ ...WC_ORDER(site, uuid), partnerId: 'partner_test', privateKey: 'test_private_key' }),
    steps: [
      { call: 'wc15.create' },
      { service: { action: 'user-cancels-web', page: '{{redirectUrl}}' } },
      { returnTo: 'wc15.return', expect: { outcome: 'cancelled' } },
      { webhook: 'wc15.webhook', where: { field: 'txnId', equals: '{{transactionId}}' }, expect: { outcome: 'fails the order' } },
    ],
  },
  {
    id: 'node-sample-web',
    integration: 'node-sample',
    title: 'Node.js sample: create a transaction',
    given: ({ site }) => ({ site, partnerId: 'partner_test', privateKey: 'test_private_key' }),
    steps: [{ call: 'node.create' }],
  },
  {
    id: 'php-sample-empty-email',
    integration: 'php-sample',
    title: 'PHP sample: the form sent as typed, an empty email and a phone typed with a space, accepted (D122, D121); the shopper pays',
    given: ({ site }) => ({
      site,
      partnerId: 'testPartnerId',
      privateKey: 'testPrivateKey',
      transactionId: '6565f1a2b3c4d',
      amount: 49_900,
      email: '',
      phoneNumber: '+9190000 00001',
    }),
    steps: [
      { call: 'php.create', expect: { decided: { decision: 'D122', status: 200, fields: { message: 'TRANSACTION_INITIATED' } } } },
      { service: { action: 'user-pays-web', page: '{{site}}/checkout/{{transactionId}}' } },
    ],
  },
  {
    id: 'upi-sample-outside',
    integration: 'upi-sample',
    title: "UPI sample: its own endpoints, outside the description, answer 404 NOT_FOUND saying so (D124)",
    sandboxOnly: 'the mock serves the web and gateway documents; these paths are in none of the four',
    given: ({ site }) => ({ site, partnerId: 'partner_test', privateKey: 'test_private_key' }),
    steps: [
      {
        call: 'upi.registrationStatus',
        expect: { refused: 'the path is outside the description', decided: { decision: 'D124', status: 404, fields: { errorCode: 'NOT_FOUND' } } },
      },
      {
        call: 'upi.instant',
        expect: { refused: 'the path is outside the description', decided: { decision: 'D124', status: 404, fields: { errorCode: 'NOT_FOUND' } } },
      },
    ],
  },
  {
    id: 'webview-sample-web',
    integration: 'webview-sample',
    title: 'Android WebView sample: the app signs and sends the initiate with the published test credentials, then opens redirectUrl',
    given: ({ site }) => ({ site, partnerId: 'testPartnerId', privateKey: 'testPrivateKey', transactionId: '7', amount: 49_900 }),
    steps: [
      { call: 'webview.create' },
      { service: { action: 'user-pays-web', page: '{{redirectUrl}}' } },
    ],
  },
  {
    id: 'woocommerce-1.6-gateway',
    integration: 'woocommerce-1.6',
    title: 'WooCommerce 1.6.x, a version 2 (gateway) merchant: limit, version 2, create, OTP and down payment, return, status, webhook, refunds',
    shop: 'wc16.webhook',
    // On the mock the merchant's credentials are the service's published test values.
    given: ({ site, uuid }) => ({ ...WC_ORDER(site, uuid), partnerId: 'testPartnerId', privateKey: 'testPrivateKey' }),
    steps: [
      { service: { action: 'onboard-merchant' } },
      { call: 'wc16.storefrontConfiguration', expect: { decided: { decision: 'G1', status: 200 } } },
      { call: 'wc16.configuration', expect: { outcome: 'version 2', decided: { decision: 'G1', status: 200, fields: { version: 2 } } } },
      { call: 'wc16.gateway.create' },
      { service: { action: 'user-pays-gateway', transactionId: '{{transactionId}}', page: '{{transactionUrl}}' } },
      { returnTo: 'wc16.return' },
      { call: 'wc16.configuration', expect: { outcome: 'version 2' } },
      { call: 'wc16.gateway.status', expect: { outcome: 'paid' } },
      { webhook: 'wc16.webhook', where: { field: 'transaction.id', equals: '{{transactionId}}' }, deliveredOnce: { decision: 'W8' } },
      { call: 'wc16.configuration', expect: { outcome: 'version 2' } },
      { call: 'wc16.gateway.refund', with: { refundAmount: 500 } },
      { call: 'wc16.configuration', expect: { outcome: 'version 2' } },
      { call: 'wc16.gateway.refund', with: { refundAmount: 1498 } },
    ],
  },
  {
    id: 'magento-2-gateway',
    integration: 'magento-2',
    title: 'Magento 2: create with expiry in seconds and mode, payment, webhook, return and status',
    shop: 'magento.notify',
    given: ({ site, nowSeconds }) => ({
      site,
      partnerId: 'testPartnerId',
      privateKey: 'testPrivateKey',
      orderIncrementId: '000000101',
      amount: 249_900,
      mode: 'TEST',
      expiryTimestamp: nowSeconds + 30 * 60,
    }),
    steps: [
      { service: { action: 'onboard-merchant' } },
      { call: 'magento.create' },
      { service: { action: 'user-pays-gateway', transactionId: '{{orderIncrementId}}', page: '{{transactionUrl}}' } },
      // The module answers 200 with an empty body: received (D23), once.
      {
        webhook: 'magento.notify',
        where: { field: 'transaction.id', equals: '000000101' },
        expect: { outcome: 'paid' },
        deliveredOnce: { decision: 'D23' },
      },
      { returnTo: 'magento.return' },
      { call: 'magento.status', expect: { outcome: 'paid' } },
    ],
  },
  {
    id: 'magento-2-defaults',
    integration: 'magento-2',
    title: "Magento 2 with its default credentials (testPartnerId / testPrivateKey), no onboarding: create, three wrong OTPs, FAILURE closes the order (D123, D120)",
    shop: 'magento.notify',
    given: ({ site, nowSeconds }) => ({
      site,
      // Payment/etc/config.xml: partner_id testPartnerId, api_key testPrivateKey.
      partnerId: 'testPartnerId',
      privateKey: 'testPrivateKey',
      orderIncrementId: '000000105',
      amount: 149_900,
      mode: 'TEST',
      expiryTimestamp: nowSeconds + 30 * 60,
    }),
    steps: [
      { call: 'magento.create', expect: { decided: { decision: 'D123', status: 200 } } },
      { service: { action: 'user-fails-gateway', transactionId: '{{orderIncrementId}}' } },
      // The module cancels the order on FAILURE (Notify.php, Response.php, the cron).
      { webhook: 'magento.notify', where: { field: 'transaction.id', equals: '000000105' }, expect: { outcome: 'cancelled' } },
      {
        call: 'magento.status',
        expect: {
          outcome: 'cancelled',
          decided: { decision: 'D120', status: 200, fields: { 'transaction.status': 'FAILURE', 'transaction.failureReason': 'OTP_ATTEMPTS_EXCEEDED' } },
        },
      },
    ],
  },
  {
    id: 'magento-2-cron-cancel',
    integration: 'magento-2',
    title: 'Magento 2: an abandoned order, cancelled by the cron as it runs (status first, PENDING and 30 minutes old), closed',
    shop: 'magento.notify',
    // Cron/UpdateOrdersToProcessing at 288fcd3: every 15 minutes (etc/crontab.xml), the orders
    // created in the last hour. The onboarding moves the virtual clock 5 s; the order is placed
    // then, and Request.php, 10 s later, sets the module's own expiry: its now + 30 minutes.
    given: ({ site, nowSeconds }) => ({
      site,
      partnerId: 'testPartnerId',
      privateKey: 'testPrivateKey',
      orderIncrementId: '000000102',
      amount: 119_900,
      mode: 'LIVE',
      expiryTimestamp: nowSeconds + 5 + 10 + 30 * 60,
    }),
    steps: [
      { service: { action: 'onboard-merchant' } },
      { call: 'magento.create' },
      { service: { action: 'time-passes', minutes: 15, why: 'the cron\'s run with the order 15 minutes old' } },
      { call: 'magento.status', expect: { outcome: 'pending' } },
      { service: { action: 'time-passes', minutes: 15, why: 'the cron\'s run with the order 30 minutes old, just before its expiry' } },
      // Status read first: PENDING and 30 minutes old, so the cron cancels the transaction (D37).
      { call: 'magento.status', expect: { outcome: 'pending' } },
      {
        call: 'magento.cancel',
        expect: {
          decided: {
            decision: 'G9',
            status: 200,
            fields: { 'transaction.id': '000000102', 'transaction.status': 'CANCELLED', 'transaction.failureReason': 'CANCELLED_BY_MERCHANT' },
          },
        },
      },
      { webhook: 'magento.notify', where: { field: 'transaction.id', equals: '000000102' }, expect: { outcome: 'cancelled' } },
      { service: { action: 'time-passes', minutes: 15, why: 'the cron\'s next run, the order 45 minutes old (still in its one-hour window)' } },
      { call: 'magento.status', expect: { outcome: 'cancelled' } },
    ],
  },
  {
    id: 'magento-2-expired',
    integration: 'magento-2',
    title: 'Magento 2: an abandoned order past the module\'s own 30-minute expiry, closed by the cron\'s status read',
    shop: 'magento.notify',
    given: ({ site, nowSeconds }) => ({
      site,
      partnerId: 'testPartnerId',
      privateKey: 'testPrivateKey',
      orderIncrementId: '000000103',
      amount: 59_900,
      mode: 'LIVE',
      expiryTimestamp: nowSeconds + 5 + 10 + 30 * 60,
    }),
    steps: [
      { service: { action: 'onboard-merchant' } },
      { call: 'magento.create' },
      { service: { action: 'time-passes', minutes: 12, why: 'the cron\'s run with the order 12 minutes old' } },
      { call: 'magento.status', expect: { outcome: 'pending' } },
      { service: { action: 'time-passes', minutes: 15, why: 'the order 27 minutes old' } },
      { call: 'magento.status', expect: { outcome: 'pending' } },
      // The usual case: the first run past 30 minutes comes after the expiry (CANCELLED, EXPIRED, D15).
      { service: { action: 'time-passes', minutes: 15, why: 'the order 42 minutes old, past its expiry' } },
      { call: 'magento.status', expect: { outcome: 'cancelled' } },
      { webhook: 'magento.notify', where: { field: 'transaction.id', equals: '000000103' }, expect: { outcome: 'cancelled' } },
    ],
  },
  {
    id: 'magento-2-shopper-cancels',
    integration: 'magento-2',
    title: 'Magento 2: the shopper cancels on the hosted page, comes back to the return URL, the order is cancelled',
    shop: 'magento.notify',
    given: ({ site, nowSeconds }) => ({
      site,
      partnerId: 'testPartnerId',
      privateKey: 'testPrivateKey',
      orderIncrementId: '000000104',
      amount: 249_900,
      mode: 'LIVE',
      expiryTimestamp: nowSeconds + 30 * 60,
    }),
    steps: [
      { service: { action: 'onboard-merchant' } },
      { call: 'magento.create' },
      // Request.php gives its return URL as cancelRedirectUrl too.
      { service: { action: 'user-cancels-gateway', page: '{{transactionUrl}}' } },
      { returnTo: 'magento.return' },
      // Response::execute reads the status of a pending order: CANCELLED cancels it and restores the cart.
      { call: 'magento.status', expect: { outcome: 'cancelled' } },
      { webhook: 'magento.notify', where: { field: 'transaction.id', equals: '000000104' }, expect: { outcome: 'cancelled' } },
    ],
  },
];
