/**
 * What a newcomer reads in the guides holds on this tree: install commands that work while the
 * package is not on the registry (and what changes once it is), the Node version of `engines`,
 * one variable for the service's address, one way to receive webhooks in the checkout guide, the
 * ports and how to move them, and the getting-started snippet run as written with
 * `PAYLATER_PRIVATE_KEY` set but empty.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startSandbox } from '../support/sandbox.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const pkg = JSON.parse(read('package.json')) as { version: string; engines: { node: string } };
const GUIDES = ['README.md', 'examples/merchant/README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

/** The fenced code blocks of a Markdown text, with their info string. */
function blocks(markdown: string): { info: string; text: string }[] {
  return [...markdown.matchAll(/^```([^\n]*)\n([\s\S]*?)^```$/gm)].map((match) => ({ info: match[1]!, text: match[2]! }));
}

describe('the guides', () => {
  it('install the package in a way that works before it is published, and say what changes after', () => {
    for (const guide of GUIDES) {
      const text = read(guide);
      for (const block of blocks(text).filter((item) => /^(sh|bash|shell)?\b/.test(item.info))) {
        expect(block.text, `${guide}: a command that fails while the package is not on the registry`).not.toMatch(/^\s*npm (install|i) paylater-api\b/m);
      }
      if (/npm install paylater-api/.test(text)) {
        expect(text, `${guide} names the registry install; it must give the one that works today too`).toMatch(/npm pack/);
        expect(text, guide).toMatch(/published/);
      }
      // The tarball the guides name is the one `npm pack` makes of this version.
      for (const match of text.matchAll(/paylater-api-(\d+\.\d+\.\d+)\.tgz/g)) expect(match[1], guide).toBe(pkg.version);
      // So are the version a guide says it packs and the range a project records.
      for (const match of text.matchAll(/\((\d+\.\d+\.\d+) here\)|"paylater-api": "\^(\d+\.\d+\.\d+)"/g)) expect(match[1] ?? match[2], guide).toBe(pkg.version);
    }
    const checkout = read('docs/web-checkout.md');
    expect(checkout).toMatch(/\(cd paylater-api && npm ci && npm pack\)/);
    expect(checkout).toContain(`npm install ../paylater-api/paylater-api-${pkg.version}.tgz`);
  });

  it('say the Node version that engines says', () => {
    const minimum = /^>=(\d+\.\d+)$/.exec(pkg.engines.node)?.[1];
    expect(minimum).toBeDefined();
    for (const guide of GUIDES) {
      for (const match of read(guide).matchAll(/Node (\d+(?:\.\d+)?) or later/g)) expect(match[1], guide).toBe(minimum);
    }
    expect(read('README.md')).toContain(`Node ${minimum} or later`);
  });

  it('name one variable for the service\'s address, the old one only as deprecated', () => {
    // The decision records (D77) tell the story; the guides only name the old variable as deprecated.
    for (const guide of GUIDES.filter((name) => name !== 'docs/decisions.md' && name !== 'docs/code-decisions.md')) {
      for (const line of read(guide).split('\n').filter((item) => item.includes('PAYLATER_SANDBOX_URL'))) {
        expect(line, guide).toMatch(/PAYLATER_BASE_URL|deprecat|2\.0\.0/);
      }
    }
    expect(read('docs/webhooks.md')).toContain('`listen --sandbox URL` (else `PAYLATER_BASE_URL`');
  });

  it('start the checkout guide on notes.webhook_url (no flag), the partner-level webhook one way, from the web flow only', () => {
    const checkout = read('docs/web-checkout.md');
    expect(checkout).toContain('npx paylater sandbox\n```');
    expect(checkout).toContain('start the sandbox with\n`--web-webhook-url "http://127.0.0.1:$PORT/paylater/webhook"`');
    expect(checkout).not.toMatch(/--webhook-url /);
    expect(checkout).toMatch(/do not\s+also run `paylater listen --forward-to` to the same URL/);
    const webhooks = read('docs/webhooks.md');
    expect(webhooks).toMatch(/use \*\*one\*\* of them per receiver/);
    expect(webhooks).toContain("family: 'web'");
  });

  it('name every port and how to move it in the README', () => {
    const readme = read('README.md');
    const ports = readme.slice(readme.indexOf('## Ports'), readme.indexOf('## Who it is for'));
    for (const expected of ['4000', '4010, 4011, 4012, 4013', '4080', '4001', '3000', '--port-offset 100', 'docs:serve -- --port 4081', 'PAYLATER_PORT', "Prism process", '127.0.0.1']) {
      expect(ports).toContain(expected);
    }
  });

  it('never read a variable with ?? in their code, so that a variable set but empty falls back', () => {
    for (const guide of GUIDES) {
      for (const block of blocks(read(guide)).filter((item) => /^(ts|js|javascript|typescript)\b/.test(item.info))) {
        expect(block.text, guide).not.toMatch(/process\.env\.[A-Z_]+ \?\?/);
      }
    }
  });
});

