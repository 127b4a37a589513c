/**
 * What the live service's own published integrations send and how they judge the answers, written
 * down as data (vocabulary in model.ts). Each entry cites its source: repository, commit, file and
 * function, and the section of the evidence fact sheet that records it. Nothing here is their
 * code: these are the facts of the requests and decisions it makes.
 *
 * Header lists hold the headers the integration's own code sets, in its case and order. What the
 * HTTP library adds by itself (User-Agent, Accept-Encoding, cURL's `Accept: *\/*`) is not
 * reproduced; Host and Content-Length are added by the transport (test/support/raw-http.ts).
 */
import type { CallSpec, Integration, IntegrationId, ReturnSpec, Source, WebhookSpec } from './model.js';

export const INTEGRATIONS: Record<IntegrationId, Integration> = {
  'woocommerce-1.6': {
    id: 'woocommerce-1.6',
    name: 'WooCommerce plugin 1.6.x',
    subject: 'the plugin',
    generation: 'version 1 (web) or version 2 (gateway), chosen per merchant by GET /api/merchant/configuration',
  },
  'woocommerce-1.5': {
    id: 'woocommerce-1.5',
    name: 'WooCommerce plugin 1.4.2-1.5.x',
    subject: 'the plugin',
    generation: 'version 1 (web) only',
  },
  'magento-2': {
    id: 'magento-2',
    name: 'Magento 2 module (BharatX_Payment)',
    subject: 'the module',
    generation: 'version 2 (gateway) only',
  },
  'webview-sample': {
    id: 'webview-sample',
    name: 'Android WebView sample',
    subject: 'the sample',
    generation: 'version 1 (web) only',
  },
  'node-sample': {
    id: 'node-sample',
    name: 'Node.js web SDK sample',
    subject: 'the sample',
    generation: 'version 1 (web) only',
  },
  'php-sample': {
    id: 'php-sample',
    name: 'PHP web SDK sample',
    subject: 'the sample',
    generation: 'version 1 (web) only',
  },
  'upi-sample': {
    id: 'upi-sample',
    name: 'Android UPI credit sample',
    subject: 'the sample',
    generation: 'calls outside the description on the extras host',
  },
};

// -------------------------------------------------------------------------------------------------
// Sources

const PAY_IN_3 = { repository: 'common-repository/bharatx-pay-in-3', commit: 'd65995ec9ab171b0e0e403ea956c09e7267e8f96' };
const WC16_CLIENT = { ...PAY_IN_3, path: 'includes/class-bharatx-pay-in-3-feature-plugin.php' };
const WC16_GATEWAY = { ...PAY_IN_3, path: 'admin/class-bharatx-pay-in-3-feature-plugin-gateway.php' };
const WC16_PUBLIC = { ...PAY_IN_3, path: 'public/class-bharatx-pay-in-3-feature-plugin-public.php' };
const WC15_GATEWAY = {
  repository: 'bharatx-in/BharatX-WooCommerce-Plugin',
  commit: 'cb617d3a222295e4f170ac1d8eb436d623e17f74',
  path: 'admin/class-bharatx-pay-in-3-feature-plugin-gateway.php',
};
/**
 * The Magento module at 288fcd3 (the last revision whose transaction id is the order's increment
 * id). The newest, 78d4c95, appends "_bx" to the id it creates and computes the cron's id as
 * `$increment_id + "_bx"` from an undefined variable: on PHP 8 a TypeError ("Unsupported operand
 * types: null + string") that its `catch (\Exception)` does not catch, so every cron run stops at
 * the first pending order (docs/compatibility.md).
 */
const MAGENTO = { repository: 'bharatx-in/BharatX-Magento2-Module', commit: '288fcd33553fe29f9be42cbd37d6f358a849524f' };
const NODE_SAMPLE = {
  repository: 'bharatx-in/BharatX-Sample-Web-SDK-NodeJS-Integration',
  commit: '868e8b54ab58e0d21eed610e38514c3c9530cc5d',
  path: 'index.js',
};

const WEBVIEW_SAMPLE = {
  repository: 'bharatx-in/BharatX-SDK-WebView-Implementation',
  commit: '58d017aa017988390fcd98fa4ca6d44a9be39db4',
  path: 'app/src/main/java/com/mhirrr/testapppaylater/MainActivity.kt',
};

const PHP_SAMPLE = {
  repository: 'bharatx-in/BharatX-Sample-Web-SDK-Integration-PHP',
  commit: '5720a2aa1f2b477db8bd409e7014ae204cc50752',
  path: 'start-transaction.php',
};
const UPI_SAMPLE = {
  repository: 'bharatx-in/BharatX-Sample-UPI-Credit-Integration',
  commit: 'a299bb2a226e1d9f988847a211dae917c4cc893c',
  path: 'app/src/main/java/com/example/bharatxupi/NetworkManager.kt',
};
const source = (file: Omit<Source, 'where' | 'facts'>, where: string, facts: string): Source => ({ ...file, where, facts });

// -------------------------------------------------------------------------------------------------
// Shared consequences

/** format_response decodes any 2xx-3xx body; the error branch then puts that object into a string. */
const WC16_OTHER_2XX =
  'it decodes the body of any 2xx-3xx answer, takes the error branch, and interpolates the decoded object into its log line: ' +
  'PHP throws an Error ("Object of class stdClass could not be converted to string") that its catch (Exception) does not catch, ' +
  'so the shop shows a critical error';

/** The WooCommerce shop's addresses (the shop is a local server in the tests: {{site}}). */
const WC_RETURN_URL = '{{site}}/?wc-api=Bharatx_Pay_In_3_Feature_Gateway&key={{orderKey}}';
const WC_WEBHOOK_URL = '{{site}}/?wc-api=Bharatx_Pay_In_3_Feature_Gateway_Webhook&key={{orderKey}}';
/** The plugin's logo override: its CDN address of the partner's logo. */
const WC_LOGO = 'https://d30flbpbaljuso.cloudfront.net/img/partner/logo/light/{{partnerId}}';

