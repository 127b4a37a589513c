/**
 * The sandbox's log when no logger is given (`npm start`, `paylater sandbox`): a request's line and
 * other information on stdout, `sandbox: ` before each, warnings and errors on stderr. An error's
 * line has its name, message and stack, never request data.
 */
import type { Logger } from './router.js';

// Request lines are gathered and written once per turn of the event loop: a write to a file or a
// terminal is synchronous, and one per request halved the sandbox's throughput.
// The exit hook that writes what is left is installed with the first line, not on import.
let pendingLines: string[] = [];
let flushOnExit = false;
function flushLines(): void {
  const text = pendingLines.join('');
  pendingLines = [];
  process.stdout.write(text);
}

export const consoleLogger: Logger = {
  info: (message) => {
    if (!flushOnExit) {
      flushOnExit = true;
      process.on('exit', () => {
        if (pendingLines.length > 0) flushLines();
      });
    }
    if (pendingLines.length === 0) setImmediate(flushLines);
    pendingLines.push(`sandbox: ${message}\n`);
  },
  warn: (message) => console.warn(`sandbox: ${message}`),
  error: (message, error) => console.error(`sandbox: ${message}${error === undefined ? '' : `: ${describeError(error)}`}`),
};

/** An error for a log line: its name, message and stack; never request data. */
function describeError(error: unknown): string {
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`;
  return typeof error;
}
