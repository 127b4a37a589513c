/**
 * `paylater sign` and `paylater verify`: compute and check the signatures of the service
 * (web, sdk and status kinds) with the primitives of `../signature.ts`.
 */
import {
  SIGNATURE_PATTERN,
  sdkSignature,
  statusSignature,
  verifySdkSignature,
  verifyStatusSignature,
  verifyWebSignature,
  webSignature,
} from '../signature.js';
import {
  commandGroup,
  parseCommandLine,
  requireOption,
  UsageError,
  type Command,
} from './command-line.js';
import { PRIVATE_KEY_VARIABLE, readBody, readPrivateKey } from './input.js';

const BODY_NOTE = `The body is read from FILE, or from standard input when FILE is '-' or absent, and
is used byte for byte: nothing is trimmed or re-encoded. 'echo' adds a newline that
becomes part of the body; use printf or echo -n, or --strip-newline to drop one
trailing newline. (A file named '-' is ./-.)`;

const KEY_NOTE = `The private key is the content of the --key-file FILE (one trailing newline is
ignored), else the ${PRIVATE_KEY_VARIABLE} environment variable. It is never taken
from the command line and never printed.`;

const VERIFY_EXIT = `Exit status: 0, printing 'valid' on standard output, when the signature matches;
1, printing 'invalid' on standard error, when it does not; 2 on a usage error, an
unreadable file or a missing key.`;

const KEY_OPTION = '  --key-file FILE        read the private key from FILE';
const HELP_OPTION = '  -h, --help             show this help';
const PATH_OPTION = `  --path PATH_AND_QUERY  the request path and query exactly as sent, without scheme
                         and host, e.g. '/api/transaction?a=b%20c' (required)`;
const STRIP_OPTION = '  --strip-newline        drop one trailing newline ("\\n") from the body';
const SIGNATURE_OPTION = `  --signature SIG        the signature to check: 44 characters of standard base64
                         ending in '=' (required)`;
const STATUS_OPTIONS = `  --id ID                the transaction id (required)
  --status STATUS        the status as sent: PENDING, SUCCESS, FAILURE or CANCELLED
                         (required)`;

const WEB_RECIPE = 'base64(SHA-256(body + pathAndQuery + privateKey))';
const SDK_RECIPE = 'base64(SHA-256(body + privateKey))';
const STATUS_RECIPE = 'base64(SHA-256(transactionId + "|" + status + privateKey))';

const BODY_OPTIONS = { 'strip-newline': { type: 'boolean' }, 'key-file': { type: 'string' } } as const;

function help(lines: string[]): string {
  return `${lines.join('\n')}\n`;
}

function printHelp(text: string): number {
  process.stdout.write(text);
  return 0;
}

function requirePath(value: string | undefined, command: string): string {
  const path = requireOption(value, 'path', command);
  if (!path.startsWith('/')) {
    throw new UsageError(
      "--path takes the path and query as sent, starting with '/', without scheme and host (e.g. '/api/transaction?x=1')",
      command,
    );
  }
  return path;
}

function requireNonEmpty(value: string | undefined, name: string, command: string): string {
  const text = requireOption(value, name, command);
  if (text === '') {
    throw new UsageError(`option --${name} must not be empty`, command);
  }
  return text;
}

function report(valid: boolean, signature: string): number {
  if (valid) {
    process.stdout.write('valid\n');
    return 0;
  }
  process.stderr.write(
    SIGNATURE_PATTERN.test(signature)
      ? 'invalid\n'
      : "invalid (the signature is not 44 characters of standard base64 ending in '=')\n",
  );
  return 1;
}