// -------------------------------------------------------------------------------------------------
// The order the WooCommerce examples send: one line, ₹19.99, delivered in Bengaluru.

/** One order item as get_redirect_url builds it (1.4 and later). */
const WC_ITEM = {
  sku: 'Cotton Kurta – Indigo', // the item's name (not its SKU), verbatim: non-ASCII goes out as \u escapes
  quantity: 1, // integer
  rate_per_item: '{{ratePerItem}}', // (int) (round(line_subtotal / qty, 2) * 100): 1998 for ₹19.99 (flows.ts)
  name: 'Cotton Kurta – Indigo',
  image:
    '<img width="300" height="300" src="{{site}}/wp-content/uploads/2024/05/kurta-indigo-300x300.jpg" ' +
    'class="attachment-woocommerce_thumbnail size-woocommerce_thumbnail" alt="" decoding="async" />', // get_image(): HTML
  url: '{{site}}/product/cotton-kurta-indigo/',
  dimensions: { length: '30', width: '20', height: '2' }, // WooCommerce keeps dimensions as strings
};

/**
 * `notes` of plugin 1.6.x (get_redirect_url): ten keys, nested objects, an array, an integer, and
 * `order` = WC_Order::get_data() (abridged here: its real size is several kilobytes).
 */
const WC16_NOTES = {
  woocommerceOrderId: '{{orderId}}-7f3a9c0e5b1d24a68e0c3f9b1d', // "<order id>-<26 hex>" (get_unique_order_id)
  shippingAddress: { line1: '12 MG Road', line2: 'Flat 4B', city: 'Bengaluru', pincode: '560001' },
  billingAddress: { line1: '12 MG Road', line2: 'Flat 4B', city: 'Bengaluru', pincode: '560001' },
  items: [WC_ITEM],
  orderKey: '{{orderKey}}',
  webhook_url: WC_WEBHOOK_URL,
  orderId: '{{orderId}}', // an integer
  thank_you_page: '{{site}}/checkout/order-received/{{orderId}}/?key={{orderKey}}',
  mwb_pcfw_order_remaining_price: '', // the partial-COD meta; "" when unset
  order: {
    id: '{{orderId}}',
    parent_id: 0,
    status: 'pending',
    currency: 'INR',
    version: '8.9.1',
    prices_include_tax: false,
    date_created: { date: '2026-03-02 10:15:00.000000', timezone_type: 3, timezone: 'Asia/Kolkata' },
    discount_total: '0',
    shipping_total: '0.00',
    total: '19.99',
    customer_id: 0,
    order_key: '{{orderKey}}',
    billing: {
      first_name: 'Asha',
      last_name: 'Rao',
      address_1: '12 MG Road',
      address_2: 'Flat 4B',
      city: 'Bengaluru',
      state: 'KA',
      postcode: '560001',
      country: 'IN',
      email: 'asha.rao@example.in',
      phone: '90000 00001',
    },
    payment_method: 'bharatx-pay-in-3-feature-plugin',
    meta_data: [],
    line_items: { '41': {} }, // item objects have only protected properties: json_encode writes {}
    shipping_lines: [],
    coupon_lines: [],
  },
};

/**
 * The shopper as the plugin sends it: "first last", and the billing phone with its whitespace
 * removed, "+91" prefixed only to 10 characters (and to 11 without the first, "+" to 12): "90000
 * 00001" becomes "+919000000001", a typed "+91-9000000001" (14 characters) is sent as typed (D121).
 */
const WC_USER = { name: 'Asha Rao', phoneNumber: '{{phoneNumber}}', email: 'asha.rao@example.in' };

// -------------------------------------------------------------------------------------------------
// WooCommerce plugin 1.6.x (common-repository/bharatx-pay-in-3, plugin 1.6.4)

const wc16Configuration: CallSpec = {
  integration: 'woocommerce-1.6',
  label: 'merchant configuration before each API call (GET /api/merchant/configuration)',
  source: source(WC16_CLIENT, 'Bharatx_Api_Client::get_merchant_configuration, get_version', '§1.1c'),
  request: {
    host: 'gateway',
    method: 'GET',
    path: '/api/merchant/configuration',
    headers: [
      ['content-type', 'application/json'],
      ['authorization', 'Basic {{basic}}'],
    ],
  },
  judge: {
    acceptance: {
      kind: '200-else-defaults',
      defaults: { version: 1 },
      onOther: 'any answer but 200 (and a network error) makes the plugin treat the merchant as version 1',
    },
    decodes: 'json-if-2xx-3xx',
    reads: [
      {
        field: 'version',
        type: 'present',
        into: 'version',
        ifMissing: 'PHP reads null, which is not == 1: the plugin uses the version 2 gateway API, whoever the merchant is',
      },
    ],
    outcome: {
      of: '{{version}}',
      cases: [
        { name: 'version 1', when: { phpLooseEquals: 1 }, does: 'uses the version 1 web API: web host, x-partner-id and x-signature' },
        { name: 'version 2', when: { otherwise: true }, does: 'uses the version 2 gateway API: web-v2 host and HTTP Basic' },
      ],
    },
  },
};

