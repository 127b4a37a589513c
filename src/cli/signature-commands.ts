/**
 * `paylater sign` and `paylater verify`: compute and check the signatures of the service (web, sdk,
 * status and gateway kinds) with the primitives of `../signature.ts`. Each kind is one entry of a
 * table: its inputs, how to read them, its recipe and its primitive; `sign <kind>` and
 * `verify <kind>` are built from the same entry.
 */
import type { Command as Commander } from 'commander';
import {
  SIGNATURE_PATTERN,
  sdkSignature,
  statusSignature,
  verifySdkSignature,
  verifyStatusSignature,
  verifyWebSignature,
  webSignature,
} from '../signature.js';
import { requireOption, stringOption, UsageError, type OptionSpec, type OptionValues, type Program } from './command-line.js';
import { PRIVATE_KEY, readBody, readPrivateKey, type SecretSource } from './input.js';
import { webTransactionStatuses } from './package-data.js';

/** The gateway webhook's secret: the merchant's Transactional API password. */
const TRANSACTIONAL_PASSWORD: SecretSource = {
  variable: 'PAYLATER_TRANSACTIONAL_PASSWORD',
  what: 'Transactional API password',
};

const BODY_NOTE = `The body is read from FILE, or from standard input when FILE is '-' or absent, and
is used byte for byte: nothing is trimmed or re-encoded. 'echo' adds a newline that
becomes part of the body; use printf or echo -n, or --strip-newline to drop one
trailing newline. (A file named '-' is ./-.) A body is at most 1 MiB, the sandbox's
request body limit: reading stops there with an error.`;

const keyNote = (source: SecretSource) => `The ${source.what} is the content of the --key-file FILE (one trailing newline is
ignored), else the ${source.variable} environment variable. It is never taken
from the command line and never printed. A key file is at most 64 KiB.`;

const VERIFY_EXIT = `Exit status: 0, printing 'valid' on standard output, when the signature matches;
1, printing 'invalid' on standard error, when it does not; 2 on a usage error, an
unreadable file or a missing key.`;

const KEY_OPTION: OptionSpec = { flags: '--key-file <FILE>', description: 'read the key from FILE' };
const PATH_OPTION: OptionSpec = {
  flags: '--path <PATH_AND_QUERY>',
  description: "the request path and query exactly as sent, without scheme and host, e.g. '/api/transaction?a=b%20c' (required)",
};
const STRIP_OPTION: OptionSpec = { flags: '--strip-newline', description: 'drop one trailing newline ("\\n") from the body' };
const SIGNATURE_OPTION: OptionSpec = {
  flags: '--signature <SIG>',
  description: "the signature to check: 44 characters of standard base64 ending in '=' (required)",
};

const WEB_RECIPE = 'base64(SHA-256(body + pathAndQuery + privateKey))';
const SDK_RECIPE = 'base64(SHA-256(body + privateKey))';
const GATEWAY_RECIPE = 'base64(SHA-256(body + transactionalApiPassword))';
const STATUS_RECIPE = 'base64(SHA-256(transactionId + status + privateKey))';

/** What one kind of signature needs: its inputs, how to read them, and its primitive. */
interface Kind<Inputs> {
  summary: string;
  /** What is signed, for the help of `sign`. */
  signs: string;
  /** What is checked, for the help of `verify`. */
  checks: string;
  recipe: string;
  /** The usage after the command: the kind's required options, then the optional ones. */
  usage: [required: string, optional: string];
  options: OptionSpec[];
  takesBody: boolean;
  /** Where the key comes from. */
  secret: SecretSource;
  /** More lines for the help (computed only when help is shown). */
  notes?: () => string;
  example: (command: string) => string;
  /** Checks and takes the kind's options (the body, when it has one, is read later). */
  parse(values: OptionValues, command: string): Inputs;
  sign(inputs: Inputs, body: Buffer, key: string): string;
  verify(signature: string, inputs: Inputs, body: Buffer, key: string): boolean;
}

function requirePath(value: string | boolean | undefined, command: string): string {
  const path = requireOption(value, 'path', command);
  if (!path.startsWith('/')) {
    throw new UsageError(
      "--path takes the path and query as sent, starting with '/', without scheme and host (e.g. '/api/transaction?x=1')",
      command,
    );
  }
  return path;
}

function requireNonEmpty(value: string | boolean | undefined, name: string, command: string): string {
  const text = requireOption(value, name, command);
  if (text === '') {
    throw new UsageError(`option --${name} must not be empty`, command);
  }
  return text;
}

/** A status of the contract (generated/openapi/web.json), or a usage error listing them. */
function requireStatus(value: string | boolean | undefined, command: string): string {
  const status = requireNonEmpty(value, 'status', command);
  const statuses = webTransactionStatuses();
  if ((statuses as readonly string[]).includes(status)) return status;
  const sameLetters = statuses.find((candidate) => candidate.toLowerCase() === status.toLowerCase());
  throw new UsageError(
    `--status must be one of the contract's statuses ${statuses.join(', ')} (WebTransactionStatus)` +
      (sameLetters === undefined ? '' : `; did you mean ${sameLetters}? Statuses are case-sensitive`),
    command,
  );
}

