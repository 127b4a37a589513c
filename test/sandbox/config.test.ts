import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_CONFIG, resolveConfig, secretEquals } from '../../src/sandbox/config.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { banner, runSandbox, SandboxStartError, shownUrl } from '../../src/cli/sandbox-command.js';
import { missingBrowserAssets } from '../../src/sandbox/browser-assets.js';
import { UsageError } from '../../src/cli/command-line.js';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const config = resolveConfig();
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 4000,
      merchantApi: { username: 'pg_test', password: 'pg_test_secret' },
      extras: { username: 'extras_test', password: 'extras_test_secret' },
      partner: { id: 'partner_test', privateKey: 'test_private_key', webhookUrls: { web: undefined, sdk: undefined } },
      bodyLimit: 1_048_576,
      requireStatusSignature: false,
    });
    expect(config).toEqual(resolveConfig({}, {}));
    expect(DEFAULT_CONFIG.partner.id).toBe('partner_test');
  });

  it('reads the environment, and explicit options win over it', () => {
    const env = {
      PAYLATER_HOST: '0.0.0.0',
      PAYLATER_PORT: '4100',
      PAYLATER_MERCHANT_API_USERNAME: 'pg',
      PAYLATER_MERCHANT_API_PASSWORD: 'pg-secret',
      PAYLATER_EXTRAS_USERNAME: 'ex',
      PAYLATER_EXTRAS_PASSWORD: 'ex-secret',
      PAYLATER_PARTNER_ID: 'partner_x',
      PAYLATER_PRIVATE_KEY: 'key_x',
      PAYLATER_WEBHOOK_URL: 'http://127.0.0.1:9999/hook',
    };
    expect(resolveConfig({}, env)).toMatchObject({
      host: '0.0.0.0',
      port: 4100,
      merchantApi: { username: 'pg', password: 'pg-secret' },
      extras: { username: 'ex', password: 'ex-secret' },
      partner: { id: 'partner_x', privateKey: 'key_x', webhookUrls: { web: 'http://127.0.0.1:9999/hook', sdk: 'http://127.0.0.1:9999/hook' } },
    });
    expect(resolveConfig({ port: 5000, partner: { webhookUrl: 'https://x.example/h' } }, env)).toMatchObject({
      port: 5000,
      partner: { id: 'partner_x', webhookUrls: { web: 'https://x.example/h', sdk: 'https://x.example/h' } },
    });
  });

  it('gives each flow its own webhook URL, --webhook-url setting both (D76)', () => {
    const web = 'http://127.0.0.1:3000/paylater/webhook';
    const sdk = 'http://127.0.0.1:8080/sdk-webhook';
    const both = 'http://127.0.0.1:9000/hook';
    const urls = (overrides: Parameters<typeof resolveConfig>[0], env: Record<string, string> = {}) => resolveConfig(overrides, env).partner.webhookUrls;
    expect(urls({}, { PAYLATER_WEB_WEBHOOK_URL: web })).toEqual({ web, sdk: undefined });
    expect(urls({}, { PAYLATER_SDK_WEBHOOK_URL: sdk, PAYLATER_WEBHOOK_URL: both })).toEqual({ web: both, sdk });
    expect(urls({ partner: { webhookUrls: { web } } })).toEqual({ web, sdk: undefined });
    // Options win over variables; a flow's own setting wins over the shorthand at the same level.
    expect(urls({ partner: { webhookUrl: both, webhookUrls: { sdk } } }, { PAYLATER_WEB_WEBHOOK_URL: web })).toEqual({ web: both, sdk });
    expect(urls({ partner: { webhookUrls: { web: undefined } } }, { PAYLATER_WEBHOOK_URL: both })).toEqual({ web: undefined, sdk: both });
    expect(() => urls({}, { PAYLATER_SDK_WEBHOOK_URL: 'ftp://x' })).toThrow(/^the SDK webhook URL /);
    expect(() => urls({}, { PAYLATER_WEBHOOK_URL: 'ftp://x' })).toThrow(/^the webhook URL /);
  });

  it('turns the status-signature requirement on from the environment or an option (D21)', () => {
    for (const value of ['1', 'true', 'TRUE']) {
      expect(resolveConfig({}, { PAYLATER_REQUIRE_STATUS_SIGNATURE: value }).requireStatusSignature).toBe(true);
    }
    for (const value of ['0', 'false', '']) {
      expect(resolveConfig({}, { PAYLATER_REQUIRE_STATUS_SIGNATURE: value }).requireStatusSignature).toBe(false);
    }
    expect(resolveConfig({ requireStatusSignature: true }).requireStatusSignature).toBe(true);
    expect(resolveConfig({ requireStatusSignature: false }, { PAYLATER_REQUIRE_STATUS_SIGNATURE: '1' }).requireStatusSignature).toBe(false);
    expect(() => resolveConfig({}, { PAYLATER_REQUIRE_STATUS_SIGNATURE: 'yes please' })).toThrow(
      'PAYLATER_REQUIRE_STATUS_SIGNATURE must be 1 or 0 (true or false)',
    );
  });

  it('rejects unusable settings without echoing secrets', () => {
    expect(() => resolveConfig({}, { PAYLATER_PORT: 'abc' })).toThrow(ConfigError);
    expect(() => resolveConfig({ partner: { webhookUrl: 'ftp://x' } })).toThrow(/webhook URL/);
    try {
      resolveConfig({ partner: { privateKey: '' } });
      expect.unreachable();
    } catch (error) {
      expect((error as Error).message).toBe('the private key must not be empty');
    }
  });

  it('limits the webhook sockets over all receivers: 256 by default, PAYLATER_WEBHOOK_MAX_SOCKETS or an option', () => {
    expect(resolveConfig().webhooks.maxSockets).toBe(256);
    expect(resolveConfig({}, { PAYLATER_WEBHOOK_MAX_SOCKETS: '32' }).webhooks.maxSockets).toBe(32);
    expect(resolveConfig({ webhooks: { maxSockets: 8 } }, { PAYLATER_WEBHOOK_MAX_SOCKETS: '32' }).webhooks.maxSockets).toBe(8);
    expect(() => resolveConfig({}, { PAYLATER_WEBHOOK_MAX_SOCKETS: '0' })).toThrow(
      'PAYLATER_WEBHOOK_MAX_SOCKETS must be a whole number from 1 to 10000',
    );
    expect(() => resolveConfig({ webhooks: { maxSockets: 10_001 } })).toThrow('--webhook-max-sockets must be a whole number from 1 to 10000');
  });

  it('compares secrets in constant time, whatever their lengths', () => {
    expect(secretEquals('pg_test_secret', 'pg_test_secret')).toBe(true);
    expect(secretEquals('pg_test_secre', 'pg_test_secret')).toBe(false);
    expect(secretEquals('', 'x')).toBe(false);
  });
});