const wc16StorefrontConfiguration: CallSpec = {
  integration: 'woocommerce-1.6',
  label: 'storefront configuration on every page load (GET /api/merchant/configuration)',
  source: source(WC16_PUBLIC, 'Bharatx_Pay_In_3_Feature_Plugin_Public::init, remove_gateway_based_on_billing_total', '§1.3'),
  request: {
    host: 'gateway',
    method: 'GET',
    path: '/api/merchant/configuration',
    headers: [['authorization', 'Basic {{basic}}']],
  },
  judge: {
    acceptance: {
      kind: '200-else-defaults',
      defaults: { maxOrderAmount: 1_500_000 },
      onOther: 'logs "error applying bharatx partner configuration" and keeps its default limit of ₹15,000',
    },
    decodes: 'json',
    reads: [
      {
        field: 'maxOrderAmount',
        type: 'number',
        into: 'maxOrderAmount',
        ifMissing: 'it divides maxOrderAmount by 100 for its limit in rupees: without it the limit is 0 and the payment method is hidden for every cart',
      },
    ],
    checks: [
      {
        kind: 'below-limit',
        value: '{{cartRupees}}',
        limit: '{{maxOrderAmount}}',
        divisor: 100,
        ifNot: 'the cart total is not below maxOrderAmount / 100: the plugin hides its payment method at checkout',
      },
    ],
  },
};

const wc16WebCreate: CallSpec = {
  integration: 'woocommerce-1.6',
  label: 'create transaction, version 1 (POST /api/transaction)',
  source: source(WC16_CLIENT, 'Bharatx_Api_Client::create_transaction (version 1); gateway get_redirect_url', '§1.1f, §1.2'),
  request: {
    host: 'web',
    method: 'POST',
    path: '/api/transaction',
    headers: [
      ['content-type', 'application/json'],
      ['x-partner-id', '{{partnerId}}'],
      ['x-signature', '{{signature}}'],
    ],
    body: {
      encoding: 'php',
      value: {
        id: '{{transactionId}}', // wp_generate_uuid4(), a new one per attempt
        amount: '{{amount}}', // floor(total * 100): integer paise
        user: WC_USER,
        notes: WC16_NOTES,
        redirect: { url: WC_RETURN_URL, logoOverride: WC_LOGO, colorOverride: '{{color}}' }, // the "Primary Color" setting, "" when unset
      },
    },
    sign: { path: '/api/transaction', key: '{{privateKey}}' },
  },
  judge: {
    acceptance: {
      kind: 'exactly-200',
      onOther2xx: WC16_OTHER_2XX,
      onRefused: 'it notes "Unable to generate the transaction ID. Payment couldn\'t proceed." on the order and shows the shopper "Sorry, there was a problem with your payment."',
    },
    decodes: 'json-if-2xx-3xx',
    reads: [{ field: 'redirectUrl', type: 'http-url', into: 'redirectUrl', ifMissing: 'it sends the shopper to redirectUrl: without one the checkout goes nowhere' }],
  },
};

const wc16WebStatus: CallSpec = {
  integration: 'woocommerce-1.6',
  label: 'transaction status, version 1 (GET /api/transaction/status?id=)',
  source: source(WC16_CLIENT, 'Bharatx_Api_Client::get_transaction (version 1); gateway payment_callback', '§1.1g, §1.2'),
  request: {
    host: 'web',
    method: 'GET',
    path: '/api/transaction/status?id={{transactionId}}',
    headers: [['x-partner-id', '{{partnerId}}']], // no signature, no content-type
  },
  judge: {
    acceptance: {
      kind: 'exactly-200',
      onOther2xx: WC16_OTHER_2XX,
      onRefused: 'it shows "Some error occured while updating status" and sends the shopper back to checkout: the order stays unpaid',
    },
    decodes: 'json-if-2xx-3xx',
    reads: [{ field: 'status', type: 'string', into: 'status', ifMissing: 'the status is null, not "SUCCESS": the order stays unpaid' }],
    outcome: {
      of: '{{status}}',
      cases: [
        { name: 'paid', when: { equals: 'SUCCESS' }, does: 'completes the order (payment_complete) and sends the shopper to the thank-you page' },
        { name: 'not paid', when: { otherwise: true }, does: 'leaves the order unpaid and sends the shopper back to checkout' },
      ],
    },
  },
};

const wc16WebRefund: CallSpec = {
  integration: 'woocommerce-1.6',
  label: 'refund, version 1 (POST /api/refund)',
  source: source(WC16_CLIENT, 'Bharatx_Api_Client::refund_transaction (version 1); gateway process_refund', '§1.1h, §1.2'),
  request: {
    host: 'web',
    method: 'POST',
    path: '/api/refund',
    headers: [
      ['content-type', 'application/json'],
      ['x-partner-id', '{{partnerId}}'],
      ['x-signature', '{{signature}}'],
    ],
    body: { encoding: 'php', value: { transactionId: '{{transactionId}}', amount: '{{refundAmount|omit-if-zero}}' } },
    sign: { path: '/api/refund', key: '{{privateKey}}' },
  },
  judge: {
    acceptance: {
      kind: 'exactly-200',
      onOther2xx: WC16_OTHER_2XX,
      onRefused: 'process_refund returns false: WooCommerce reports the refund as failed and notes "refund request failed: <body>"',
    },
    decodes: 'json-if-2xx-3xx',
    reads: [],
  },
};

