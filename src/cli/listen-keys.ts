/**
 * The signing keys `paylater listen` prints once it is ready, one line per forwarded family: the
 * secret a receiver verifies that family's events with, as `stripe listen` prints its signing
 * secret, so that nobody needs a curl-and-node line to find the gateway webhook key.
 *
 * - SDK and web: the partner's private key. The published test key is printed (the sandbox's own
 *   banner prints it too); a key set in `PAYLATER_PRIVATE_KEY` is the user's own secret and is
 *   named, never printed.
 * - Gateway: the Transactional API password of the merchant `paylater trigger` uses
 *   (`paylater_trigger` unless `--merchant`), which the sandbox issued, read with the Merchant API
 *   credentials (`GET /api/merchant/{id}`). Nothing is created: a merchant not onboarded yet is
 *   told with the command that onboards it. Other merchants sign with their own passwords.
 */
import { createMerchantApiClient, transactionalCredentials } from '../clients/gateway.js';
import type { WebhookFamily } from '../contract/webhooks.js';
import { DEFAULT_CONFIG, ENVIRONMENT } from '../sandbox/config.js';

/** Where the keys come from. */
export interface KeySources {
  sandbox: URL;
  /** The gateway merchant whose password is printed. */
  merchant: string;
}

const READ_TIMEOUT_MS = 5_000;

export async function signingKeyLines(sources: KeySources, families: readonly WebhookFamily[]): Promise<string[]> {
  const lines = ['Signing keys, the secret your receiver verifies each family with:'];
  const direct = families.filter((family) => family !== 'gateway');
  if (direct.length > 0) lines.push(`  ${direct.join(', ').padEnd(8)}  ${partnerKey()}`);
  if (families.includes('gateway')) lines.push(`  ${'gateway'.padEnd(8)}  ${await gatewayKey(sources)}`);
  return lines;
}

function fromEnv(name: string): string | undefined {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : value;
}

function partnerKey(): string {
  const own = fromEnv(ENVIRONMENT.privateKey);
  if (own !== undefined && own !== DEFAULT_CONFIG.partner.privateKey) {
    return `the partner's private key in ${ENVIRONMENT.privateKey} (your own key: not printed)`;
  }
  return `${DEFAULT_CONFIG.partner.privateKey}  (the sandbox's published test private key; set your own with ${ENVIRONMENT.privateKey})`;
}

async function gatewayKey(sources: KeySources): Promise<string> {
  const { merchant } = sources;
  const client = createMerchantApiClient({
    baseUrl: sources.sandbox.href.replace(/\/+$/, ''),
    timeoutMs: READ_TIMEOUT_MS,
    credentials: {
      username: fromEnv(ENVIRONMENT.merchantApiUsername) ?? DEFAULT_CONFIG.merchantApi.username,
      password: fromEnv(ENVIRONMENT.merchantApiPassword) ?? DEFAULT_CONFIG.merchantApi.password,
    },
  });
  let answer;
  try {
    answer = await client.GET('/api/merchant/{id}', { params: { path: { id: merchant } } });
  } catch {
    return `merchant ${merchant}'s Transactional API password (the sandbox did not answer when it was read)`;
  }
  const status = answer.response.status;
  if (status === 404) {
    return `merchant ${merchant}'s Transactional API password, once it exists: 'paylater trigger gateway.transaction.success' onboards it; run listen again to see the password`;
  }
  if (status === 401) {
    return `merchant ${merchant}'s Transactional API password (not read: are ${ENVIRONMENT.merchantApiUsername} and ${ENVIRONMENT.merchantApiPassword} the sandbox's Merchant API credentials?)`;
  }
  const credentials = answer.data === undefined ? undefined : transactionalCredentials(answer.data.merchant);
  if (credentials === undefined) {
    return `merchant ${merchant}'s Transactional API password, once it is enabled (stage ${answer.data?.merchant.stage ?? `unknown, HTTP ${status}`})`;
  }
  return `${credentials.password}  (merchant ${merchant}'s Transactional API password, issued by the sandbox; other merchants sign with their own)`;
}
