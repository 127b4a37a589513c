/**
 * The building blocks of the `paylater` command line.
 *
 * Parsing, help, `--version` and "did you mean" suggestions come from commander (pinned in
 * package.json). This module puts a thin layer on top of it so that every command behaves the same:
 *
 * - every mistake is a {@link UsageError}: one line `<command>: <message>` on standard error, a hint
 *   to `<command> --help`, exit code 2, nothing on standard output;
 * - messages name options but never echo their values, since a value might be a secret typed by
 *   mistake (commander's own messages quote the whole argument, `--key=...` included, so they are
 *   rewritten here and never printed as they are);
 * - an option given twice, or a value that looks like the next option (`--path --strip-newline`), is
 *   refused instead of silently taken;
 * - `-h`/`--help` anywhere before `--` wins over every other argument, and help goes to standard
 *   output with exit code 0.
 *
 * `parseCommandLine` (node:util parseArgs) stays for `paylater sandbox`, whose options are parsed by
 * `runSandbox` itself (sandbox-command.ts), which tests call directly; it follows the same rules.
 */
import { parseArgs } from 'node:util';
import { Command as Commander, CommanderError, Option } from 'commander';

/** An error the user can fix; reported as one line without a stack trace, exit code 2. */
export class CliError extends Error {
  override name = 'CliError';
  readonly exitCode: number = 2;
}

/** Something that failed while running (the sandbox cannot be reached, ...): exit code 1. */
export class CommandFailed extends CliError {
  override name = 'CommandFailed';
  override readonly exitCode: number = 1;
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

// ---------------------------------------------------------------------------------------------
// The commander layer

export type OptionValues = Record<string, string | boolean | undefined>;

/** What a command's `run` receives. */
export interface Invocation {
  /** The full command, e.g. `paylater sign web`. */
  command: string;
  /** The positional arguments. */
  args: string[];
  /** The options given, by their long name (`strip-newline`, not camel case). */
  options: OptionValues;
}

export interface OptionSpec {
  /** commander flags, e.g. `--path <PATH_AND_QUERY>` or `--strip-newline`. */
  flags: string;
  description: string;
}

export interface LeafSpec {
  name: string;
  /** One line for the list of commands in the parent's help. */
  summary: string;
  /** The usage after the command's name, e.g. `--path PATH_AND_QUERY [FILE|-]`. */
  usage: string;
  /** The first paragraph of the help. */
  description: string;
  options?: OptionSpec[];
  /** Positional arguments in commander's syntax (`[file]`, `<event>`, `[command...]`). */
  arguments?: string[];
  /** Text after the options in the help (notes, examples); a function is called only for the help. */
  after?: string | (() => string);
  /**
   * Every argument is handed to `run` untouched, `--help` included: the command parses its own
   * (`paylater sandbox`).
   */
  passThrough?: boolean;
  run(invocation: Invocation): Promise<number>;
}

export interface GroupSpec {
  name: string;
  summary: string;
  /** What the subcommands are called in messages and help, e.g. `kind`. */
  noun: string;
  description: string;
  after?: string | (() => string);
  /** A `--list` option that prints `print()` and exits 0. */
  list?: { description: string; print(): string };
}

interface Meta {
  /** The full command, e.g. `paylater sign`. */
  path: string;
  /** For a group: what its subcommands are called. */
  noun?: string;
  /** Problems found while parsing, reported once commander is done (so that help still wins). */
  problems: UsageError[];
}

/** Thrown by `exitOverride`: commander's error and the command it came from. */
class Stop extends Error {
  constructor(
    readonly error: CommanderError,
    readonly command: Commander,
  ) {
    super(error.message);
  }
}

/** Thrown by a `--list` option once the list is printed. */
class Done extends Error {}

/**
 * A program of commands. Build the tree with {@link Program.group} and {@link Program.leaf}, then
 * `await program.run(argv)` resolves to the exit code (errors are thrown, see {@link reportError}).
 */
export class Program {
  readonly root: Commander;
  private readonly meta = new WeakMap<Commander, Meta>();
  private exitCode = 0;
  private argv: readonly string[] = [];

  constructor(spec: { name: string; version: string; description: string; after?: string }) {
    const root = new Commander(spec.name);
    root
      .version(spec.version, '-V, --version', 'print the version and exit')
      .helpOption('-h, --help', 'show this help')
      .usage('<command> [options]')
      .description(spec.description)
      .enablePositionalOptions()
      .showSuggestionAfterError(true)
      .configureHelp({ subcommandTerm: (command) => command.name(), sortSubcommands: false })
      .configureOutput({
        writeOut: (text) => void process.stdout.write(text),
        // Errors are reported by reportError(), never in commander's words (they quote values).
        writeErr: () => undefined,
        outputError: () => undefined,
      })
      .commandsGroup('Commands:')
      .helpCommand(false);
    if (spec.after !== undefined) root.addHelpText('after', `\n${spec.after}`);
    this.root = root;
    this.register(root, { path: spec.name, noun: 'command', problems: [] });
  }