const wc16GatewayCreate: CallSpec = {
  integration: 'woocommerce-1.6',
  label: 'create transaction, version 2 (POST /api/merchant/transaction)',
  source: source(WC16_CLIENT, 'Bharatx_Api_Client::create_transaction (version 2); gateway get_redirect_url', '§1.1f, §1.2'),
  request: {
    host: 'gateway',
    method: 'POST',
    path: '/api/merchant/transaction',
    headers: [
      ['content-type', 'application/json'],
      ['authorization', 'Basic {{basic}}'],
    ],
    body: {
      encoding: 'php',
      value: {
        transaction: { id: '{{transactionId}}', amount: '{{amount}}', notes: WC16_NOTES },
        createConfiguration: {
          successRedirectUrl: WC_RETURN_URL,
          failureRedirectUrl: WC_RETURN_URL,
          cancelRedirectUrl: '{{site}}/checkout/', // wc_get_checkout_url()
          webhookUrl: WC_WEBHOOK_URL,
          logoOverride: WC_LOGO,
          colorOverride: '{{color}}',
        },
        user: WC_USER,
        // no deviceInformation, no preEligibilityCheckId, no expiryTimestamp
      },
    },
  },
  judge: {
    acceptance: {
      kind: 'exactly-200',
      onOther2xx: WC16_OTHER_2XX,
      onRefused: 'it notes "Unable to generate the transaction ID. Payment couldn\'t proceed." on the order and shows the shopper "Sorry, there was a problem with your payment."',
    },
    decodes: 'json-if-2xx-3xx',
    reads: [
      {
        field: 'transaction.url',
        type: 'http-url',
        into: 'transactionUrl',
        ifMissing: 'it sends the shopper to transaction.url: without it the shopper is redirected to an empty address',
      },
    ],
  },
};

const wc16GatewayStatus: CallSpec = {
  integration: 'woocommerce-1.6',
  label: 'transaction status, version 2 (GET /api/merchant/transaction/{id})',
  source: source(WC16_CLIENT, 'Bharatx_Api_Client::get_transaction (version 2); gateway payment_callback', '§1.1g, §1.2'),
  request: {
    host: 'gateway',
    method: 'GET',
    path: '/api/merchant/transaction/{{transactionId}}',
    headers: [['authorization', 'Basic {{basic}}']],
  },
  judge: {
    acceptance: {
      kind: 'exactly-200',
      onOther2xx: WC16_OTHER_2XX,
      onRefused: 'it shows "Some error occured while updating status" and sends the shopper back to checkout: the order stays unpaid',
    },
    decodes: 'json-if-2xx-3xx',
    reads: [
      { field: 'transaction.status', type: 'string', into: 'status', ifMissing: 'the status is null, not "SUCCESS": the order stays unpaid' },
      { field: 'transaction.amount', type: 'number', ifMissing: 'PHP warns "Attempt to read property" and the order note says 0 was collected' },
    ],
    outcome: {
      of: '{{status}}',
      cases: [
        { name: 'paid', when: { equals: 'SUCCESS' }, does: 'completes the order (payment_complete) and sends the shopper to the thank-you page' },
        { name: 'not paid', when: { otherwise: true }, does: 'leaves the order unpaid and sends the shopper back to checkout' },
      ],
    },
  },
};

const wc16GatewayRefund: CallSpec = {
  integration: 'woocommerce-1.6',
  label: 'refund, version 2 (POST /api/merchant/transaction/{id}/refund)',
  source: source(WC16_CLIENT, 'Bharatx_Api_Client::refund_transaction (version 2); gateway process_refund', '§1.1h, §1.2'),
  request: {
    host: 'gateway',
    method: 'POST',
    path: '/api/merchant/transaction/{{transactionId}}/refund',
    headers: [
      ['content-type', 'application/json'],
      ['authorization', 'Basic {{basic}}'],
    ],
    body: { encoding: 'php', value: { refund: { amount: '{{refundAmount}}' } } }, // no refund.id
  },
  judge: {
    acceptance: {
      kind: 'exactly-200',
      onOther2xx: WC16_OTHER_2XX,
      onRefused: 'process_refund returns false: WooCommerce reports the refund as failed and notes "refund request failed: <body>"',
    },
    decodes: 'json-if-2xx-3xx',
    reads: [],
  },
};

const wc16Return: ReturnSpec = {
  integration: 'woocommerce-1.6',
  label: 'the shopper back at the return URL (payment_callback)',
  source: source(WC16_GATEWAY, 'Bharatx_Pay_In_3_Feature_Gateway::payment_callback', '§1.2'),
  gave: WC_RETURN_URL,
  // Only `key` is read; the order's transaction id comes from the plugin's own table.
  params: [{ param: 'key', expected: '{{orderKey}}', ifMissing: 'the order is not found: the shopper is sent back to checkout' }],
};

const wc16Webhook: WebhookSpec = {
  integration: 'woocommerce-1.6',
  label: 'the service\'s call to notes.webhook_url at the shop (webhook_callback)',
  source: source(WC16_GATEWAY, 'Bharatx_Pay_In_3_Feature_Gateway::webhook_callback -> payment_callback', '§1.2'),
  // wp_redirect + exit: every call, the webhook included, is answered 302 (to the site, the
  // thank-you page or the checkout). Only `key` of the query is read ($_GET), then the status is
  // checked; the body and any signature are not read.
  answers: { status: 302, headers: { Location: '{{site}}/' }, body: '' },
  decodes: 'query',
  reads: [{ field: 'key', type: 'string', into: 'webhookOrderKey', ifMissing: 'the order is not found: the call changes nothing' }],
};

const wc15Webhook: WebhookSpec = {
  integration: 'woocommerce-1.5',
  label: 'the service\'s call to notes.webhook_url at the shop (webhook_callback, $_GET)',
  source: source(WC15_GATEWAY, 'Bharatx_Pay_In_3_Feature_Gateway::webhook_callback', '§2.5'),
  // Reads key, txnStatus and txnId from $_GET; on SUCCESS it checks the status and its signature,
  // otherwise it marks the order failed; wp_redirect at the end.
  answers: { status: 302, headers: { Location: '{{site}}/' }, body: '' },
  decodes: 'query',
  reads: [
    { field: 'key', type: 'string', into: 'webhookOrderKey', ifMissing: 'the order is not found' },
    { field: 'txnId', type: 'string', into: 'webhookTxnId', ifMissing: 'the order gets no transaction id' },
    { field: 'txnStatus', type: 'string', into: 'webhookTxnStatus', ifMissing: 'the order is marked failed ("Cancelled")' },
  ],
  outcome: {
    of: '{{webhookTxnStatus}}',
    cases: [
      { name: 'checks the status', when: { equals: 'SUCCESS' }, does: 'reads the status and completes the order when its signature verifies' },
      { name: 'fails the order', when: { otherwise: true }, does: 'marks the order failed' },
    ],
  },
};

