/**
 * The contract kit: checks with Dredd that a server implements one API family of the contract.
 *
 *   npm run contract -- --family sdk --server http://127.0.0.1:4000 --partner-id partner_test
 *   npm run contract -- --family sdk --server http://127.0.0.1:4013 --mock
 *
 * See docs/contract-kit.md. Exit code: 0 when no transaction failed, 1 when one did, 2 when the
 * kit could not run (bad options, missing document, Dredd error).
 */
import { parseArgs } from 'node:util';
import { readPrivateKey } from '../src/cli/input.js';
import { FAMILIES, isFamily } from './families.js';
import { ContractKitError, runContract, type ContractReport, type TransactionResult } from './contract/run.js';

const USAGE = `Usage: npm run contract -- --family <${FAMILIES.join('|')}> --server <URL> [options]

Checks with Dredd that the server at URL implements one API family of the contract: every
documented response of every operation, each body against its schema.

Options:
  --family <name>        gateway, extras, web or sdk (required)
  --server <URL>         base URL of the server under test (required)
  --mock                 the server is a Prism mock: responses are chosen with Prefer: code=NNN
                         and no stateful setup is made (placeholder credentials when none given)
  --proxy                the server is \`prism proxy --errors\` in front of the real server: requests
                         that break the contract on purpose are skipped (the proxy answers them
                         itself) and the proxy's sl-violations header is reported as a failure
  --controls <URL>       where the sandbox's test controls (/sandbox/...) are, when not at --server
                         (e.g. the sandbox's own URL behind a proxy)
  --names                list the transaction names and exit; nothing is sent
  --username <name>      HTTP Basic user: gateway Merchant API credentials, or extras credentials
  --password <secret>    its password; prefer the environment variable PAYLATER_PASSWORD
  --partner-id <id>      web and SDK flows: the partner id
  --key-file <path>      web and SDK flows: a file holding the private key (else the environment
                         variable PAYLATER_PRIVATE_KEY); the key is never taken on the command line
  --run-id <id>          prefix of the ids this run creates (default: a fresh one per run)
  --wait-seconds <n>     how long the setup waits for asynchronous moves (default 120)
  --document <path>      the bundled document (default generated/openapi/<family>.json)
  --help                 show this help

Exit code: 0 when no transaction failed, 1 when one did, 2 when the kit could not run.`;

function fail(message: string, showUsage = true): never {
  process.stderr.write(`contract: ${message}\n${showUsage ? `\n${USAGE}\n` : ''}`);
  process.exit(2);
}

function parse() {
  const argv = process.argv.slice(2);
  const secretFlag = argv.find((arg) => /^--(private-?key|key)(=|$)/.test(arg));
  if (secretFlag) {
    fail('the private key is never taken on the command line: set PAYLATER_PRIVATE_KEY or use --key-file');
  }
  try {
    return parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        family: { type: 'string' },
        server: { type: 'string' },
        mock: { type: 'boolean', default: false },
        proxy: { type: 'boolean', default: false },
        controls: { type: 'string' },
        names: { type: 'boolean', default: false },
        username: { type: 'string' },
        password: { type: 'string' },
        'partner-id': { type: 'string' },
        'key-file': { type: 'string' },
        'run-id': { type: 'string' },
        'wait-seconds': { type: 'string' },
        document: { type: 'string' },
        help: { type: 'boolean', default: false },
      },
    }).values;
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
}

/** The key of --key-file (at most 64 KiB, read as the CLI reads it), else PAYLATER_PRIVATE_KEY. */
async function readKey(keyFile: string | undefined): Promise<string | undefined> {
  if (keyFile !== undefined) {
    try {
      return await readPrivateKey(keyFile);
    } catch (error) {
      fail(`cannot use --key-file ${keyFile}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return process.env.PAYLATER_PRIVATE_KEY || undefined;
}

function indent(text: string): string {
  return text.replace(/\n/g, '\n        ');
}

function printResult(result: TransactionResult): void {
  if (result.status === 'pass') process.stdout.write(`  pass  ${result.name}\n`);
  else if (result.status === 'fail') process.stdout.write(`  FAIL  ${result.name}\n        ${indent(result.message ?? '')}\n`);
  else process.stdout.write(`  skip  ${result.name}\n        ${indent(result.reason ?? '')}\n`);
}

function printSummary(report: ContractReport): void {
  const lines = [
    '',
    `Contract kit: ${report.family} family against ${report.server}${report.mock ? ' (Prism mock)' : ''}${report.proxy ? ' (through a validating proxy)' : ''}, run id ${report.runId}`,
    `Transactions: ${report.total} total, ${report.run} run, ${report.passed} passed, ${report.failed} failed, ${report.skipped} skipped`,
  ];
  if (report.setupNotes.length > 0) {
    lines.push('Setup:');
    for (const note of report.setupNotes) lines.push(`  - ${note}`);
  }
  if (report.skips.length > 0) {
    lines.push('Skipped (not sent), with the reason:');
    for (const skip of report.skips) lines.push(`  - ${skip.name}\n      ${skip.reason}`);
  }
  if (report.failures.length > 0) {
    lines.push('Failed:');
    for (const failure of report.failures) lines.push(`  - ${failure.name}\n      ${failure.message}`);
  }
  lines.push(report.failed === 0 ? 'Result: no failures.' : `Result: ${report.failed} failed.`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

async function main(): Promise<void> {
  const values = parse();
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (!values.family) fail('--family is required');
  if (!isFamily(values.family)) fail(`--family must be one of ${FAMILIES.join(', ')} (got ${values.family})`);
  if (!values.server) fail('--server is required');
  let waitSeconds: number | undefined;
  if (values['wait-seconds'] !== undefined) {
    waitSeconds = Number(values['wait-seconds']);
    if (!Number.isFinite(waitSeconds) || waitSeconds <= 0) fail('--wait-seconds must be a positive number');
  }
  const privateKey = await readKey(values['key-file']);
  const password = values.password ?? (process.env.PAYLATER_PASSWORD || undefined);

  try {
    const report = await runContract({
      family: values.family,
      server: values.server,
      mock: values.mock,
      proxy: values.proxy,
      controls: values.controls,
      names: values.names,
      username: values.username ?? (process.env.PAYLATER_USERNAME || undefined),
      password,
      partnerId: values['partner-id'] ?? (process.env.PAYLATER_PARTNER_ID || undefined),
      privateKey,
      runId: values['run-id'],
      waitSeconds,
      document: values.document,
      onResult: values.names ? undefined : printResult,
    });
    if (values.names) {
      for (const name of report.names) process.stdout.write(`${name}\n`);
      return;
    }
    printSummary(report);
    process.exitCode = report.failed === 0 ? 0 : 1;
  } catch (error) {
    if (error instanceof ContractKitError) fail(error.message, false);
    throw error;
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`contract: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(2);
});