const signWeb: Command = {
  summary: 'web-initiated flow requests',
  async run(argv) {
    const command = 'paylater sign web';
    const line = parseCommandLine(argv, {
      command,
      options: { path: { type: 'string' }, ...BODY_OPTIONS },
      maxPositionals: 1,
    });
    if (line.help) {
      return printHelp(
        help([
          `Usage: ${command} --path PATH_AND_QUERY [--strip-newline] [--key-file FILE] [FILE|-]`,
          '',
          'Print the signature of a web-initiated flow request (X-Signature):',
          `  ${WEB_RECIPE}`,
          '',
          'Options:',
          PATH_OPTION,
          STRIP_OPTION,
          KEY_OPTION,
          HELP_OPTION,
          '',
          BODY_NOTE,
          '',
          KEY_NOTE,
          '',
          'Example:',
          `  printf '%s' '{"id":"txn_001"}' | ${command} --path '/api/transaction'`,
        ]),
      );
    }
    const path = requirePath(line.values.path, command);
    const key = await readPrivateKey(line.values['key-file']);
    const body = await readBody(line.positionals[0], {
      stripNewline: line.values['strip-newline'] === true,
      command,
    });
    process.stdout.write(`${webSignature(body, path, key)}\n`);
    return 0;
  },
};

const signSdk: Command = {
  summary: 'SDK-flow requests and webhooks; gateway webhooks',
  async run(argv) {
    const command = 'paylater sign sdk';
    const line = parseCommandLine(argv, { command, options: BODY_OPTIONS, maxPositionals: 1 });
    if (line.help) {
      return printHelp(
        help([
          `Usage: ${command} [--strip-newline] [--key-file FILE] [FILE|-]`,
          '',
          'Print the signature of an SDK-flow request or webhook, or of a gateway webhook',
          "(whose key is the merchant's Transactional API password):",
          `  ${SDK_RECIPE}`,
          '',
          'Options:',
          STRIP_OPTION,
          KEY_OPTION,
          HELP_OPTION,
          '',
          BODY_NOTE,
          '',
          KEY_NOTE,
          '',
          'Example:',
          `  ${command} --key-file merchant.key webhook-body.json`,
        ]),
      );
    }
    const key = await readPrivateKey(line.values['key-file']);
    const body = await readBody(line.positionals[0], {
      stripNewline: line.values['strip-newline'] === true,
      command,
    });
    process.stdout.write(`${sdkSignature(body, key)}\n`);
    return 0;
  },
};

const signStatus: Command = {
  summary: 'browser callbacks, web status-check answer, web webhook',
  async run(argv) {
    const command = 'paylater sign status';
    const line = parseCommandLine(argv, {
      command,
      options: { id: { type: 'string' }, status: { type: 'string' }, 'key-file': { type: 'string' } },
      maxPositionals: 0,
    });
    if (line.help) {
      return printHelp(
        help([
          `Usage: ${command} --id ID --status STATUS [--key-file FILE]`,
          '',
          'Print the status signature carried by the browser callbacks, the web status-check',
          'answer and the web webhook:',
          `  ${STATUS_RECIPE}`,
          '',
          'Options:',
          STATUS_OPTIONS,
          KEY_OPTION,
          HELP_OPTION,
          '',
          KEY_NOTE,
          '',
          'Example:',
          `  ${command} --id txn_001 --status SUCCESS`,
        ]),
      );
    }
    const id = requireNonEmpty(line.values.id, 'id', command);
    const status = requireNonEmpty(line.values.status, 'status', command);
    const key = await readPrivateKey(line.values['key-file']);
    process.stdout.write(`${statusSignature(id, status, key)}\n`);
    return 0;
  },
};

const verifyWeb: Command = {
  summary: 'web-initiated flow requests',
  async run(argv) {
    const command = 'paylater verify web';
    const line = parseCommandLine(argv, {
      command,
      options: { path: { type: 'string' }, signature: { type: 'string' }, ...BODY_OPTIONS },
      maxPositionals: 1,
    });
    if (line.help) {
      return printHelp(
        help([
          `Usage: ${command} --path PATH_AND_QUERY --signature SIG [--strip-newline]`,
          '                           [--key-file FILE] [FILE|-]',
          '',
          'Check the signature of a web-initiated flow request:',
          `  ${WEB_RECIPE}`,
          '',
          'Options:',
          PATH_OPTION,
          SIGNATURE_OPTION,
          STRIP_OPTION,
          KEY_OPTION,
          HELP_OPTION,
          '',
          BODY_NOTE,
          '',
          KEY_NOTE,
          '',
          VERIFY_EXIT,
        ]),
      );
    }
    const path = requirePath(line.values.path, command);
    const signature = requireOption(line.values.signature, 'signature', command);
    const key = await readPrivateKey(line.values['key-file']);
    const body = await readBody(line.positionals[0], {
      stripNewline: line.values['strip-newline'] === true,
      command,
    });
    return report(verifyWebSignature(signature, body, path, key), signature);
  },
};