// -------------------------------------------------------------------------------------------------
// WooCommerce plugin 1.4.2-1.5.x (bharatx-in/BharatX-WooCommerce-Plugin history)

const wc15Create: CallSpec = {
  integration: 'woocommerce-1.5',
  label: 'create transaction (POST /api/transaction)',
  source: source(WC15_GATEWAY, 'Bharatx_Pay_In_3_Feature_Gateway::get_redirect_url', '§2.3, §2.4'),
  request: {
    host: 'web',
    method: 'POST',
    path: '/api/transaction',
    // The code also sets `Expect: ''`, which tells cURL to send no Expect header: nothing is sent.
    headers: [
      ['Content-Type', 'application/json'],
      ['X-Partner-Id', '{{partnerId}}'],
      ['X-Signature', '{{signature}}'],
    ],
    body: {
      encoding: 'php',
      value: {
        id: '{{transactionId}}',
        amount: '{{amount}}', // (int)(calculate_totals() * 100)
        user: WC_USER,
        notes: {
          woocommerceOrderId: '{{orderId}}-3c5e7a9b1d2f4e6a8c0b1d3f5e',
          shippingAddress: '12 MG Road Flat 4B Bengaluru560001', // address_1 address_2 city.postcode, as one string
          billingAddress: '12 MG Road Flat 4B',
          items: [WC_ITEM],
          orderKey: '{{orderKey}}',
          webhook_url: WC_WEBHOOK_URL,
        },
        redirect: { url: WC_RETURN_URL, logoOverride: WC_LOGO, colorOverride: '{{color}}' },
      },
    },
    sign: { path: '/api/transaction', key: '{{privateKey}}' },
  },
  judge: {
    acceptance: {
      kind: 'exactly-200',
      onOther2xx: 'it notes "Unable to generate the transaction ID. Payment couldn\'t proceed." and shows the shopper an error',
      onRefused: 'it notes "Unable to generate the transaction ID. Payment couldn\'t proceed." and shows the shopper an error',
    },
    decodes: 'json',
    reads: [
      {
        field: 'redirectUrl',
        type: 'http-url',
        into: 'redirectUrl',
        ifMissing: 'its receipt page runs window.location.replace(redirectUrl): without one the shopper lands on "null"',
      },
    ],
  },
};

const wc15Return: ReturnSpec = {
  integration: 'woocommerce-1.5',
  label: 'the shopper back at the return URL (payment_callback)',
  source: source(WC15_GATEWAY, 'Bharatx_Pay_In_3_Feature_Gateway::payment_callback', '§2.4'),
  gave: WC_RETURN_URL,
  params: [
    { param: 'key', expected: '{{orderKey}}', ifMissing: 'the order is not found' },
    {
      param: 'txnStatus',
      into: 'txnStatus',
      ifMissing: 'without txnStatus=SUCCESS it marks the order failed ("Your payment via BharatX was Cancelled")',
    },
    {
      param: 'txnId',
      into: 'txnId',
      expected: '{{transactionId}}',
      ifMissing: 'the order gets no transaction id: the status check asks for another id and the signature check fails',
    },
  ],
  outcome: {
    of: '{{txnStatus}}',
    cases: [
      { name: 'proceeds', when: { equals: 'SUCCESS' }, does: 'stores txnId as the order\'s transaction id and checks the status' },
      { name: 'cancelled', when: { otherwise: true }, does: 'marks the order failed: "Your payment via BharatX was Cancelled"' },
    ],
  },
};

const wc15Status: CallSpec = {
  integration: 'woocommerce-1.5',
  label: 'transaction status and status signature (GET /api/transaction/status?id=)',
  source: source(WC15_GATEWAY, 'Bharatx_Pay_In_3_Feature_Gateway::payment_callback', '§2.4'),
  request: {
    host: 'web',
    method: 'GET',
    path: '/api/transaction/status?id={{txnId}}',
    headers: [
      ['Content-Type', 'application/json'], // on a GET without a body
      ['X-Partner-Id', '{{partnerId}}'], // no signature
    ],
  },
  judge: {
    acceptance: {
      kind: 'exactly-200',
      onOther2xx: 'it compares 200 === code: it marks the order failed ("Your payment via BharatX was unsuccessful")',
      onRefused: 'it marks the order failed ("Your payment via BharatX was unsuccessful")',
    },
    decodes: 'json',
    reads: [
      { field: 'status', type: 'string', into: 'status', ifMissing: 'the status is not "SUCCESS": it marks the order failed' },
      { field: 'signature', type: 'string', into: 'statusSignature', ifMissing: 'the signature check compares against null and fails' },
    ],
    checks: [
      {
        kind: 'status-signature',
        when: { value: '{{status}}', equals: 'SUCCESS' },
        over: ['{{txnId}}', '{{status}}'],
        key: '{{privateKey}}',
        signature: '{{statusSignature}}',
        ifMismatch: 'signature !== base64(sha256(txnId . status . key)): it marks the order failed ("unsuccessful due to authorization error")',
      },
    ],
    outcome: {
      of: '{{status}}',
      cases: [
        { name: 'paid', when: { equals: 'SUCCESS' }, does: 'completes the order (payment_complete) once the signature matches' },
        { name: 'not paid', when: { otherwise: true }, does: 'marks the order failed ("Your payment via BharatX was unsuccessful")' },
      ],
    },
  },
};