const BODY_OPTIONS = [STRIP_OPTION, KEY_OPTION];

const web: Kind<{ path: string }> = {
  summary: 'web-initiated flow requests',
  signs: 'Print the signature of a web-initiated flow request (X-Signature):',
  checks: 'Check the signature of a web-initiated flow request:',
  recipe: WEB_RECIPE,
  usage: ['--path PATH_AND_QUERY', '[--strip-newline] [--key-file FILE] [FILE|-]'],
  options: [PATH_OPTION, ...BODY_OPTIONS],
  takesBody: true,
  secret: PRIVATE_KEY,
  example: (command) => `printf '%s' '{"id":"txn_001"}' | ${command} --path '/api/transaction'`,
  parse: (values, command) => ({ path: requirePath(values.path, command) }),
  sign: ({ path }, body, key) => webSignature(body, path, key),
  verify: (signature, { path }, body, key) => verifyWebSignature(signature, body, path, key),
};

const sdk: Kind<Record<string, never>> = {
  summary: 'SDK-flow requests and webhooks (X-Signature)',
  signs: 'Print the signature of an SDK-flow request or webhook (X-Signature):',
  checks: 'Check the signature of an SDK-flow request or webhook (X-Signature):',
  recipe: SDK_RECIPE,
  usage: ['', '[--strip-newline] [--key-file FILE] [FILE|-]'],
  options: BODY_OPTIONS,
  takesBody: true,
  secret: PRIVATE_KEY,
  example: (command) => `${command} --key-file partner.key webhook-body.json`,
  parse: () => ({}),
  sign: (_inputs, body, key) => sdkSignature(body, key),
  verify: (signature, _inputs, body, key) => verifySdkSignature(signature, body, key),
};

const gateway: Kind<Record<string, never>> = {
  summary: "gateway webhooks (key: the merchant's Transactional API password)",
  signs: "Print the X-Signature of a gateway webhook (transactionUpdated, refundUpdated), keyed with the merchant's Transactional API password:",
  checks: "Check the X-Signature of a gateway webhook (transactionUpdated, refundUpdated), keyed with the merchant's Transactional API password:",
  recipe: GATEWAY_RECIPE,
  usage: ['', '[--strip-newline] [--key-file FILE] [FILE|-]'],
  options: BODY_OPTIONS,
  takesBody: true,
  secret: TRANSACTIONAL_PASSWORD,
  notes: () =>
    "The password is the merchant's merchant.basicAuthDetails.password, issued when it\nbecomes enabled; in the sandbox, read it with GET /api/merchant/{id}.",
  example: (command) => `${command} --key-file merchant.password webhook-body.json`,
  parse: () => ({}),
  sign: (_inputs, body, key) => sdkSignature(body, key),
  verify: (signature, _inputs, body, key) => verifySdkSignature(signature, body, key),
};

const status: Kind<{ id: string; status: string }> = {
  summary: 'browser callbacks, web status-check answer, web webhook body',
  signs: 'Print the status signature carried by the browser callbacks, the web status-check answer and the web webhook:',
  checks: 'Check the status signature of a browser callback, the web status-check answer or the web webhook:',
  recipe: STATUS_RECIPE,
  usage: ['--id ID --status STATUS', '[--key-file FILE]'],
  options: [
    { flags: '--id <ID>', description: 'the transaction id (required)' },
    { flags: '--status <STATUS>', description: 'the status as sent (required; see below)' },
    KEY_OPTION,
  ],
  takesBody: false,
  secret: PRIVATE_KEY,
  notes: () => `STATUS is one of the contract's statuses: ${webTransactionStatuses().join(', ')}.`,
  example: (command) => `${command} --id txn_001 --status SUCCESS`,
  parse: (values, command) => ({
    id: requireNonEmpty(values.id, 'id', command),
    status: requireStatus(values.status, command),
  }),
  sign: (inputs, _body, key) => statusSignature(inputs.id, inputs.status, key),
  verify: (signature, inputs, _body, key) => verifyStatusSignature(signature, inputs.id, inputs.status, key),
};

const KINDS: Record<string, Kind<never>> = {
  web: web as Kind<never>,
  sdk: sdk as Kind<never>,
  status: status as Kind<never>,
  gateway: gateway as Kind<never>,
};

const usageOf = (...parts: string[]) => parts.filter((part) => part !== '').join(' ');

const NO_BODY = Buffer.alloc(0);

/** The body from FILE or standard input, for the kinds that sign one. */
function bodyOf(kind: Kind<never>, args: string[], values: OptionValues, command: string): Promise<Buffer> {
  if (!kind.takesBody) return Promise.resolve(NO_BODY);
  return readBody(args[0], { stripNewline: values['strip-newline'] === true, command });
}

