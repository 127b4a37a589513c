/**
 * Running a command again in a child Node process with more Node options (why: D84): how `paylater
 * sandbox`, started without its heap flags (heap.ts), gets them on a command line.
 *
 * The parent runs `process.execPath [...flags, ...process.execArgv] script ...argv` with the same
 * standard streams and environment, waits, and ends with the child's exit code (128 + the signal's
 * number when a signal ended the child). It passes on a stop without doubling it:
 *
 * - The first SIGINT, SIGTERM or SIGHUP the parent gets goes to the child as a message over an IPC
 *   channel, which the child takes as its first signal, once (`onRelaunchedStop`). Ctrl+C in a
 *   terminal signals the whole process group, the child included: as a signal it would be the
 *   child's second, which means "stop without waiting".
 * - A later signal goes to the child as that signal: a second Ctrl+C still stops without waiting.
 * - When the parent ends without a word (SIGKILL), the channel closes and the child stops: no
 *   sandbox is left behind. The child also checks once a second that its parent id has not changed
 *   (an orphan is adopted by another process), so it stops even if the channel's end goes unseen.
 * - Ctrl+C signals the whole process group: the child gets the parent's message and the same SIGINT,
 *   in either order (Node 24 often delivers the message first). sandbox-command.ts counts a signal
 *   of the same name within a second of the message as that same stop, not a second one.
 * - The parent, not the child, watches the npm process that may have started it (launcher.ts) and
 *   passes its end on as a stop: the child's lifetime is the parent's.
 *
 * Hand-written rather than `foreground-child`: that package passes every signal on as a signal, so
 * a Ctrl+C would reach the child twice.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { watchLauncher } from './launcher.js';

/** Set in the child's environment: its parent passes stops as messages. */
const RELAUNCHED = 'PAYLATER_RELAUNCHED';

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** How often a relaunched child checks that its parent is still the process that started it. */
const ORPHAN_CHECK_MS = 1000;

/** A stop passed on: the signal's name, or `launcher` with the pid of the process that ended. */
export interface StopMessage {
  paylaterStop: string;
  pid?: number;
}

/** Runs `script argv` in a child Node process with `flags` first; resolves to its exit code. */
export function relaunch(flags: readonly string[], script: string, argv: readonly string[]): Promise<number> {
  const child = spawn(process.execPath, [...flags, ...process.execArgv, script, ...argv], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, [RELAUNCHED]: '1' },
  });
  let stopped = false;
  const stop = (message: StopMessage) => {
    stopped = true;
    // The child may be closing its end already; then it is stopping, and the message is moot.
    if (child.connected) child.send(message, () => undefined);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopped) child.kill(signal);
    else stop({ paylaterStop: signal });
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
  const launcher = watchLauncher((pid) => {
    if (!stopped) stop({ paylaterStop: 'launcher', pid });
  });
  const done = () => {
    for (const signal of SIGNALS) process.off(signal, onSignal);
    launcher.stop();
  };
  return new Promise<number>((resolve, reject) => {
    child.once('error', (error) => {
      done();
      reject(error);
    });
    child.once('exit', (code, signal) => {
      done();
      resolve(code ?? 128 + (signal === null ? 0 : constants.signals[signal]));
    });
  });
}

/**
 * In a process started by {@link relaunch}: calls `stop` once, when the parent passes a stop on
 * (with it) or ends (without), and answers a function that closes the channel (call it when
 * stopping, so that the process can end). Elsewhere answers undefined.
 */
export function onRelaunchedStop(stop: (message?: StopMessage) => void): (() => void) | undefined {
  if (process.env[RELAUNCHED] !== '1' || process.send === undefined) return undefined;
  delete process.env[RELAUNCHED];
  let called = false;
  const once = (message?: StopMessage) => {
    if (called) return;
    called = true;
    stop(message);
  };
  const onMessage = (message: unknown) => {
    if (typeof message === 'object' && message !== null && 'paylaterStop' in message) once(message as StopMessage);
  };
  process.on('message', onMessage);
  process.once('disconnect', () => once());
  // A second watch, in case the channel's end is not seen (a loop busy when it closed, a channel
  // inherited elsewhere): an orphan is adopted by another process, so its parent id changes.
  const parent = process.ppid;
  const orphaned = setInterval(() => {
    if (process.ppid !== parent) once();
  }, ORPHAN_CHECK_MS);
  orphaned.unref();
  return () => {
    called = true;
    clearInterval(orphaned);
    process.off('message', onMessage);
    if (process.connected) process.disconnect();
  };
}