const wc15Refund: CallSpec = {
  integration: 'woocommerce-1.5',
  label: 'refund (POST /api/refund)',
  source: source(WC15_GATEWAY, 'Bharatx_Pay_In_3_Feature_Gateway::process_refund', '§2.3, §2.4'),
  request: {
    host: 'web',
    method: 'POST',
    path: '/api/refund',
    headers: [
      ['Content-Type', 'application/json'],
      ['X-Partner-Id', '{{partnerId}}'],
      ['X-Signature', '{{signature}}'],
    ],
    // Only the transaction id: the amount asked for in WooCommerce is never sent (a full refund).
    body: { encoding: 'php', value: { transactionId: '{{txnId}}' } },
    sign: { path: '/api/refund', key: '{{privateKey}}' },
  },
  judge: {
    acceptance: {
      kind: 'exactly-200',
      onOther2xx: 'it compares 200 == code: the refund is reported as failed',
      onRefused: 'process_refund returns false with the note "There was an error submitting the refund to BharatX." and the answer\'s message',
    },
    decodes: 'json',
    reads: [],
    refusalReads: [
      { field: 'message', type: 'string', ifMissing: 'PHP reads message of the decoded body: without it the note gives no reason' },
    ],
  },
};

// -------------------------------------------------------------------------------------------------
// Magento 2 module (bharatx-in/BharatX-Magento2-Module, Payment/)

const MAGENTO_RETURN = '{{site}}/Bharatxpayment/standard/response?cf_id={{orderIncrementId}}';

const magentoCreate: CallSpec = {
  integration: 'magento-2',
  label: 'create transaction (POST /api/merchant/transaction)',
  source: source({ ...MAGENTO, path: 'Payment/Controller/Standard/Request.php' }, 'Request::execute', '§4.1'),
  request: {
    host: 'gateway',
    method: 'POST',
    path: '/api/merchant/transaction',
    headers: [
      ['Authorization', 'Basic {{basic}}'], // CURLAUTH_BASIC with partner_id:api_key
      ['Content-Type', 'application/json'],
    ],
    body: {
      encoding: 'php',
      value: {
        transaction: {
          id: '{{orderIncrementId}}', // the Magento increment id, e.g. "000000101"
          amount: '{{amount}}', // (int) number_format(grand total * 100, 0)
          mode: '{{mode}}', // "LIVE" or "TEST" from the admin setting
          notes: { magento_order_id: '{{orderIncrementId}}' },
        },
        createConfiguration: {
          successRedirectUrl: MAGENTO_RETURN,
          failureRedirectUrl: MAGENTO_RETURN,
          cancelRedirectUrl: MAGENTO_RETURN,
          webhookUrl: '{{site}}/Bharatxpayment/standard/notify',
          expiryTimestamp: '{{expiryTimestamp}}', // DateTime::getTimestamp() of now + 30 minutes: Unix SECONDS
        },
        // The telephone stored as "+91 90000 00001": non-digits and leading zeros stripped, then
        // "+91" prefixed, so the country code comes twice (D25).
        user: { name: 'Asha Rao', phoneNumber: '+91919000000001', email: 'asha.rao@example.in' },
        // no deviceInformation
      },
    },
  },
  judge: {
    acceptance: { kind: 'not-checked', note: 'the module does not look at the status code' },
    decodes: 'json',
    reads: [
      {
        field: 'transaction.url',
        type: 'http-url',
        into: 'transactionUrl',
        ifMissing: 'isset(transaction->url) fails: it answers the shopper 500 "Unable to create your order. Please contact support."',
      },
    ],
  },
};

/** processOrderData and its callers (Response.php, the cron, Notify.php) act on these statuses. */
const MAGENTO_STATUS_CASES = [
  { name: 'paid', when: { equals: 'SUCCESS' }, does: 'invoices the order (processPayment)' },
  { name: 'cancelled', when: { oneOf: ['CANCELLED', 'FAILURE'] }, does: 'cancels the order and restores the cart' },
  {
    name: 'pending',
    when: { equals: 'PENDING' },
    does: 'restores the cart; its cron (every 15 minutes, orders of the last hour) cancels the transaction once the order is 30 minutes old',
  },
  {
    name: 'unrecognised',
    when: { otherwise: true },
    does: 'knows no such status (it knows PENDING, SUCCESS, FAILURE, CANCELLED): it logs it and leaves the order pending',
  },
] as const;

const magentoStatus: CallSpec = {
  integration: 'magento-2',
  label: 'transaction status (GET /api/merchant/transaction/{id})',
  source: source(
    { ...MAGENTO, path: 'Payment/Controller/CfAbstract.php' },
    'CfAbstract::checkRedirectOrderStatus, processOrderData (from Response::execute and Cron/UpdateOrdersToProcessing)',
    '§4.2',
  ),
  request: {
    host: 'gateway',
    method: 'GET',
    path: '/api/merchant/transaction/{{orderIncrementId}}',
    headers: [
      ['Authorization', 'Basic {{basic}}'],
      ['Accept', 'application/json'],
      ['Content-Type', 'application/json'],
    ],
  },
  judge: {
    acceptance: { kind: 'not-checked', note: 'the module does not look at the status code' },
    decodes: 'json',
    reads: [
      {
        field: 'transaction.status',
        type: 'string',
        into: 'status',
        ifMissing: 'processOrderData keeps the status "ERROR": the order is left pending and the cart restored',
      },
      { field: 'transaction.amount', type: 'number', ifMissing: 'PHP warns "Undefined property" and keeps null' },
      { field: 'transaction.id', type: 'string', ifMissing: 'PHP warns "Undefined property" and keeps null' },
      { field: 'transaction.url', type: 'string', ifMissing: 'PHP warns "Undefined property" and keeps null' },
    ],
    outcome: { of: '{{status}}', cases: MAGENTO_STATUS_CASES },
  },
};

