/**
 * The top-level commands of `paylater`. A new command is one more entry here: its name, a
 * one-line summary for `paylater --help`, and `run(argv)` resolving to the exit code (see
 * `Command` and the helpers of `command-line.ts`).
 */
import type { Command } from './command-line.js';
import { signCommand, verifyCommand } from './signature-commands.js';

export type { Command } from './command-line.js';

const sandboxCommand: Command = {
  summary: 'start the stateful sandbox of all four families (default http://127.0.0.1:4000)',
  async run(argv) {
    // Loaded on demand: signing and verifying need none of the sandbox's modules.
    const { runSandbox } = await import('../sandbox/cli.js');
    return runSandbox(argv);
  },
};

export const commands: Record<string, Command> = {
  sign: signCommand,
  verify: verifyCommand,
  sandbox: sandboxCommand,
};