  /** A command made of named subcommands (`paylater sign <kind>`). */
  group(parent: Commander, spec: GroupSpec): Commander {
    const command = parent
      .command(spec.name)
      .summary(spec.summary)
      .description(spec.description)
      .usage(`<${spec.noun}> [options]`)
      .commandsGroup(`${spec.noun[0]?.toUpperCase()}${spec.noun.slice(1)}s:`)
      .helpCommand(false);
    const meta: Meta = { path: `${this.pathOf(parent)} ${spec.name}`, noun: spec.noun, problems: [] };
    if (spec.list !== undefined) {
      const { print } = spec.list;
      command.option('--list', spec.list.description);
      command.on('option:list', () => {
        process.stdout.write(print());
        throw new Done();
      });
    }
    const after = spec.after;
    command.addHelpText('after', () => {
      const article = /^[aeiou]/i.test(spec.noun) ? 'an' : 'a';
      const lines = [`\nRun '${meta.path} <${spec.noun}> --help' for the options of ${article} ${spec.noun}.`];
      if (after !== undefined) lines.push('', typeof after === 'function' ? after() : after);
      return lines.join('\n');
    });
    this.register(command, meta);
    return command;
  }

  /** A command that runs. */
  leaf(parent: Commander, spec: LeafSpec): Commander {
    const command = parent.command(spec.name).summary(spec.summary).description(spec.description).usage(spec.usage);
    const meta: Meta = { path: `${this.pathOf(parent)} ${spec.name}`, problems: [] };
    this.register(command, meta);
    if (spec.passThrough === true) {
      command.helpOption(false).allowUnknownOption().allowExcessArguments().argument('[arguments...]');
    } else {
      for (const argument of spec.arguments ?? []) command.argument(argument);
      for (const option of spec.options ?? []) this.addOption(command, meta, option);
    }
    const after = spec.after;
    if (after !== undefined) command.addHelpText('after', () => `\n${typeof after === 'function' ? after() : after}`);
    command.action(async () => {
      const [problem] = meta.problems;
      if (problem !== undefined) throw problem;
      this.exitCode = await spec.run({ command: meta.path, args: [...command.args], options: optionsOf(command) });
    });
    return command;
  }

  /** Parses `argv` (the arguments after the program's name) and runs the command; resolves to the exit code. */
  async run(argv: readonly string[]): Promise<number> {
    this.argv = argv;
    try {
      await this.root.parseAsync([...argv], { from: 'user' });
      return this.exitCode;
    } catch (error) {
      if (error instanceof Done) return 0;
      if (error instanceof Stop) return this.translate(error);
      throw error;
    }
  }

  /** The full name of a command of this program, e.g. `paylater sign web`. */
  pathOf(command: Commander): string {
    return this.meta.get(command)?.path ?? command.name();
  }

  private register(command: Commander, meta: Meta): void {
    this.meta.set(command, meta);
    command.exitOverride((error) => {
      throw new Stop(error, command);
    });
  }

  private addOption(command: Commander, meta: Meta, spec: OptionSpec): void {
    const option = new Option(spec.flags, spec.description);
    command.addOption(option);
    const flag = option.long ?? option.short ?? spec.flags;
    let seen = false;
    command.on(`option:${option.name()}`, (value: unknown) => {
      if (seen) meta.problems.push(new UsageError(`option ${flag} is given more than once`, meta.path));
      seen = true;
      // commander takes the next argument as the value even when it is an option.
      if (
        typeof value === 'string' &&
        value.startsWith('-') &&
        value !== '-' &&
        !this.argv.includes(`${flag}=${value}`)
      ) {
        meta.problems.push(
          new UsageError(`option ${flag} needs a value (write ${flag}=VALUE for a value that starts with '-')`, meta.path),
        );
      }
    });
  }