const magentoCancel: CallSpec = {
  integration: 'magento-2',
  label: 'cancel a pending transaction (GET /api/merchant/transaction/{id}/cancel)',
  source: source(
    { ...MAGENTO, path: 'Payment/Controller/CfAbstract.php' },
    'CfAbstract::cancelOrder (from Cron/UpdateOrdersToProcessing::execute: status read first, PENDING and 30 minutes old)',
    '§4.3',
  ),
  request: {
    host: 'gateway',
    method: 'GET',
    path: '/api/merchant/transaction/{{orderIncrementId}}/cancel',
    headers: [
      ['Authorization', 'Basic {{basic}}'],
      ['Accept', 'application/json'],
      ['Content-Type', 'application/json'],
    ],
  },
  judge: {
    acceptance: { kind: 'not-checked', note: 'the answer is decoded and not looked at' },
    decodes: 'json',
    reads: [],
  },
};

const magentoReturn: ReturnSpec = {
  integration: 'magento-2',
  label: 'the shopper back at the return URL (Response::execute)',
  source: source({ ...MAGENTO, path: 'Payment/Controller/Standard/Response.php' }, 'Response::execute', '§4.2'),
  gave: MAGENTO_RETURN,
  params: [{ param: 'cf_id', expected: '{{orderIncrementId}}', ifMissing: 'it answers 400 "BharatX Payment details missing."' }],
};

const magentoNotify: WebhookSpec = {
  integration: 'magento-2',
  label: 'the service\'s webhook at the shop (Notify::execute)',
  source: source(
    { ...MAGENTO, path: 'Payment/Controller/Standard/Notify.php' },
    'Notify::execute, CfAbstract::validateWebhook, processOrderData',
    '§4.4',
  ),
  // The action returns nothing: Magento answers 200 with an empty body. No signature is checked.
  answers: { status: 200, body: '' },
  decodes: 'json',
  reads: [
    { field: 'transaction.id', type: 'string', ifMissing: 'it logs "Bharatx Notify transaction id not found" and does nothing' },
    { field: 'transaction.status', type: 'string', into: 'status', ifMissing: 'the status stays "ERROR": it only logs' },
    { field: 'transaction.amount', type: 'number', ifMissing: 'PHP warns "Undefined property" and keeps null' },
    { field: 'transaction.url', type: 'string', ifMissing: 'PHP warns "Undefined property" and keeps null' },
  ],
  outcome: {
    of: '{{status}}',
    cases: [
      { name: 'paid', when: { equals: 'SUCCESS' }, does: 'processes the payment of the pending order' },
      { name: 'cancelled', when: { oneOf: ['CANCELLED', 'FAILURE'] }, does: 'cancels the pending order' },
      { name: 'unrecognised', when: { otherwise: true }, does: 'only logs the status: the order stays pending' },
    ],
  },
};

// -------------------------------------------------------------------------------------------------
// Node.js sample (bharatx-in/BharatX-Sample-Web-SDK-NodeJS-Integration)

const nodeCreate: CallSpec = {
  integration: 'node-sample',
  label: 'create transaction (POST /api/transaction)',
  source: source(NODE_SAMPLE, 'example, generateSignature', '§3.1'),
  request: {
    host: 'web',
    method: 'POST',
    path: '/api/transaction',
    headers: [
      ['content-type', 'application/json'],
      ['x-partner-id', '{{partnerId}}'],
      ['x-signature', '{{signature}}'],
    ],
    body: {
      encoding: 'javascript', // JSON.stringify
      value: {
        id: 'new-transaction-000', // fixed in the sample
        amount: 100, // ₹1 in paise
        user: { name: 'Test User', phoneNumber: '+919000000001', email: 'user@example.in' }, // the sample's own values are personal ones
      },
    },
    sign: { path: '/api/transaction', key: '{{privateKey}}' },
  },
  judge: {
    acceptance: { kind: 'any-2xx', onRefused: 'it prints "API called failed with status=<status>:" and the body' },
    decodes: 'none',
    reads: [],
  },
};

// -------------------------------------------------------------------------------------------------
// Android WebView sample (bharatx-in/BharatX-SDK-WebView-Implementation): the app itself signs and
// sends the web initiate with the published test credentials, then loads redirectUrl in a WebView.

const webviewCreate: CallSpec = {
  integration: 'webview-sample',
  label: 'create transaction (POST /api/transaction), from the app',
  source: source(WEBVIEW_SAMPLE, 'MainActivity.sendRequest; RetrofitApi.initiateTransaction; InitialTransactionRequest', '§3.1'),
  request: {
    host: 'web',
    method: 'POST',
    path: '/api/transaction',
    headers: [
      // Retrofit's GsonConverterFactory sets the body's type; the HeaderMap adds the two headers.
      ['Content-Type', 'application/json; charset=UTF-8'],
      ['X-Signature', '{{signature}}'],
      ['X-Partner-Id', '{{partnerId}}'],
    ],
    body: {
      // Gson writes the fields in declaration order, without spaces; it escapes none of these characters.
      encoding: 'javascript',
      value: {
        amount: '{{amount}}', // parseInt of the amount field: paise
        id: '{{transactionId}}', // (0..10).random().toString() in the sample: an id from "0" to "10"
        user: { name: 'Asha Rao', email: 'asha.rao@example.in', phoneNumber: '+919000000001' }, // "+91" + the typed number
        redirect: { url: 'https://bharatx.tech' }, // the data class's default
      },
    },
    sign: { path: '/api/transaction', key: '{{privateKey}}' }, // SHA-256 of body + path + key, Base64.NO_WRAP
  },
  judge: {
    acceptance: { kind: 'any-2xx', onRefused: 'Retrofit throws HttpException: the sample logs the response and shows nothing' },
    decodes: 'json',
    reads: [
      {
        field: 'redirectUrl',
        type: 'http-url',
        into: 'redirectUrl',
        ifMissing: 'Gson leaves redirectUrl null and WebView.loadUrl(null) shows a blank page',
      },
    ],
  },
};

