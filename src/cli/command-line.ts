/**
 * The building blocks of the `paylater` command line: the command interface, option parsing with
 * clear messages (`node:util` parseArgs), command groups and error reporting.
 */
import { parseArgs } from 'node:util';

/** One command of the command line; `argv` holds the arguments after the command's name. */
export interface Command {
  /** One line for the list of commands in the help of the parent. */
  summary: string;
  /** Runs the command and resolves to the process exit code. */
  run(argv: string[]): Promise<number>;
}

/** An error the user can fix; reported as one line without a stack trace, exit code 2. */
export class CliError extends Error {
  override name = 'CliError';
  readonly exitCode: number = 2;
}

/** A mistake in the command line; reported with a hint to the help of `command`. */
export class UsageError extends CliError {
  override name = 'UsageError';

  constructor(
    message: string,
    /** The full command whose help explains the usage, e.g. `paylater sign web`. */
    readonly command: string,
  ) {
    super(message);
  }
}

export interface OptionSpec {
  type: 'string' | 'boolean';
}

export type OptionValues<O extends Record<string, OptionSpec>> = {
  [K in keyof O]?: O[K]['type'] extends 'string' ? string : boolean;
};

export type CommandLine<O extends Record<string, OptionSpec>> =
  | { help: true }
  | { help: false; values: OptionValues<O>; positionals: string[] };

/**
 * Parses the arguments of a command. `-h`/`--help` anywhere before `--` asks for help. Every
 * other mistake (an unknown option, a missing or unexpected value, an option given twice, too
 * many arguments) is a {@link UsageError}. Messages name options but never echo their values,
 * since a value might be a secret typed by mistake.
 */
export function parseCommandLine<const O extends Record<string, OptionSpec>>(
  argv: string[],
  spec: { command: string; options: O; maxPositionals: number },
): CommandLine<O> {
  const { command, options, maxPositionals } = spec;
  const { tokens } = parseArgs({
    args: argv,
    options: { ...options, help: { type: 'boolean', short: 'h' } },
    strict: false,
    allowPositionals: true,
    tokens: true,
  });

  if (tokens.some((token) => token.kind === 'option' && token.name === 'help')) {
    return { help: true };
  }

  const values: Record<string, string | boolean> = {};
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') {
      positionals.push(token.value);
      continue;
    }
    if (token.kind !== 'option') continue;

    const option = Object.hasOwn(options, token.name) ? options[token.name] : undefined;
    if (option === undefined) {
      throw new UsageError(unknownOptionMessage(token.rawName), command);
    }
    if (Object.hasOwn(values, token.name)) {
      throw new UsageError(`option ${token.rawName} is given more than once`, command);
    }
    if (option.type === 'boolean') {
      if (token.value !== undefined) {
        throw new UsageError(`option ${token.rawName} takes no value`, command);
      }
      values[token.name] = true;
    } else {
      if (token.value === undefined) {
        throw new UsageError(`option ${token.rawName} needs a value`, command);
      }
      if (!token.inlineValue && token.value.startsWith('-') && token.value !== '-') {
        throw new UsageError(
          `option ${token.rawName} needs a value (write ${token.rawName}=VALUE for a value that starts with '-')`,
          command,
        );
      }
      values[token.name] = token.value;
    }
  }

  if (positionals.length > maxPositionals) {
    throw new UsageError(
      maxPositionals === 0
        ? 'this command takes no arguments besides its options'
        : `too many arguments: expected at most ${maxPositionals}`,
      command,
    );
  }
  return { help: false, values: values as OptionValues<O>, positionals };
}

function unknownOptionMessage(rawName: string): string {
  if (/key/i.test(rawName)) {
    return `unknown option ${rawName}: the private key is never taken from the command line; set PAYLATER_PRIVATE_KEY or use --key-file FILE`;
  }
  return `unknown option ${rawName}`;
}

/** The value of a required string option, or a {@link UsageError} naming it. */
export function requireOption(value: string | undefined, name: string, command: string): string {
  if (value === undefined) {
    throw new UsageError(`missing option --${name}`, command);
  }
  return value;
}

/**
 * A command made of named subcommands (`paylater sign web`). `--help` prints `description`
 * followed by the list of subcommands and their summaries.
 */
export function commandGroup(spec: {
  /** The full command, e.g. `paylater sign`. */
  command: string;
  summary: string;
  /** What the subcommands are called in messages and help, e.g. `kind`. */
  noun: string;
  description: string;
  subcommands: Record<string, Command>;
}): Command {
  const { command, summary, noun, description, subcommands } = spec;
  const names = Object.keys(subcommands);
  const placeholder = `<${noun}>`;
  const width = Math.max(...names.map((name) => name.length));
  const help = [
    `Usage: ${command} ${placeholder} [options]`,
    '',
    description,
    '',
    `${noun[0]?.toUpperCase()}${noun.slice(1)}s:`,
    ...names.map((name) => `  ${name.padEnd(width)}  ${subcommands[name]?.summary ?? ''}`),
    '',
    'Options:',
    '  -h, --help  show this help',
    '',
    `Run '${command} ${placeholder} --help' for the options of a ${noun}.`,
    '',
  ].join('\n');

  return {
    summary,
    async run(argv) {
      const [first, ...rest] = argv;
      if (first === undefined) {
        throw new UsageError(`missing ${noun} (one of: ${names.join(', ')})`, command);
      }
      if (first === '-h' || first === '--help') {
        process.stdout.write(help);
        return 0;
      }
      if (first.startsWith('-')) {
        throw new UsageError(unknownOptionMessage(first.split('=', 1)[0] ?? first), command);
      }
      const subcommand = Object.hasOwn(subcommands, first) ? subcommands[first] : undefined;
      if (subcommand === undefined) {
        throw new UsageError(`unknown ${noun} '${first}' (one of: ${names.join(', ')})`, command);
      }
      return subcommand.run(rest);
    },
  };
}

/**
 * Reports an error on standard error and returns the exit code. A {@link CliError} is one line
 * (plus a hint to the help for a {@link UsageError}); anything else is a fault of the program and
 * is reported with its stack.
 */
export function reportError(error: unknown): number {
  if (error instanceof UsageError) {
    process.stderr.write(
      `${error.command}: ${error.message}\nRun '${error.command} --help' for usage.\n`,
    );
    return error.exitCode;
  }
  if (error instanceof CliError) {
    process.stderr.write(`paylater: ${error.message}\n`);
    return error.exitCode;
  }
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`paylater: internal error: ${detail}\n`);
  return 70;
}