  /** commander's error as this program reports it (or the exit code of help and version). */
  private translate(stop: Stop): number {
    const { error, command } = stop;
    const meta = this.meta.get(command);
    const path = meta?.path ?? command.name();
    switch (error.code) {
      case 'commander.helpDisplayed':
      case 'commander.version':
        return 0;
      case 'commander.help': {
        // Help asked for by `help` with no error, or a group run without a subcommand.
        if (error.exitCode === 0) return 0;
        throw new UsageError(`missing ${meta?.noun ?? 'command'} (one of: ${this.namesOf(command).join(', ')})`, path);
      }
      case 'commander.unknownCommand': {
        const [head = '', suggestion] = error.message.split('\n');
        const name = between(head, "unknown command '", "'");
        const similar = suggested(suggestion);
        const noun = meta?.noun ?? 'command';
        throw new UsageError(
          similar.length > 0
            ? `unknown ${noun} '${name}'. Did you mean ${similar.map((s) => `'${s}'`).join(' or ')}?`
            : `unknown ${noun} '${name}' (one of: ${this.namesOf(command).join(', ')})`,
          path,
        );
      }
      case 'commander.unknownOption': {
        const [head = '', suggestion] = error.message.split('\n');
        const raw = between(head, "unknown option '", "'");
        throw new UsageError(this.unknownOptionMessage(command, raw, suggested(suggestion)), path);
      }
      case 'commander.optionMissingArgument': {
        const flags = between(error.message, "option '", "'");
        const flag = flags.split(/[ ,|]+/).find((part) => part.startsWith('--')) ?? flags;
        throw new UsageError(`option ${flag} needs a value`, path);
      }
      case 'commander.excessArguments': {
        const expected = command.registeredArguments.length;
        throw new UsageError(
          expected === 0 ? 'this command takes no arguments besides its options' : `too many arguments: expected at most ${expected}`,
          path,
        );
      }
      case 'commander.missingArgument': {
        const name = between(error.message, "argument '", "'");
        throw new UsageError(`missing argument ${name.toUpperCase()}`, path);
      }
      default:
        throw new UsageError(error.message.replace(/^error: /, '').split('\n')[0] ?? 'invalid command line', path);
    }
  }

  private unknownOptionMessage(command: Commander, raw: string, similar: string[]): string {
    const name = raw.split('=', 1)[0] ?? raw;
    if (/key/i.test(name)) return keyOptionMessage(name);
    const known = command.options.find((option) => option.long === name || option.short === name);
    if (known !== undefined && raw.includes('=')) return `option ${name} takes no value`;
    // An option of a subcommand written before the subcommand's name.
    const meta = this.meta.get(command);
    if (meta?.noun !== undefined && command.commands.some((sub) => sub.options.some((option) => option.long === name))) {
      return `option ${name} goes after the ${meta.noun}: ${meta.path} <${meta.noun}> ${name} ...`;
    }
    const suggestions = similar.filter((candidate) => candidate !== '--help' || /^--h/.test(name));
    return suggestions.length > 0 ? `unknown option ${name}. Did you mean ${suggestions.join(' or ')}?` : `unknown option ${name}`;
  }

  private namesOf(command: Commander): string[] {
    return command.commands.map((sub) => sub.name());
  }
}

/** The options given, by long name without dashes (commander's own keys are camel case). */
function optionsOf(command: Commander): OptionValues {
  const values = command.opts<Record<string, unknown>>();
  const options: OptionValues = {};
  for (const option of command.options) {
    const value = values[option.attributeName()];
    if (option.long !== undefined && (typeof value === 'string' || typeof value === 'boolean')) {
      options[option.long.replace(/^--/, '')] = value;
    }
  }
  return options;
}

function between(text: string, start: string, end: string): string {
  const from = text.indexOf(start);
  if (from < 0) return '';
  const rest = text.slice(from + start.length);
  const to = rest.lastIndexOf(end);
  return to < 0 ? rest : rest.slice(0, to);
}

/** The names in commander's "(Did you mean x?)" / "(Did you mean one of x, y?)". */
function suggested(line: string | undefined): string[] {
  const match = /^\(Did you mean (?:one of )?(.*)\?\)$/.exec(line ?? '');
  return match?.[1] === undefined ? [] : match[1].split(', ');
}

function keyOptionMessage(name: string): string {
  return `unknown option ${name}: the private key is never taken from the command line; set PAYLATER_PRIVATE_KEY or use --key-file FILE`;
}

// ---------------------------------------------------------------------------------------------
// The parser of `paylater sandbox` (see the module's header)

export interface ParseOptionSpec {
  type: 'string' | 'boolean';
}

type ParsedValues<O extends Record<string, ParseOptionSpec>> = {
  [K in keyof O]?: O[K]['type'] extends 'string' ? string : boolean;
};

export type CommandLine<O extends Record<string, ParseOptionSpec>> =
  | { help: true }
  | { help: false; values: ParsedValues<O>; positionals: string[] };

/**
 * Parses the arguments of a command. `-h`/`--help` anywhere before `--` asks for help. Every
 * other mistake (an unknown option, a missing or unexpected value, an option given twice, too
 * many arguments) is a {@link UsageError}. Messages name options but never echo their values.
 */
export function parseCommandLine<const O extends Record<string, ParseOptionSpec>>(
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
      throw new UsageError(
        /key/i.test(token.rawName) ? keyOptionMessage(token.rawName) : `unknown option ${token.rawName}`,
        command,
      );
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
  return { help: false, values: values as ParsedValues<O>, positionals };
}

/** The value of a required string option, or a {@link UsageError} naming it. */
export function requireOption(value: string | boolean | undefined, name: string, command: string): string {
  if (typeof value !== 'string') {
    throw new UsageError(`missing option --${name}`, command);
  }
  return value;
}

/** A string option's value, `undefined` when absent. */
export function stringOption(value: string | boolean | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
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