describe('the sandbox command', () => {
  it('prints its help', async () => {
    let output = '';
    expect(await runSandbox(['--help'], { write: (text) => (output += text) })).toBe(0);
    expect(output).toContain('--webhook-url');
    const flat = output.replace(/\s+/g, ' ');
    expect(flat).toContain("--web-webhook-url URL the partner's receiver of web-flow webhooks (default none) [PAYLATER_WEB_WEBHOOK_URL]");
    expect(flat).toContain("--sdk-webhook-url URL the partner's receiver of SDK-flow webhooks (default none) [PAYLATER_SDK_WEBHOOK_URL]");
    expect(flat).toContain('use one way, not both');
    expect(output).toContain('--require-status-signature');
    expect(output).toContain('PAYLATER_REQUIRE_STATUS_SIGNATURE=1');
    expect(output).toContain('PAYLATER_PRIVATE_KEY');
  });

  it('rejects a bad port and unknown options', async () => {
    await expect(runSandbox(['--port', 'x'], { write: () => undefined })).rejects.toThrow(UsageError);
    await expect(runSandbox(['--key', 'x'], { write: () => undefined })).rejects.toThrow(UsageError);
    await expect(runSandbox(['--webhook-max-sockets', '0'], { write: () => undefined })).rejects.toThrow(
      '--webhook-max-sockets must be a whole number from 1 to 10000',
    );
  });

  it('refuses to start without its built browser code, and says how to build it', async () => {
    expect(missingBrowserAssets()).toEqual([]);
    const empty = mkdtempSync(join(tmpdir(), 'paylater-unbuilt-'));
    try {
      expect(missingBrowserAssets(empty)).toEqual(['dist/browser/sdk.js', 'dist/browser/checkout.js', 'dist/browser/dashboard.js']);
      const written: string[] = [];
      const started = runSandbox(['--port', '0'], { packageRoot: empty, write: (text) => written.push(text), until: Promise.resolve() });
      await expect(started).rejects.toThrow(SandboxStartError);
      await expect(started).rejects.toThrow(
        'the browser code is not built (dist/browser/sdk.js, dist/browser/checkout.js, dist/browser/dashboard.js missing); run `npm run build` first (`npm start` builds it).',
      );
      expect(written).toEqual([]);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('starts, prints its address and the labelled test credentials, and stops', async () => {
    let output = '';
    let stop!: () => void;
    const until = new Promise<void>((resolve) => (stop = resolve));
    const running = runSandbox(['--port', '0', '--webhook-url', 'http://127.0.0.1:1/hook', '--require-status-signature'], {
      env: {},
      write: (text) => (output += text),
      until,
    });
    while (!output.includes('listening on')) await new Promise((resolve) => setTimeout(resolve, 20));
    const url = /listening on (http:\/\/\S+)/.exec(output)![1]!;
    const clock = await fetch(`${url}/sandbox/clock`);
    expect(clock.status).toBe(200);
    const unsigned = await fetch(`${url}/api/transaction/status?id=anything`, { headers: { 'X-Partner-Id': 'partner_test' } });
    expect(unsigned.status).toBe(401);
    stop();
    expect(await running).toBe(0);
    expect(output).toContain('Sandbox test credentials');
    expect(output).toContain('pg_test / pg_test_secret');
    expect(output).toContain('extras_test / extras_test_secret');
    expect(output).toContain('partner_test');
    expect(output).toContain('test_private_key');
    expect(output).toContain(`http://127.0.0.1:1/... (sha256:${createHash('sha256').update('http://127.0.0.1:1/hook').digest('hex').slice(0, 8)})`);
    expect(output).toContain('X-Signature required (--require-status-signature)');
    expect(output).toContain(`Dashboard (requests, transactions, webhooks, live): ${url}/dashboard`);
    await expect(fetch(`${url}/sandbox/clock`)).rejects.toThrow();
  });

  it('takes the receiver of each flow from its flag, over --webhook-url and the variables (D76)', async () => {
    let output = '';
    const running = runSandbox(['--port', '0', '--web-webhook-url', 'http://127.0.0.1:1/web', '--webhook-url', 'http://127.0.0.1:1/both'], {
      env: { PAYLATER_SDK_WEBHOOK_URL: 'http://127.0.0.1:1/sdk-from-env' },
      write: (text) => (output += text),
      until: Promise.resolve(),
    });
    expect(await running).toBe(0);
    expect(output).toContain(`  Web webhook URL:               ${shownUrl('http://127.0.0.1:1/web')}\n`);
    expect(output).toContain(`  SDK webhook URL:               ${shownUrl('http://127.0.0.1:1/both')}\n`);
  });

  it('banner() names every credential', () => {
    const text = banner('http://127.0.0.1:4000', resolveConfig());
    expect(text).toMatch(/Merchant API .*pg_test \/ pg_test_secret/);
    expect(text).toMatch(/Private key .*test_private_key/);
    // One pair for every flow (D72, D123): the banner names the gateway merchant it also opens.
    expect(text).toMatch(/Published test pair: .*testPartnerId \/ testPrivateKey/);
    expect(text).toMatch(/web and SDK partner, and gateway merchant published_test_merchant/);
  });

  it('banner() never prints a secret the operator set, only where it came from', () => {
    const config = resolveConfig({
      merchantApi: { username: 'pg_live', password: 'live-Secret-1' },
      extras: { username: 'ex_live', password: 'live-Secret-2' },
      partner: { id: 'partner_live', privateKey: 'live-Private-Key-3' },
    });
    const text = banner('http://127.0.0.1:4000', config);
    for (const secret of ['live-Secret-1', 'live-Secret-2', 'live-Private-Key-3']) expect(text).not.toContain(secret);
    expect(text).toContain('pg_live');
    expect(text).toMatch(/Private key .*set, not shown; from PAYLATER_PRIVATE_KEY/);
  });

  it('banner() shows the webhook URL of each flow when they differ, one line when they are the same', () => {
    const split = banner('http://127.0.0.1:4000', resolveConfig({ partner: { webhookUrls: { web: 'http://127.0.0.1:3000/paylater/webhook' } } }));
    expect(split).toContain(`  Web webhook URL:               ${shownUrl('http://127.0.0.1:3000/paylater/webhook')}\n`);
    expect(split).toContain('  SDK webhook URL:               (none: events are recorded as not_sent)\n');
    expect(split).not.toContain('Partner webhook URL');
    const shared = banner('http://127.0.0.1:4000', resolveConfig({ partner: { webhookUrl: 'http://127.0.0.1:9/h' } }));
    expect(shared).toContain(`  Partner webhook URL:           ${shownUrl('http://127.0.0.1:9/h')}\n`);
    expect(shared).not.toMatch(/Web webhook URL|SDK webhook URL/);
  });

  it('banner() shows a webhook URL as its origin and fingerprint, and a URL with credentials is refused before any banner', () => {
    const webhookUrl = 'https://hooks.example.in/pay/path-tok-6?token=tok-5#x';
    const config = resolveConfig({ partner: { webhookUrl } });
    const text = banner('http://127.0.0.1:4000', config);
    const fingerprint = createHash('sha256').update(webhookUrl).digest('hex').slice(0, 8);
    expect(text).toContain(`Partner webhook URL:           https://hooks.example.in/... (sha256:${fingerprint})\n`);
    expect(text).not.toContain('tok-5');
    expect(text).not.toContain('path-tok-6');
    let refusal = '';
    try {
      resolveConfig({ partner: { webhookUrl: 'https://hook_user:hook-Pass-4@hooks.example.in/pay' } });
    } catch (error) {
      refusal = String(error);
    }
    expect(refusal).toMatch(/must not contain credentials/);
    for (const secret of ['hook_user', 'hook-Pass-4']) expect(refusal).not.toContain(secret);
  });
});
