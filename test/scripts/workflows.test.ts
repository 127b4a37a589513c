/**
 * The workflow runner's own logic (scripts/workflows/): the Arazzo documents as data (every step's
 * operation exists), the report built from respect's log, the signing proxy's signatures over the
 * exact bytes, the --server forms and the credentials a real implementation needs, and the page
 * of the docs site that shows them. The full runs
 * against the sandbox are test/scripts/workflows-run.test.ts.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWorkflows, WORKFLOWS_DIR } from '../../scripts/workflows/documents.js';
import { buildResults, SKIP_CONTROL_REASON, SKIP_REASON, type RespectLog } from '../../scripts/workflows/report.js';
import { istDate, runWorkflows, serversOf, WorkflowsError } from '../../scripts/workflows/run.js';
import { startSigningProxy } from '../../scripts/workflows/signing-proxy.js';
import { verifySdkSignature, verifyWebSignature } from '../../src/signature.js';
import { bundleOf, operationsOf, requireDocument } from '../support/documents.js';
import { FAMILIES } from '../../scripts/families.js';
import { expandWorkflows, operationLink, WORKFLOWS_MARKER } from '../../scripts/docs-workflows.js';

const root = resolve(import.meta.dirname, '../..');

describe('the Arazzo documents', () => {
  const workflows = readWorkflows();

  it('hold at least eight workflows over the four families', () => {
    expect(workflows.length).toBeGreaterThanOrEqual(8);
    const sources = new Set(workflows.flatMap((workflow) => workflow.steps.map((step) => step.source)));
    for (const family of FAMILIES) expect(sources, family).toContain(family);
  });

  it('name every step by an operationId of its source description', () => {
    const ids = new Map<string, Set<string>>();
    for (const family of FAMILIES) {
      ids.set(family, new Set(operationsOf(requireDocument(bundleOf(family))).map((entry) => entry.operation.operationId as string)));
    }
    const controls = parse(readFileSync(join(WORKFLOWS_DIR, 'sandbox-controls.yaml'), 'utf8')) as { paths: Record<string, Record<string, { operationId: string }>> };
    ids.set('sandbox', new Set(Object.values(controls.paths).flatMap((item) => Object.values(item).map((operation) => operation.operationId))));
    for (const workflow of workflows) {
      for (const step of workflow.steps) {
        expect(ids.get(step.source)?.has(step.operationId), `${workflow.workflowId}/${step.stepId}: ${step.source}.${step.operationId}`).toBe(true);
      }
    }
  });

  it('point at the bundled documents, which the package publishes', () => {
    for (const family of FAMILIES) {
      const document = parse(readFileSync(join(WORKFLOWS_DIR, `${family}.arazzo.yaml`), 'utf8')) as { sourceDescriptions: { name: string; url: string }[] };
      const source = document.sourceDescriptions.find((entry) => entry.name === family);
      expect(source?.url).toBe(`../../generated/openapi/${family}.json`);
      expect(resolve(WORKFLOWS_DIR, source!.url)).toBe(join(root, 'generated', 'openapi', `${family}.json`));
    }
  });

  it('keep step ids unique in each document (respect keeps step outputs by step id)', () => {
    for (const file of new Set(workflows.map((workflow) => workflow.file))) {
      const stepIds = workflows.filter((workflow) => workflow.file === file).flatMap((workflow) => workflow.steps.map((step) => step.stepId));
      expect(new Set(stepIds).size, file).toBe(stepIds.length);
    }
  });
});

describe('the report of a run', () => {
  const workflows = [
    {
      file: 'sdk.arazzo.yaml',
      workflowId: 'flow',
      summary: '',
      description: '',
      steps: [
        { stepId: 'one', description: undefined, source: 'sdk', operationId: 'initiateSdkTransaction' },
        { stepId: 'user', description: undefined, source: 'sandbox', operationId: 'confirmSdkTransaction' },
        { stepId: 'two', description: undefined, source: 'sdk', operationId: 'checkSdkTransactionStatus' },
      ],
    },
  ];
  const passed = { type: 'step', status: 'success', checks: [{ name: 'status code check', passed: true }] };

  it('passes a workflow whose steps all passed, following goto continuations and counting retries', () => {
    const log: RespectLog = {
      files: {
        'openapi/workflows/sdk.arazzo.yaml': {
          executedWorkflows: [
            {
              workflowId: 'flow',
              status: 'success',
              executedSteps: [
                { ...passed, stepId: 'one' },
                { type: 'workflow', executedSteps: [{ ...passed, stepId: 'user' }, { ...passed, stepId: 'two', status: 'error' }, { ...passed, stepId: 'two' }] },
              ],
            },
          ],
        },
      },
    };
    const [result] = buildResults(workflows, log, true);
    expect(result!.status).toBe('pass');
    expect(result!.steps.map((step) => [step.stepId, step.status, step.attempts])).toEqual([
      ['one', 'pass', 1],
      ['user', 'pass', 1],
      ['two', 'pass', 2],
    ]);
  });

  it('fails a step with the answer and the checks that failed, without colour codes', () => {
    const log: RespectLog = {
      files: {
        'sdk.arazzo.yaml': {
          executedWorkflows: [
            {
              workflowId: 'flow',
              status: 'error',
              executedSteps: [
                {
                  type: 'step',
                  stepId: 'one',
                  status: 'error',
                  response: { statusCode: 401 },
                  checks: [
                    { name: 'success criteria check', passed: false, severity: 'error', condition: '$statusCode == 201', message: 'Checking simple criteria' },
                    {
                      name: 'success criteria check',
                      passed: false,
                      severity: 'error',
                      condition: "$response.body#/a == 'b'",
                      message: `Failed to pass: Error in resolving runtime expression '$response.body#/a == 'b'': JSON Pointer "/a" reaches no value.`,
                    },
                    { name: 'schema check', passed: false, severity: 'error', message: '\x1b[31mmust have required property "x"\x1b[0m\nmore' },
                    { name: 'schema check', passed: false, severity: 'warn', message: 'only a warning' },
                  ],
                },
              ],
            },
          ],
        },
      },
    };
    const [result] = buildResults(workflows, log, true);
    expect(result!.status).toBe('fail');
    expect(result!.steps[0]).toMatchObject({
      status: 'fail',
      message:
        'answered 401; not met: $statusCode == 201; not met: $response.body#/a == \'b\' (JSON Pointer "/a" reaches no value.); schema check: must have required property "x"',
    });
    expect(result!.steps[1]).toMatchObject({ status: 'fail', message: 'not reached: an earlier step ended the workflow' });
  });

  it('skips, with the reason, the steps a real implementation does not reach, and fails them against the sandbox', () => {
    const log: RespectLog = {
      files: { 'sdk.arazzo.yaml': { executedWorkflows: [{ workflowId: 'flow', status: 'success', executedSteps: [{ ...passed, stepId: 'one' }] }] } },
    };
    const [real] = buildResults(workflows, log, false);
    expect(real!.status).toBe('pass');
    expect(real!.steps.map((step) => [step.status, step.message])).toEqual([
      ['pass', undefined],
      ['skip', SKIP_CONTROL_REASON],
      ['skip', SKIP_REASON],
    ]);
    const [sandbox] = buildResults(workflows, log, true);
    expect(sandbox!.status).toBe('fail');
  });

  it('fails a workflow that did not run at all', () => {
    const [result] = buildResults(workflows, { files: {} }, true);
    expect(result!.status).toBe('fail');
    expect(result!.steps[0]!.message).toBe('the workflow did not run');
  });
});

describe('the signing proxy', () => {
  let upstream: Server;
  let upstreamUrl: string;
  const received: { url: string; headers: IncomingMessage['headers']; body: Buffer }[] = [];

  beforeAll(async () => {
    upstream = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({ url: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks) });
        response.writeHead(418, { 'Content-Type': 'application/json', 'X-Upstream': 'yes' });
        response.end('{"message":"from upstream"}');
      });
    });
    await new Promise<void>((done) => upstream.listen(0, '127.0.0.1', done));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    upstream.closeAllConnections();
    await new Promise<void>((done) => upstream.close(() => done()));
  });

  it('signs a web request over the body, the path with the server prefix and the query, and hands the answer back', async () => {
    const proxy = await startSigningProxy({ family: 'web', upstream: `${upstreamUrl}/prefix/`, privateKey: 'k1' });
    try {
      const body = '{"id":"web_1",  "amount": 100}';
      const answer = await fetch(`${proxy.url}/api/transaction?a=b&c=%20`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Partner-Id': 'p1', 'X-Signature': 'placeholder=' },
        body,
      });
      expect(answer.status).toBe(418);
      expect(answer.headers.get('x-upstream')).toBe('yes');
      expect(await answer.text()).toBe('{"message":"from upstream"}');
      const last = received.at(-1)!;
      expect(last.url).toBe('/prefix/api/transaction?a=b&c=%20');
      expect(last.body.toString()).toBe(body);
      expect(last.headers['x-partner-id']).toBe('p1');
      expect(verifyWebSignature(last.headers['x-signature'], last.body, '/prefix/api/transaction?a=b&c=%20', 'k1')).toBe(true);
      expect(proxy.forwarded).toBe(1);
    } finally {
      await proxy.close();
    }
  });

  it('signs an SDK request over the exact bytes and the key, and a GET over the empty body', async () => {
    const proxy = await startSigningProxy({ family: 'sdk', upstream: upstreamUrl, privateKey: 'k2' });
    try {
      const body = Buffer.from('{"merchantTransactionId":"ü_1"}', 'utf8');
      await fetch(`${proxy.url}/merchant/credit/initiateTransaction`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
      const last = received.at(-1)!;
      expect(Buffer.compare(last.body, body)).toBe(0);
      expect(verifySdkSignature(last.headers['x-signature'], body, 'k2')).toBe(true);
      expect(verifySdkSignature(last.headers['x-signature'], body, 'another key')).toBe(false);
    } finally {
      await proxy.close();
    }
  });

  it('answers 502 with a message when the server cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((done) => closed.close(() => done()));
    const proxy = await startSigningProxy({ family: 'sdk', upstream: `http://127.0.0.1:${port}`, privateKey: 'k3' });
    try {
      const answer = await fetch(`${proxy.url}/merchant/credit/checkTransactionStatus`, { method: 'POST', body: '{}' });
      expect(answer.status).toBe(502);
      const text = await answer.text();
      expect(text).toContain('cannot be reached');
      expect(text).not.toContain('k3');
    } finally {
      await proxy.close();
    }
  });
});

describe('the options', () => {
  it('takes one server for every family, or one per family', () => {
    expect(serversOf(['http://a:1'])).toEqual({ gateway: 'http://a:1', extras: 'http://a:1', web: 'http://a:1', sdk: 'http://a:1' });
    expect(serversOf(['http://a:1', 'web=http://w:2'])).toMatchObject({ gateway: 'http://a:1', web: 'http://w:2' });
    expect(() => serversOf(['web=http://w:2'])).toThrow(/no server for the gateway family/);
    expect(() => serversOf(['shop=http://s:3'])).toThrow(WorkflowsError);
  });

  it('writes settlement dates in India time', () => {
    expect(istDate(Date.UTC(2026, 10, 26, 18, 29))).toBe('2026-11-26');
    expect(istDate(Date.UTC(2026, 10, 26, 18, 31))).toBe('2026-11-27');
  });

  it('refuses a server URL with credentials, and needs the credentials of a server that is not the sandbox', async () => {
    const notSandbox = createServer((_, response) => {
      response.writeHead(404);
      response.end();
    });
    await new Promise<void>((done) => notSandbox.listen(0, '127.0.0.1', done));
    const url = `http://127.0.0.1:${(notSandbox.address() as AddressInfo).port}`;
    try {
      await expect(runWorkflows({ servers: serversOf(['http://user:secret@127.0.0.1:1']) })).rejects.toThrow(/must not carry credentials/);
      const refusal = runWorkflows({ servers: serversOf([url]), partnerId: 'p' });
      await expect(refusal).rejects.toThrow(WorkflowsError);
      await expect(refusal).rejects.toThrow(/PAYLATER_MERCHANT_API_USERNAME.*PAYLATER_EXTRAS_USERNAME.*PAYLATER_PRIVATE_KEY/);
      await expect(runWorkflows({ servers: serversOf([url]), sandbox: true })).rejects.toThrow(/sandbox controls are not there/);
    } finally {
      await new Promise<void>((done) => notSandbox.close(() => done()));
    }
  });
});

describe('the workflows page of the docs site', () => {
  const markdown = readFileSync(join(root, 'docs', 'workflows.md'), 'utf8');

  it('is docs/workflows.md with its marker replaced by every workflow, each step linked to its operation', () => {
    expect(markdown).toContain(WORKFLOWS_MARKER);
    const page = expandWorkflows(markdown);
    expect(page).not.toContain(WORKFLOWS_MARKER);
    for (const workflow of readWorkflows()) {
      expect(page).toContain(`\`${workflow.workflowId}\` in \`${workflow.file}\``);
      for (const step of workflow.steps) expect(page).toContain(`**${step.stepId}**`);
    }
    expect(page).toContain('[`createMerchant`](gateway.html#/merchants/createmerchant)');
    expect(page).toContain('[`initiateSdkTransaction`](sdk.html#/sdk-flow/initiatesdktransaction)');
    expect(page).toContain('[`advanceClock`](sandbox.md#sandbox-only-endpoints) (sandbox control');
    // An integrators' guide names no path into the sources (test/e2e/docs.test.ts).
    expect(page.replace(WORKFLOWS_MARKER, '')).not.toMatch(/(?<![\w/.-])(?:src|scripts|generated|openapi)\//);
  });

  it('leaves every other guide as it is', () => {
    const other = readFileSync(join(root, 'docs', 'sandbox.md'), 'utf8');
    expect(expandWorkflows(other)).toBe(other);
  });

  it('refuses a step whose operation is not in the bundled document', () => {
    expect(() => operationLink({ stepId: 's', description: undefined, source: 'sdk', operationId: 'noSuchOperation' }, new Map())).toThrow(/not an operation/);
  });
});
