/**
 * The commands of `paylater`, as one commander program (see `command-line.ts`): `sign` and `verify`
 * (signature-commands.ts), `sandbox` (sandbox-command.ts), `listen` (listen.ts), `trigger`
 * (trigger.ts) and `help`. A new command is one more `program.leaf(...)` or `program.group(...)`
 * here. Commands that need more than the signature primitives load their modules when they run.
 */
import { Program, UsageError, type Invocation } from './command-line.js';
import { registerListen } from './listen-command.js';
import { packageVersion } from './package-data.js';
import { registerSignatureCommands } from './signature-commands.js';
import { registerTrigger } from './trigger-command.js';

export interface ProgramOptions {
  /**
   * The script this program runs from as the `paylater` command, with its arguments: `paylater
   * sandbox` started without its heap flags runs it again with them (heap.ts, relaunch.ts). Without
   * it (a program built in another process) the sandbox runs in this process as it is.
   */
  entry?: { script: string; argv: readonly string[] };
}

/** Builds the whole program; `run` is how `paylater help ...` runs it again with `--help`. */
export function buildProgram(options: ProgramOptions = {}): Program {
  const program = new Program({
    name: 'paylater',
    version: packageVersion(),
    description: 'Tools for the pay-later service: signatures, the sandbox, and webhook testing.',
    after: "Run 'paylater help <command>' or 'paylater <command> --help' for the options of a command.",
  });
  registerSignatureCommands(program);

  program.leaf(program.root, {
    name: 'sandbox',
    summary: 'start the stateful sandbox of all four families (default http://127.0.0.1:4000)',
    usage: '[options]',
    description: 'Start the stateful sandbox.',
    passThrough: true,
    async run({ args }) {
      const { missingHeapFlags } = await import('./heap.js');
      const missing = missingHeapFlags();
      if (options.entry !== undefined && missing.length > 0 && !args.some((arg) => arg === '-h' || arg === '--help')) {
        const { relaunch } = await import('./relaunch.js');
        return relaunch(missing, options.entry.script, options.entry.argv);
      }
      // The sandbox process compacts its heap only while it is fragmented (compaction.ts).
      const { compactWhenFragmented } = await import('./compaction.js');
      compactWhenFragmented();
      // Loaded on demand: signing and verifying need none of the sandbox's modules.
      const { runSandbox } = await import('./sandbox-command.js');
      return runSandbox(args);
    },
  });

  registerListen(program);
  registerTrigger(program);

  program.leaf(program.root, {
    name: 'help',
    summary: 'show the help of a command, e.g. paylater help sign web',
    usage: '[command...]',
    description: 'Show the help of the program or of a command.',
    arguments: ['[command...]'],
    run: (invocation) => runHelp(invocation),
  });
  return program;
}

/** `paylater help a b` is `paylater a b --help`; an unknown name is reported as the command line would. */
async function runHelp({ args }: Invocation): Promise<number> {
  let known = buildProgram().root;
  const path: string[] = [];
  for (const name of args) {
    if (known.commands.length === 0) {
      throw new UsageError(`'paylater ${path.join(' ')}' has no subcommands`, 'paylater help');
    }
    path.push(name);
    const next = known.commands.find((command) => command.name() === name);
    // An unknown name: running the path without --help reports it, with a suggestion.
    if (next === undefined) return buildProgram().run(path);
    known = next;
  }
  return buildProgram().run([...path, '--help']);
}