function helpAfter(kind: Kind<never>, command: string, last: string): () => string {
  return () =>
    [
      ...(kind.notes === undefined ? [] : [kind.notes(), '']),
      ...(kind.takesBody ? [BODY_NOTE, ''] : []),
      keyNote(kind.secret),
      '',
      last.replace('{command}', command),
    ].join('\n');
}

/**
 * What to say when a body that ends with a newline does not verify: whether it would without the
 * newline (the usual cause: an editor or `echo` added it), else that the newline is signed too.
 */
function newlineHint(kind: Kind<never>, signature: string, inputs: never, body: Buffer, key: string, stripped: boolean): string {
  if (!kind.takesBody || stripped || body.at(-1) !== 0x0a || !SIGNATURE_PATTERN.test(signature)) return '';
  const withoutNewline = body.subarray(0, -1);
  if (kind.verify(signature, inputs, withoutNewline, key)) {
    return 'hint: the body ends with a newline, and the signature matches the body without it: signatures\n' +
      'cover the exact bytes, so something (an editor, echo, a heredoc) added that newline. Send the body\n' +
      'without it, or pass --strip-newline to check the body without its last newline.\n';
  }
  return 'hint: the body ends with a newline, which is part of the signed bytes: check that the sender\n' +
    'signed it too (printf or echo -n write a body without one; --strip-newline drops one here).\n';
}

function report(valid: boolean, signature: string, hint: string): number {
  if (valid) {
    process.stdout.write('valid\n');
    return 0;
  }
  process.stderr.write(
    (SIGNATURE_PATTERN.test(signature)
      ? 'invalid\n'
      : "invalid (the signature is not 44 characters of standard base64 ending in '=')\n") + hint,
  );
  return 1;
}

const KINDS_NOTE = `A signature is the standard base64 (with padding, 44 characters ending in '=') of
the raw SHA-256 digest of a concatenation of body bytes and UTF-8 strings that ends
with the key; the help of each kind shows its recipe.`;

/** Adds `paylater sign <kind>` and `paylater verify <kind>`. */
export function registerSignatureCommands(program: Program): void {
  const sign = program.group(program.root, {
    name: 'sign',
    summary: 'print the signature of a request, webhook or status',
    noun: 'kind',
    description: 'Print a signature of the pay-later service.',
    after: KINDS_NOTE,
  });
  const verify = program.group(program.root, {
    name: 'verify',
    summary: 'check a signature (exit 0 when valid, 1 when not)',
    noun: 'kind',
    description: 'Check a signature of the pay-later service, in constant time.',
    after: KINDS_NOTE,
  });
  for (const [name, kind] of Object.entries(KINDS)) {
    addSign(program, sign, name, kind);
    addVerify(program, verify, name, kind);
  }
}

function addSign(program: Program, parent: Commander, name: string, kind: Kind<never>): void {
  program.leaf(parent, {
    name,
    summary: kind.summary,
    usage: usageOf(kind.usage[0], kind.usage[1]),
    description: `${kind.signs}\n  ${kind.recipe}`,
    options: kind.options,
    arguments: kind.takesBody ? ['[FILE]'] : [],
    after: helpAfter(kind, `paylater sign ${name}`, `Example:\n  ${kind.example(`paylater sign ${name}`)}`),
    async run({ command, args, options }) {
      const inputs = kind.parse(options, command);
      const key = await readPrivateKey(stringOption(options['key-file']), kind.secret);
      const body = await bodyOf(kind, args, options, command);
      process.stdout.write(`${kind.sign(inputs, body, key)}\n`);
      return 0;
    },
  });
}

function addVerify(program: Program, parent: Commander, name: string, kind: Kind<never>): void {
  program.leaf(parent, {
    name,
    summary: kind.summary,
    usage: usageOf(kind.usage[0], '--signature SIG', kind.usage[1]),
    description: `${kind.checks}\n  ${kind.recipe}`,
    // The kind's own options, then --signature, then the body and key options.
    options: [
      ...kind.options.filter((option) => !BODY_OPTIONS.includes(option)),
      SIGNATURE_OPTION,
      ...kind.options.filter((option) => BODY_OPTIONS.includes(option)),
    ],
    arguments: kind.takesBody ? ['[FILE]'] : [],
    after: helpAfter(kind, `paylater verify ${name}`, VERIFY_EXIT),
    async run({ command, args, options }) {
      const inputs = kind.parse(options, command);
      const signature = requireOption(options.signature, 'signature', command);
      const key = await readPrivateKey(stringOption(options['key-file']), kind.secret);
      const body = await bodyOf(kind, args, options, command);
      const valid = kind.verify(signature, inputs, body, key);
      const hint = valid ? '' : newlineHint(kind, signature, inputs, body, key, options['strip-newline'] === true);
      return report(valid, signature, hint);
    },
  });
}
