/**
 * The workflows: runs every Arazzo workflow of `openapi/workflows/` with `redocly respect`
 * against a server and prints a line per workflow and step.
 *
 *   npm run workflows -- --server http://127.0.0.1:4000
 *
 * See docs/contract-kit.md ("The workflows"). Exit code: 0 when no workflow failed, 1 when one
 * did, 2 when the runner could not run (bad options, missing credentials, respect did not start).
 */
import { parseArgs } from 'node:util';
import { readPrivateKey } from '../src/cli/input.js';
import { runWorkflows, serversOf, WorkflowsError, type BasicCredentials, type WorkflowsReport } from './workflows/run.js';
import type { WorkflowResult } from './workflows/report.js';

const USAGE = `Usage: npm run workflows -- --server <URL> [options]

Runs every workflow of openapi/workflows/*.arazzo.yaml (Arazzo 1.0) with redocly respect against
the server at URL: each flow of the contract from end to end, each step checked against its
success criteria and the contract's schemas.

Options:
  --server <URL>          the server of every family; or <family>=<URL> for one family
                          (gateway, extras, web, sdk), repeated; required
  --controls <URL>        where the sandbox controls (/sandbox/...) are (default: the gateway server)
  --real                  treat the server as a real implementation even when it has the sandbox
                          controls: the steps that need a user's action are skipped
  --phone-number <+91..>  the user of the gateway and extras workflows (default: the sandbox's
                          approved test user +919000000001)
  --key-file <path>       a file holding the private key (else PAYLATER_PRIVATE_KEY); the key is
                          never taken on the command line
  --run-id <id>           prefix of the ids the run creates (default: a fresh one)
  --verbose               also print respect's own output (it masks secrets)
  --help                  show this help

Credentials come from the environment: PAYLATER_MERCHANT_API_USERNAME and
PAYLATER_MERCHANT_API_PASSWORD (gateway), PAYLATER_EXTRAS_USERNAME and PAYLATER_EXTRAS_PASSWORD,
PAYLATER_PARTNER_ID and PAYLATER_PRIVATE_KEY (web and SDK flows). Against the sandbox, any not set
is the sandbox's published test value.

Exit code: 0 when no workflow failed, 1 when one did, 2 when the runner could not run.`;

function fail(message: string, showUsage = true): never {
  process.stderr.write(`workflows: ${message}\n${showUsage ? `\n${USAGE}\n` : ''}`);
  process.exit(2);
}

function parse() {
  const argv = process.argv.slice(2);
  if (argv.some((arg) => /^--(private-?key|key|password)(=|$)/.test(arg))) {
    fail('secrets are never taken on the command line: set them in the environment (or use --key-file)');
  }
  try {
    return parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        server: { type: 'string', multiple: true },
        controls: { type: 'string' },
        real: { type: 'boolean', default: false },
        'phone-number': { type: 'string' },
        'key-file': { type: 'string' },
        'run-id': { type: 'string' },
        verbose: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    }).values;
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
}

function basic(prefix: string): BasicCredentials | undefined {
  const username = process.env[`${prefix}_USERNAME`];
  const password = process.env[`${prefix}_PASSWORD`];
  if (!username && !password) return undefined;
  if (!username || !password) fail(`set both ${prefix}_USERNAME and ${prefix}_PASSWORD, or neither`, false);
  return { username, password };
}

function indent(text: string): string {
  return text.replace(/\n/g, '\n        ');
}

function printWorkflow(result: WorkflowResult): void {
  const lines = [`${result.file} / ${result.workflowId}: ${result.status === 'pass' ? 'pass' : 'FAIL'}`];
  if (result.message) lines.push(`  ${result.message}`);
  for (const step of result.steps) {
    const label = step.status === 'fail' ? 'FAIL' : step.status;
    const attempts = step.attempts > 1 ? `, ${step.attempts} attempts` : '';
    lines.push(`  ${label.padEnd(4)}  ${step.stepId} (${step.operation}${attempts})`);
    if (step.message) lines.push(`        ${indent(step.message)}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

function printSummary(report: WorkflowsReport): void {
  const skipped = report.skippedSteps > 0 ? `; ${report.skippedSteps} steps skipped (they need the sandbox)` : '';
  process.stdout.write(
    `\nWorkflows: ${report.workflows.length} total, ${report.passed} passed, ${report.failed} failed${skipped}; ` +
      `${(report.durationMs / 1000).toFixed(1)} s\nResult: ${report.failed === 0 ? 'no failures.' : `${report.failed} failed.`}\n`,
  );
}

async function main(): Promise<void> {
  const values = parse();
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (!values.server || values.server.length === 0) fail('--server is required');
  let servers: ReturnType<typeof serversOf>;
  try {
    servers = serversOf(values.server);
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
  let privateKey: string | undefined;
  if (values['key-file'] !== undefined) {
    try {
      privateKey = await readPrivateKey(values['key-file']);
    } catch (error) {
      fail(`cannot use --key-file ${values['key-file']}: ${error instanceof Error ? error.message : String(error)}`, false);
    }
  } else privateKey = process.env.PAYLATER_PRIVATE_KEY || undefined;

  try {
    const report = await runWorkflows({
      servers,
      controls: values.controls,
      sandbox: values.real ? false : undefined,
      merchantApi: basic('PAYLATER_MERCHANT_API'),
      extras: basic('PAYLATER_EXTRAS'),
      partnerId: process.env.PAYLATER_PARTNER_ID || undefined,
      privateKey,
      phoneNumber: values['phone-number'],
      runId: values['run-id'],
      onRespectOutput: values.verbose ? (chunk) => process.stderr.write(chunk) : undefined,
    });
    const where = servers.gateway === servers.web && servers.web === servers.sdk && servers.sdk === servers.extras ? servers.gateway : 'the servers given';
    const kind = report.sandbox
      ? 'the sandbox: its controls play the user and move its clock'
      : 'a real implementation: the steps that need a user action are skipped';
    process.stdout.write(`Workflows against ${where} (${kind}), run id ${report.runId}\n`);
    for (const note of report.notes) process.stdout.write(`Setup: ${note}\n`);
    process.stdout.write('\n');
    for (const result of report.workflows) printWorkflow(result);
    printSummary(report);
    process.exitCode = report.failed === 0 ? 0 : 1;
  } catch (error) {
    if (error instanceof WorkflowsError) fail(error.message, false);
    throw error;
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`workflows: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(2);
});
