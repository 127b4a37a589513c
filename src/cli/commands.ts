/**
 * The top-level commands of `paylater`. A new command is one more entry here: its name, a
 * one-line summary for `paylater --help`, and `run(argv)` resolving to the exit code (see
 * `Command` and the helpers of `command-line.ts`).
 */
import type { Command } from './command-line.js';
import { signCommand, verifyCommand } from './signature-commands.js';

export type { Command } from './command-line.js';

export const commands: Record<string, Command> = {
  sign: signCommand,
  verify: verifyCommand,
};
