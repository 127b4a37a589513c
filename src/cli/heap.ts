/**
 * How the sandbox process's garbage collector keeps its memory. The sandbox process runs
 * with two V8 flags on its Node command line:
 *
 * - `--heap-growing-percent=100`. V8 sets the next collection's limit at a multiple of the
 *   memory still in use after the last one, up to four times it when collections are cheap; a
 *   sandbox under a gateway's load test keeps about 170 MB in use at its retention limits, and with
 *   V8's own choice ended such a test at 565 MB of resident memory. A fixed factor of two keeps
 *   the heap near twice what is in use.
 * - `--compact-on-every-full-gc`. The sandbox's records die oldest first, but not all at the
 *   same age (data pushes outlive transactions, a transaction's pending version dies at once), so
 *   the pages of the old generation end up holding a few live records each. V8 by default moves at
 *   most a few megabytes of them per collection, and under a steady load the heap kept growing
 *   (old generation 130 MB in use in 370 MB of pages after 600,000 transactions). Compacting at
 *   every full collection keeps the pages near what is in use.
 *
 * How they get there: `npm start` puts them on its `node` command line (package.json); `paylater
 * sandbox` started without them runs itself again once, as a child Node process with them
 * (`relaunch.ts`). V8 flags are not allowed in `NODE_OPTIONS` (Node refuses to start: "is not
 * allowed in NODE_OPTIONS"), and `v8.setFlagsFromString` after start-up is documented as
 * unpredictable, so the command line is the one documented place. A flag the process was started
 * with, in either spelling or negated, is the user's and is kept. A sandbox created in-process
 * (`createSandbox`) leaves its host's collector alone.
 */

/** The heap may grow to (1 + this / 100) times the memory in use after a collection. */
const HEAP_GROWING_PERCENT = 100;

/** The flags of the sandbox process, with the name by which a flag given by the user is found. */
export const SANDBOX_HEAP_FLAGS: readonly { name: string; flag: string }[] = Object.freeze([
  { name: 'heap-growing-percent', flag: `--heap-growing-percent=${HEAP_GROWING_PERCENT}` },
  { name: 'compact-on-every-full-gc', flag: '--compact-on-every-full-gc' },
]);

/** Whether `args` set the V8 flag `name` (either spelling, `--no-` included). */
function given(args: readonly string[], name: string): boolean {
  const pattern = new RegExp(`^--(?:no[-_])?${name.replace(/-/g, '[-_]')}(?:=|$)`);
  return args.some((argument) => pattern.test(argument));
}

/** The sandbox's heap flags that the Node options `execArgv` do not set, in their order. */
export function missingHeapFlags(execArgv: readonly string[] = process.execArgv): string[] {
  return SANDBOX_HEAP_FLAGS.filter(({ name }) => !given(execArgv, name)).map(({ flag }) => flag);
}
