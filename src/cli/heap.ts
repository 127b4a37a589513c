/**
 * How the sandbox process's garbage collector keeps its memory (D63, D65). `paylater sandbox` sets
 * two V8 flags for its own process, each unless the process was started with its own value of it
 * (on the command line or in `NODE_OPTIONS`):
 *
 * - `--heap-growing-percent=100` (D63). V8 sets the next collection's limit at a multiple of the
 *   memory still in use after the last one, up to four times it when collections are cheap; a
 *   sandbox under a gateway's load test keeps about 170 MB in use at its retention limits, and with
 *   V8's own choice ended such a test at 565 MB of resident memory. A fixed factor of two keeps
 *   the heap near twice what is in use.
 * - `--compact-on-every-full-gc` (D65). The sandbox's records die oldest first, but not all at the
 *   same age (data pushes outlive transactions, a transaction's pending version dies at once), so
 *   the pages of the old generation end up holding a few live records each. V8 by default moves at
 *   most a few megabytes of them per collection, and under a steady load the heap kept growing
 *   (old generation 130 MB in use in 370 MB of pages after 600,000 transactions). Compacting at
 *   every full collection keeps the pages near what is in use.
 *
 * Only the command does this: a sandbox created in-process (`createSandbox`) leaves its host's
 * collector alone. `v8.setFlagsFromString` after start-up is documented as unpredictable in
 * general; both flags are values V8 reads at each collection, so they take effect from the next.
 */
import { setFlagsFromString } from 'node:v8';

/** The heap may grow to (1 + this / 100) times the memory in use after a collection. */
const HEAP_GROWING_PERCENT = 100;

/** The flags `paylater sandbox` sets, with the name by which a flag given by the user is found. */
export const SANDBOX_HEAP_FLAGS: readonly { name: string; flag: string }[] = Object.freeze([
  { name: 'heap-growing-percent', flag: `--heap-growing-percent=${HEAP_GROWING_PERCENT}` },
  { name: 'compact-on-every-full-gc', flag: '--compact-on-every-full-gc' },
]);

/** Whether `args` set the V8 flag `name` (either spelling, `--no-` included). */
function given(args: readonly string[], name: string): boolean {
  const pattern = new RegExp(`^--(?:no[-_])?${name.replace(/-/g, '[-_]')}(?:=|$)`);
  return args.some((argument) => pattern.test(argument));
}

/**
 * Sets the sandbox's heap flags that the process was not given; answers the flags it set.
 * `nodeOptions` is `NODE_OPTIONS`, whose flags count as given too.
 */
export function tuneSandboxHeap(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string | undefined = process.env.NODE_OPTIONS,
): string[] {
  const args = [...execArgv, ...(nodeOptions ?? '').split(/\s+/).filter(Boolean)];
  const set: string[] = [];
  for (const { name, flag } of SANDBOX_HEAP_FLAGS) {
    if (given(args, name)) continue;
    setFlagsFromString(flag);
    set.push(flag);
  }
  return set;
}
