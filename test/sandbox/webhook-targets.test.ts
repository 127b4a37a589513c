/**
 * Webhook targets: credentials in a URL are refused everywhere a URL is accepted and never
 * printed; the sandbox's own address, link-local and metadata addresses are refused by default;
 * loopback and private addresses are allowed; `--allow-any-webhook-target` allows the refused ones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from '../../src/sandbox/config.js';
import { runSandbox } from '../../src/cli/sandbox-command.js';
import { createSandbox } from '../../src/sandbox/server.js';
import { WebhookTargets } from '../../src/sandbox/webhook-targets.js';
import { startGateway, type GatewayTest } from '../support/gateway.js';
import { freePort } from '../support/processes.js';

describe('WebhookTargets.problem', () => {
  const targets = new WebhookTargets({ allowAny: false });
  targets.listeningAt({ address: '127.0.0.1', port: 4000, publicUrl: 'https://sandbox.example.in' });

  it('refuses credentials in the URL, naming the problem and not the secret', () => {
    for (const url of ['http://u:s3cret@127.0.0.1:9000/hook', 'https://only-user@receiver.example.in/hook', 'http://:s3cret@10.0.0.5/h']) {
      const problem = targets.problem(url);
      expect(problem?.message, url).toMatch(/must not contain credentials/);
      expect(JSON.stringify(problem)).not.toContain('s3cret');
    }
  });

  it("refuses the sandbox's own address at its port, any path, however it is written", () => {
    for (const url of [
      'http://127.0.0.1:4000/sandbox/sdk/transactions/x/confirm',
      'http://localhost:4000/',
      'http://LOCALHOST.:4000/x',
      'http://[::1]:4000/x',
      'http://127.0.0.2:4000/x',
      'http://0x7f.1:4000/x',
      'http://[::ffff:127.0.0.1]:4000/x',
      'https://sandbox.example.in/sandbox/clock/advance',
    ]) {
      expect(targets.problem(url)?.message, url).toMatch(/the sandbox itself/);
    }
  });

  it('refuses link-local, unspecified and cloud metadata addresses', () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://2852039166/latest',
      'http://[::ffff:169.254.169.254]/',
      'http://169.254.10.1:8080/hook',
      'http://[fe80::1]/hook',
      'http://metadata.google.internal/computeMetadata/v1/',
      'http://100.100.100.200/latest/meta-data',
      'http://[fd00:ec2::254]/latest',
      'http://0.0.0.0:9000/hook',
    ]) {
      expect(targets.problem(url), url).toBeDefined();
    }
  });

  it('allows loopback and private addresses at other ports, and public names', () => {
    for (const url of [
      'http://127.0.0.1:9000/hook',
      'http://localhost:4001/hook',
      'http://[::1]:9000/hook',
      'http://10.0.0.5/hook',
      'http://192.168.1.10:8080/hook',
      'http://172.16.0.1/hook',
      'https://pg.example.in/paylater/webhooks',
    ]) {
      expect(targets.problem(url), url).toBeUndefined();
    }
  });

  it("refuses the other live processes of a shared sandbox at their ports, as they listen, and nothing once they are gone", () => {
    const shared = new WebhookTargets({ allowAny: false });
    shared.listeningAt({ address: '127.0.0.1', port: 4000 });
    shared.othersAt([
      { address: '127.0.0.1', port: 4001 },
      { address: '10.0.0.7', port: 4002, publicUrl: 'https://sandbox-b.example.in' },
      { address: '0.0.0.0', port: 4003, interfaces: ['10.0.0.8', '192.168.5.5'] },
    ]);
    for (const url of [
      'http://127.0.0.1:4001/sandbox/sdk/transactions/x/confirm',
      'http://localhost:4001/x',
      'http://[::1]:4002/x',
      'http://10.0.0.7:4002/x',
      'https://sandbox-b.example.in/sandbox/clock/advance',
      'http://192.168.5.5:4003/x',
      'http://10.0.0.8:4003/x',
      'http://[::ffff:10.0.0.7]:4002/x',
    ]) {
      expect(shared.problem(url)?.message, url).toMatch(/the sandbox itself \(the address and port of one of its processes\)/);
    }
    // Another address at a process's port, or a process's address at another port: a receiver.
    for (const url of ['http://10.0.0.9:4002/hook', 'http://10.0.0.7:9000/hook', 'http://192.168.5.6:4003/hook', 'http://localhost:4004/hook']) {
      expect(shared.problem(url), url).toBeUndefined();
    }
    shared.othersAt([]);
    expect(shared.problem('http://127.0.0.1:4001/x')).toBeUndefined();
  });

  it('judges an IPv6 address that embeds an IPv4 address by that IPv4 address', () => {
    const own = [
      'http://[::127.0.0.1]:4000/x', // IPv4-compatible
      'http://[::7f00:1]:4000/x',
      'http://[::ffff:7f00:1]:4000/x', // IPv4-mapped, hex
      'http://[::ffff:0:7f00:1]:4000/x', // IPv4-translated
      'http://[::ffff:0:127.0.0.1]:4000/x',
      'http://[64:ff9b::7f00:1]:4000/x', // NAT64
      'http://[64:ff9b::127.0.0.1]:4000/x',
      'http://[64:ff9b:1::7f00:1]:4000/x', // local-use NAT64, /96 layout
      'http://[64:ff9b:1:7f00:1::]:4000/x', // local-use NAT64, /48 layout
      'http://[2002:7f00:1::]:4000/x', // 6to4
    ];
    for (const url of own) expect(targets.problem(url)?.message, url).toMatch(/the sandbox itself/);
    for (const url of [
      'http://[::169.254.169.254]/x',
      'http://[64:ff9b::a9fe:a9fe]/latest',
      'http://[::ffff:0:a9fe:a9fe]/latest',
      'http://[2002:a9fe:a9fe::1]/latest',
      'http://[64:ff9b::6464:64c8]/latest', // 100.100.100.200
    ]) {
      expect(targets.problem(url)?.message, url).toMatch(/metadata/);
    }
    expect(targets.problem('http://[64:ff9b::a9fe:101]/x')?.message).toMatch(/link-local/);
    expect(targets.problem('http://[::ffff:0.0.0.0]:9000/x')?.message).toMatch(/0\.0\.0\.0/);
    // The same forms of other addresses, and other ports, stay allowed.
    for (const url of ['http://[64:ff9b::a00:5]/hook', 'http://[::7f00:1]:9000/x', 'http://[2002:a00:5::1]/hook', 'http://[2001:db8::1]/hook']) {
      expect(targets.problem(url), url).toBeUndefined();
    }
  });

  it('judges each embedding form as the URL parser presents it: normalised, in brackets', () => {
    // What `new URL(...)` makes of each form: `hostname` keeps the brackets and writes the IPv4
    // part in hex; the check must see through both.
    const forms: [written: string, parsed: string][] = [
      ['[::127.0.0.1]', '[::7f00:1]'], // IPv4-compatible
      ['[::ffff:127.0.0.1]', '[::ffff:7f00:1]'], // IPv4-mapped
      ['[::ffff:0:127.0.0.1]', '[::ffff:0:7f00:1]'], // IPv4-translated
      ['[64:ff9b::127.0.0.1]', '[64:ff9b::7f00:1]'], // NAT64
      ['[64:ff9b:1::127.0.0.1]', '[64:ff9b:1::7f00:1]'], // local-use NAT64
      ['[2002:7f00:0001::]', '[2002:7f00:1::]'], // 6to4
    ];
    for (const [written, parsed] of forms) {
      const url = new URL(`http://${written}:4000/sandbox/sdk/transactions/victim/confirm`);
      expect(url.hostname, written).toBe(parsed);
      for (const given of [url.href, `http://${parsed}:4000/x`, `http://${written.toUpperCase()}:4000/x`]) {
        expect(targets.problem(given)?.message, given).toMatch(/the sandbox itself/);
      }
      // At another port it is loopback like 127.0.0.1: allowed by default (a receiver's address).
      expect(targets.problem(`http://${parsed}:9000/hook`), parsed).toBeUndefined();
      expect(new WebhookTargets({ allowAny: true }).problem(url.href), parsed).toBeUndefined();
    }
  });

  it('judges resolved IPv6 addresses that embed an IPv4 address the same way', async () => {
    const resolving = new WebhookTargets({
      allowAny: false,
      lookup: async (host) => ({ 'nat64.test': ['64:ff9b::a9fe:a9fe'], 'self6.test': ['::ffff:0:7f00:1'] })[host] ?? [],
    });
    resolving.listeningAt({ address: '127.0.0.1', port: 4000 });
    expect((await resolving.resolvedProblem('http://nat64.test/'))?.message).toMatch(/metadata/);
    expect((await resolving.resolvedProblem('http://self6.test:4000/x'))?.message).toMatch(/the sandbox itself/);
  });

  it('with allowAny, allows every target but still refuses credentials', () => {
    const any = new WebhookTargets({ allowAny: true });
    any.listeningAt({ address: '127.0.0.1', port: 4000 });
    expect(any.problem('http://127.0.0.1:4000/sandbox/clock')).toBeUndefined();
    expect(any.problem('http://169.254.169.254/')).toBeUndefined();
    expect(any.problem('http://u:p@127.0.0.1:9000/')).toBeDefined();
  });

  it('checks the addresses a host name resolves to', async () => {
    const resolving = new WebhookTargets({
      allowAny: false,
      lookup: async (host) => ({ 'meta.test': ['169.254.169.254'], 'self.test': ['127.0.0.1'], 'ok.test': ['10.1.2.3'] })[host] ?? [],
    });
    resolving.listeningAt({ address: '127.0.0.1', port: 4000 });
    expect((await resolving.resolvedProblem('http://meta.test/'))?.message).toMatch(/metadata/);
    expect((await resolving.resolvedProblem('http://self.test:4000/x'))?.message).toMatch(/the sandbox itself/);
    expect(await resolving.resolvedProblem('http://self.test:4001/x')).toBeUndefined();
    expect(await resolving.resolvedProblem('http://ok.test/x')).toBeUndefined();
  });
});

describe('the gateway refuses such URLs with 400 in its format', () => {
  let t: GatewayTest;
  let auth: string;
  beforeAll(async () => {
    t = await startGateway();
    auth = (await t.onboard()).credentials.auth;
  });
  afterAll(async () => {
    await t.close();
  });

  it("the merchant's default webhook URL", async () => {
    const answer = await t.merchantApi('POST', '/api/merchant', {
      merchant: {
        id: t.id('m_creds'),
        brandName: 'Creds',
        entityName: 'Creds Pvt Ltd',
        brandHomePageUrl: 'https://creds.example.in',
        mccCode: 5411,
        defaultWebhookUrl: 'http://pg:hunter2@127.0.0.1:9000/hook',
      },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.errorCode).toBe('BAD_REQUEST');
    expect(answer.body.details).toEqual([{ field: '/merchant/defaultWebhookUrl', issue: 'must not contain user:password@' }]);
    expect(answer.text).not.toContain('hunter2');
  });

  it("a transaction's webhook URL pointing at the sandbox's own confirm endpoint, or at metadata", async () => {
    for (const webhookUrl of [`${t.url}/sandbox/sdk/transactions/other_order/confirm`, 'http://169.254.169.254/latest/meta-data']) {
      const answer = await t.createTransaction(auth, { id: t.id('own'), amount: 10_000, webhookUrl });
      expect(answer.status, webhookUrl).toBe(400);
      expect(answer.body.details[0].field).toBe('/createConfiguration/webhookUrl');
    }
    const loopback = await t.createTransaction(auth, { id: t.id('loop'), amount: 10_000, webhookUrl: 'http://127.0.0.1:9/hook' });
    expect(loopback.status).toBe(200);
  });

  it("a refund's webhook URL", async () => {
    const id = await t.successful(auth, 10_000);
    const answer = await t.call('POST', `/api/merchant/transaction/${id}/refund`, auth, {
      refund: { amount: 100 },
      createConfiguration: { webhookUrl: 'https://u:hunter2@pg.example.in/hooks' },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.details).toEqual([{ field: '/createConfiguration/webhookUrl', issue: 'must not contain user:password@' }]);
    expect(answer.text).not.toContain('hunter2');
    expect((await t.transaction(auth, id)).refunds).toEqual([]);
  });

  it('private addresses are accepted (this is a local development tool)', async () => {
    const answer = await t.merchantApi('POST', '/api/merchant', {
      merchant: {
        id: t.id('m_private'),
        brandName: 'Private',
        entityName: 'Private Pvt Ltd',
        brandHomePageUrl: 'https://private.example.in',
        mccCode: 5411,
        defaultWebhookUrl: 'http://192.168.1.10:8080/hook',
      },
    });
    expect(answer.status).toBe(201);
  });
});

describe('the partner webhook URL at start', () => {
  it('refuses credentials (flag or environment) without printing them', async () => {
    expect(() => resolveConfig({ partner: { webhookUrl: 'http://u:hunter2@127.0.0.1:9/h' } })).toThrow(ConfigError);
    try {
      resolveConfig({}, { PAYLATER_WEBHOOK_URL: 'http://u:hunter2@127.0.0.1:9/h' });
      expect.unreachable();
    } catch (error) {
      expect((error as Error).message).toMatch(/the webhook URL must not contain credentials/);
      expect((error as Error).message).not.toContain('hunter2');
    }
    const written: string[] = [];
    await expect(
      runSandbox(['--port', '0', '--webhook-url', 'http://u:hunter2@127.0.0.1:9/h'], { env: {}, write: (text) => written.push(text), until: Promise.resolve() }),
    ).rejects.toThrow(/must not contain credentials/);
    expect(written.join('')).not.toContain('hunter2');
  });

  it('refuses metadata at once and its own address once it listens, unless allowed', async () => {
    expect(() => resolveConfig({ partner: { webhookUrl: 'http://169.254.169.254/' } })).toThrow(/metadata/);
    expect(resolveConfig({ partner: { webhookUrl: 'http://169.254.169.254/' }, webhooks: { allowAnyTarget: true } }).partner.webhookUrls.web).toBe(
      'http://169.254.169.254/',
    );
    expect(resolveConfig({}, { PAYLATER_ALLOW_ANY_WEBHOOK_TARGET: '1' }).webhooks.allowAnyTarget).toBe(true);
    expect(() => resolveConfig({}, { PAYLATER_ALLOW_ANY_WEBHOOK_TARGET: 'maybe' })).toThrow(ConfigError);

    const port = await freePort();
    const own = await createSandbox({ config: { partner: { webhookUrl: `http://127.0.0.1:${port}/sandbox/clock/advance` } } });
    await expect(own.listen(port, '127.0.0.1')).rejects.toThrow(/the sandbox itself/);
    await own.close();
    const allowed = await createSandbox({
      config: { partner: { webhookUrl: `http://127.0.0.1:${port}/hook` }, webhooks: { allowAnyTarget: true } },
    });
    await expect(allowed.listen(port, '127.0.0.1')).resolves.toBe(`http://127.0.0.1:${port}`);
    await allowed.close();
  });
});