// -------------------------------------------------------------------------------------------------
// PHP web SDK sample (bharatx-in/BharatX-Sample-Web-SDK-Integration-PHP): start-transaction.php
// builds the initiate from the shop's form fields as typed and hands the page merchant_txn_id
// whatever the answer.

const phpCreate: CallSpec = {
  integration: 'php-sample',
  label: 'create transaction (POST /api/transaction) from the form as typed',
  source: source(PHP_SAMPLE, 'start-transaction.php ($request_body, curl)', '§3.2'),
  request: {
    host: 'web',
    method: 'POST',
    path: '/api/transaction',
    headers: [
      ['Content-Type', 'application/json'],
      ['x-partner-id', '{{partnerId}}'],
      ['x-signature', '{{signature}}'],
    ],
    body: {
      encoding: 'php', // json_encode
      value: {
        id: '{{transactionId}}', // uniqid()
        amount: '{{amount}}', // (int)$_POST["amount"]
        user: { name: 'Asha Rao', email: '{{email}}', phoneNumber: '{{phoneNumber}}' }, // "+91" . $_POST["phone"]
      },
    },
    sign: { path: '/api/transaction', key: '{{privateKey}}' },
  },
  judge: {
    acceptance: {
      kind: 'not-checked',
      note: 'it returns api_result, status_code and merchant_txn_id to the page whatever the answer; a refused initiate leaves the popup on "Payment link not found"',
    },
    decodes: 'json',
    reads: [],
  },
};

// -------------------------------------------------------------------------------------------------
// UPI credit sample (bharatx-in/BharatX-Sample-UPI-Credit-Integration): Retrofit on
// https://sdk.bharatx.tech/service/ with the partner's Basic pair; these calls are outside the
// interface description (D124).

const upiRegistrationStatus: CallSpec = {
  integration: 'upi-sample',
  label: 'registration status (GET /service/payments/merchant/user/registration/status)',
  source: source(UPI_SAMPLE, 'NetworkManager.isUserRegistered; ApiInterface.getRegistrationStatus', '§3.5'),
  request: {
    host: 'sdk',
    method: 'GET',
    path: '/service/payments/merchant/user/registration/status?userPhoneNumber=%2B919000000001',
    headers: [['Authorization', 'Basic {{basic}}']],
  },
  judge: {
    acceptance: { kind: 'any-2xx', onRefused: 'response.isSuccessful is false: it logs the error body and throws "Internet error"' },
    decodes: 'json',
    reads: [{ field: 'registrationStatus', type: 'string', ifMissing: 'Gson leaves it null and the comparison is false' }],
    refusalReads: [{ field: 'message', type: 'string', ifMissing: 'the log shows nothing useful' }],
  },
};

const upiInstant: CallSpec = {
  integration: 'upi-sample',
  label: 'instant transaction (POST /service/payments/merchant/transactions/instant)',
  source: source(UPI_SAMPLE, 'NetworkManager.createTransaction; ApiInterface.createTransaction', '§3.5'),
  request: {
    host: 'sdk',
    method: 'POST',
    path: '/service/payments/merchant/transactions/instant',
    headers: [
      ['Authorization', 'Basic {{basic}}'],
      ['Content-Type', 'application/json; charset=UTF-8'],
    ],
    body: {
      encoding: 'javascript', // Gson, fields in declaration order
      value: { merchantTransactionId: 'upi_0001', amount: 49_900, userPhoneNumber: '+919000000001', target: 'QR', QR: { data: 'upi://pay?pa=shop@upi' } },
    },
  },
  judge: {
    acceptance: { kind: 'any-2xx', onRefused: 'response.isSuccessful is false: it logs the error and throws "internet error"' },
    decodes: 'json',
    reads: [{ field: 'transactionStatus', type: 'string', ifMissing: 'Gson leaves it null' }],
    refusalReads: [{ field: 'message', type: 'string', ifMissing: 'the log shows nothing useful' }],
  },
};

export const CALLS = {
  'wc16.configuration': wc16Configuration,
  'wc16.storefrontConfiguration': wc16StorefrontConfiguration,
  'wc16.web.create': wc16WebCreate,
  'wc16.web.status': wc16WebStatus,
  'wc16.web.refund': wc16WebRefund,
  'wc16.gateway.create': wc16GatewayCreate,
  'wc16.gateway.status': wc16GatewayStatus,
  'wc16.gateway.refund': wc16GatewayRefund,
  'wc15.create': wc15Create,
  'wc15.status': wc15Status,
  'wc15.refund': wc15Refund,
  'magento.create': magentoCreate,
  'magento.status': magentoStatus,
  'magento.cancel': magentoCancel,
  'node.create': nodeCreate,
  'webview.create': webviewCreate,
  'php.create': phpCreate,
  'upi.registrationStatus': upiRegistrationStatus,
  'upi.instant': upiInstant,
} as const satisfies Record<string, CallSpec>;

export const RETURNS = {
  'wc16.return': wc16Return,
  'wc15.return': wc15Return,
  'magento.return': magentoReturn,
} as const satisfies Record<string, ReturnSpec>;

export const WEBHOOKS = {
  'wc16.webhook': wc16Webhook,
  'wc15.webhook': wc15Webhook,
  'magento.notify': magentoNotify,
} as const satisfies Record<string, WebhookSpec>;