const verifySdk: Command = {
  summary: 'SDK-flow requests and webhooks; gateway webhooks',
  async run(argv) {
    const command = 'paylater verify sdk';
    const line = parseCommandLine(argv, {
      command,
      options: { signature: { type: 'string' }, ...BODY_OPTIONS },
      maxPositionals: 1,
    });
    if (line.help) {
      return printHelp(
        help([
          `Usage: ${command} --signature SIG [--strip-newline] [--key-file FILE] [FILE|-]`,
          '',
          'Check the signature of an SDK-flow request or webhook, or of a gateway webhook',
          "(whose key is the merchant's Transactional API password):",
          `  ${SDK_RECIPE}`,
          '',
          'Options:',
          SIGNATURE_OPTION,
          STRIP_OPTION,
          KEY_OPTION,
          HELP_OPTION,
          '',
          BODY_NOTE,
          '',
          KEY_NOTE,
          '',
          VERIFY_EXIT,
        ]),
      );
    }
    const signature = requireOption(line.values.signature, 'signature', command);
    const key = await readPrivateKey(line.values['key-file']);
    const body = await readBody(line.positionals[0], {
      stripNewline: line.values['strip-newline'] === true,
      command,
    });
    return report(verifySdkSignature(signature, body, key), signature);
  },
};

const verifyStatus: Command = {
  summary: 'browser callbacks, web status-check answer, web webhook',
  async run(argv) {
    const command = 'paylater verify status';
    const line = parseCommandLine(argv, {
      command,
      options: {
        id: { type: 'string' },
        status: { type: 'string' },
        signature: { type: 'string' },
        'key-file': { type: 'string' },
      },
      maxPositionals: 0,
    });
    if (line.help) {
      return printHelp(
        help([
          `Usage: ${command} --id ID --status STATUS --signature SIG [--key-file FILE]`,
          '',
          'Check the status signature of a browser callback, the web status-check answer or',
          'the web webhook:',
          `  ${STATUS_RECIPE}`,
          '',
          'Options:',
          STATUS_OPTIONS,
          SIGNATURE_OPTION,
          KEY_OPTION,
          HELP_OPTION,
          '',
          KEY_NOTE,
          '',
          VERIFY_EXIT,
        ]),
      );
    }
    const id = requireNonEmpty(line.values.id, 'id', command);
    const status = requireNonEmpty(line.values.status, 'status', command);
    const signature = requireOption(line.values.signature, 'signature', command);
    const key = await readPrivateKey(line.values['key-file']);
    return report(verifyStatusSignature(signature, id, status, key), signature);
  },
};

const KINDS_NOTE = `A signature is the standard base64 (with padding, 44 characters ending in '=') of
the raw SHA-256 digest of a concatenation of body bytes and UTF-8 strings that ends
with the private key; the help of each kind shows its recipe.`;

export const signCommand: Command = commandGroup({
  command: 'paylater sign',
  summary: 'print the signature of a request, webhook or status',
  noun: 'kind',
  description: `Print a signature of the pay-later service.\n\n${KINDS_NOTE}`,
  subcommands: { web: signWeb, sdk: signSdk, status: signStatus },
});

export const verifyCommand: Command = commandGroup({
  command: 'paylater verify',
  summary: 'check a signature (exit 0 when valid, 1 when not)',
  noun: 'kind',
  description: `Check a signature of the pay-later service, in constant time.\n\n${KINDS_NOTE}`,
  subcommands: { web: verifyWeb, sdk: verifySdk, status: verifyStatus },
});