describe('the clients\' types', () => {
  it('say the unit of every amount a request sends, with an example in rupees (the TSDoc comes from these descriptions)', () => {
    const bodies: [string, string, string[]][] = [
      ['web', 'WebInitiateRequest', ['amount']],
      ['web', 'WebRefundRequest', ['amount']],
      ['sdk', 'SdkInitiateRequest', ['amount']],
      ['sdk', 'SdkRefundRequest', ['amount']],
      ['gateway', 'GatewayTransactionCreateRequest', ['transaction', 'amount']],
      ['gateway', 'GatewayPreEligibilityRequest', ['transaction', 'amount']],
      ['gateway', 'GatewayRefundRequest', ['refund', 'amount']],
    ];
    for (const [family, schema, path] of bodies) {
      const document = JSON.parse(read(`generated/openapi/${family}.json`));
      let node = document.components.schemas[schema];
      for (const name of path) node = node.properties[name];
      expect(node.description, `${schema} ${path.join('.')}`).toMatch(/paise/i);
      expect(node.description, `${schema} ${path.join('.')}`).toMatch(/₹[\d,]+ is `\d+`/);
      const types = read(`generated/types/${family}.d.ts`);
      expect(types, `${family}.d.ts carries the description of ${schema}`).toContain(node.description.replace(/\s+/g, ' ').slice(0, 60));
    }
  });
});

describe('the getting-started snippet', () => {
  it('runs as written with PAYLATER_PRIVATE_KEY set but empty', async () => {
    const guide = read('docs/getting-started.md');
    const section = guide.slice(guide.indexOf('## 4.'), guide.indexOf('## Next'));
    const snippet = blocks(section).find((block) => block.info === 'ts')?.text;
    expect(snippet).toContain("privateKey: process.env.PAYLATER_PRIVATE_KEY || 'test_private_key'");
    const work = mkdtempSync(join(tmpdir(), 'paylater-getting-started-'));
    const sandbox = await startSandbox();
    try {
      const modules = join(work, 'node_modules', 'paylater-api');
      mkdirSync(modules, { recursive: true });
      symlinkSync(join(ROOT, 'src'), join(modules, 'src'), 'junction');
      symlinkSync(join(ROOT, 'generated'), join(modules, 'generated'), 'junction');
      writeFileSync(join(modules, 'package.json'), JSON.stringify({ name: 'paylater-api', type: 'module', exports: { './clients/sdk': './src/clients/sdk.ts' } }));
      writeFileSync(join(work, 'first-call.mts'), snippet!);
      const loader = pathToFileURL(join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', loader, 'first-call.mts'], {
        cwd: work,
        env: { PATH: process.env.PATH ?? '', PAYLATER_PRIVATE_KEY: '', PAYLATER_BASE_URL: sandbox.url },
      });
      expect(stdout.trim()).toBe("201 { message: 'TRANSACTION_INITIATED' }");
    } finally {
      await sandbox.close();
      rmSync(work, { recursive: true, force: true });
    }
  });
});
