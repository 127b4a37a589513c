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
const STATUS_RECIPE = 'base64(SHA-256(transactionId + status + privateKey))';

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

/** What one kind of signature needs: its inputs, how to read them, and its primitive. */
interface Kind<Inputs> {
  summary: string;
  /** The first lines of the help: what is signed, ending with a colon before the recipe. */
  signs: string;
  checks: string;
  recipe: string;
  /** The usage line: the kind's required options, then the optional ones. */
  usage: [required: string, optional: string];
  options: Record<string, { type: 'string' | 'boolean' }>;
  optionHelp: string[];
  takesBody: boolean;
  example: (command: string) => string;
  /** Checks and takes the kind's options (the body, when it has one, is read later). */
  parse(values: Values, command: string): Inputs;
  sign(inputs: Inputs, body: Buffer, key: string): string;
  verify(signature: string, inputs: Inputs, body: Buffer, key: string): boolean;
}

type Values = Record<string, string | boolean | undefined>;

const stringValue = (value: string | boolean | undefined) => (typeof value === 'string' ? value : undefined);

const web: Kind<{ path: string }> = {
  summary: 'web-initiated flow requests',
  signs: 'Print the signature of a web-initiated flow request (X-Signature):',
  checks: 'Check the signature of a web-initiated flow request:',
  recipe: WEB_RECIPE,
  usage: ['--path PATH_AND_QUERY', '[--strip-newline] [--key-file FILE] [FILE|-]'],
  options: { path: { type: 'string' }, ...BODY_OPTIONS },
  optionHelp: [PATH_OPTION, STRIP_OPTION],
  takesBody: true,
  example: (command) => `printf '%s' '{"id":"txn_001"}' | ${command} --path '/api/transaction'`,
  parse: (values, command) => ({ path: requirePath(stringValue(values.path), command) }),
  sign: ({ path }, body, key) => webSignature(body, path, key),
  verify: (signature, { path }, body, key) => verifyWebSignature(signature, body, path, key),
};

const sdk: Kind<Record<string, never>> = {
  summary: 'SDK-flow requests and webhooks; gateway webhooks',
  signs: "Print the signature of an SDK-flow request or webhook, or of a gateway webhook\n(whose key is the merchant's Transactional API password):",
  checks: "Check the signature of an SDK-flow request or webhook, or of a gateway webhook\n(whose key is the merchant's Transactional API password):",
  recipe: SDK_RECIPE,
  usage: ['', '[--strip-newline] [--key-file FILE] [FILE|-]'],
  options: BODY_OPTIONS,
  optionHelp: [STRIP_OPTION],
  takesBody: true,
  example: (command) => `${command} --key-file merchant.key webhook-body.json`,
  parse: () => ({}),
  sign: (_inputs, body, key) => sdkSignature(body, key),
  verify: (signature, _inputs, body, key) => verifySdkSignature(signature, body, key),
};

const status: Kind<{ id: string; status: string }> = {
  summary: 'browser callbacks, web status-check answer, web webhook',
  signs: 'Print the status signature carried by the browser callbacks, the web status-check\nanswer and the web webhook:',
  checks: 'Check the status signature of a browser callback, the web status-check answer or\nthe web webhook:',
  recipe: STATUS_RECIPE,
  usage: ['--id ID --status STATUS', '[--key-file FILE]'],
  options: { id: { type: 'string' }, status: { type: 'string' }, 'key-file': { type: 'string' } },
  optionHelp: [STATUS_OPTIONS],
  takesBody: false,
  example: (command) => `${command} --id txn_001 --status SUCCESS`,
  parse: (values, command) => ({
    id: requireNonEmpty(stringValue(values.id), 'id', command),
    status: requireNonEmpty(stringValue(values.status), 'status', command),
  }),
  sign: (inputs, _body, key) => statusSignature(inputs.id, inputs.status, key),
  verify: (signature, inputs, _body, key) => verifyStatusSignature(signature, inputs.id, inputs.status, key),
};

const usageLine = (command: string, ...parts: string[]) => ['Usage:', command, ...parts.filter((part) => part !== '')].join(' ');

const NO_BODY = Buffer.alloc(0);

/** The body from FILE or standard input, for the kinds that sign one. */
function bodyOf(kind: Kind<unknown>, positionals: string[], values: Values, command: string): Promise<Buffer> {
  if (!kind.takesBody) return Promise.resolve(NO_BODY);
  return readBody(positionals[0], { stripNewline: values['strip-newline'] === true, command });
}

/** `paylater sign <kind>`: prints the signature of the inputs. */
function signFor<Inputs>(name: string, kind: Kind<Inputs>): Command {
  const command = `paylater sign ${name}`;
  return {
    summary: kind.summary,
    async run(argv) {
      const line = parseCommandLine(argv, { command, options: kind.options, maxPositionals: kind.takesBody ? 1 : 0 });
      if (line.help) {
        return printHelp(
          help([
            usageLine(command, kind.usage[0], kind.usage[1]),
            '',
            kind.signs,
            `  ${kind.recipe}`,
            '',
            'Options:',
            ...kind.optionHelp,
            KEY_OPTION,
            HELP_OPTION,
            '',
            ...(kind.takesBody ? [BODY_NOTE, ''] : []),
            KEY_NOTE,
            '',
            'Example:',
            `  ${kind.example(command)}`,
          ]),
        );
      }
      const values: Values = line.values;
      const inputs = kind.parse(values, command);
      const key = await readPrivateKey(stringValue(values['key-file']));
      const body = await bodyOf(kind, line.positionals, values, command);
      process.stdout.write(`${kind.sign(inputs, body, key)}\n`);
      return 0;
    },
  };
}

/** `paylater verify <kind>`: exit 0 when `--signature` is the signature of the inputs, 1 when not. */
function verifyFor<Inputs>(name: string, kind: Kind<Inputs>): Command {
  const command = `paylater verify ${name}`;
  return {
    summary: kind.summary,
    async run(argv) {
      const line = parseCommandLine(argv, {
        command,
        options: { signature: { type: 'string' }, ...kind.options },
        maxPositionals: kind.takesBody ? 1 : 0,
      });
      if (line.help) {
        return printHelp(
          help([
            usageLine(command, kind.usage[0], '--signature SIG', kind.usage[1]),
            '',
            kind.checks,
            `  ${kind.recipe}`,
            '',
            'Options:',
            ...kind.optionHelp,
            SIGNATURE_OPTION,
            KEY_OPTION,
            HELP_OPTION,
            '',
            ...(kind.takesBody ? [BODY_NOTE, ''] : []),
            KEY_NOTE,
            '',
            VERIFY_EXIT,
          ]),
        );
      }
      const values: Values = line.values;
      const inputs = kind.parse(values, command);
      const signature = requireOption(stringValue(values.signature), 'signature', command);
      const key = await readPrivateKey(stringValue(values['key-file']));
      const body = await bodyOf(kind, line.positionals, values, command);
      return report(kind.verify(signature, inputs, body, key), signature);
    },
  };
}

const KINDS_NOTE = `A signature is the standard base64 (with padding, 44 characters ending in '=') of
the raw SHA-256 digest of a concatenation of body bytes and UTF-8 strings that ends
with the private key; the help of each kind shows its recipe.`;

export const signCommand: Command = commandGroup({
  command: 'paylater sign',
  summary: 'print the signature of a request, webhook or status',
  noun: 'kind',
  description: `Print a signature of the pay-later service.\n\n${KINDS_NOTE}`,
  subcommands: { web: signFor('web', web), sdk: signFor('sdk', sdk), status: signFor('status', status) },
});

export const verifyCommand: Command = commandGroup({
  command: 'paylater verify',
  summary: 'check a signature (exit 0 when valid, 1 when not)',
  noun: 'kind',
  description: `Check a signature of the pay-later service, in constant time.\n\n${KINDS_NOTE}`,
  subcommands: { web: verifyFor('web', web), sdk: verifyFor('sdk', sdk), status: verifyFor('status', status) },
});
