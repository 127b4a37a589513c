/**
 * How the sandbox process's garbage collector keeps its memory. The sandbox process runs
 * with a V8 flag on its Node command line:
 *
 * - `--heap-growing-percent=100`. V8 sets the next collection's limit at a multiple of the
 *   memory still in use after the last one, up to four times it when collections are cheap; a
 *   sandbox under a gateway's load test keeps about 170 MB in use at its retention limits, and with
 *   V8's own choice ended such a test at 565 MB of resident memory. A fixed factor of two keeps
 *   the heap near twice what is in use.
 *
 * The old generation is compacted only while it is fragmented, by compaction.ts, which turns V8's
 * `--compact-on-every-full-gc` on and off at run time: on the command line (as it was, D65) the flag
 * made every full collection copy the whole live heap, the longest pause the sandbox's thread had.
 *
 * The young generation keeps V8's own size (a semi-space growing to 16 MB): fixed larger, its
 * scavenges came less often but each held the requests under way longer, and the p99 did not move;
 * fixed smaller, they came more often (D480).
 *
 * How the growth flag gets there: `npm start` puts it on its `node` command line (package.json);
 * `paylater sandbox` started without it runs itself again once, as a child Node process with it
 * (`relaunch.ts`). V8 flags are not allowed in `NODE_OPTIONS` (Node refuses to start: "is not
 * allowed in NODE_OPTIONS"), and `v8.setFlagsFromString` after start-up is documented as
 * unpredictable, so the command line is the one documented place for it. The compaction flag is the
 * exception, set at run time because it must change while the process runs: V8 reads it when a
 * full collection starts, and test/cli/compaction.test.ts checks that it takes effect. A flag the
 * process was started with, in either spelling or negated, is the user's and is kept. A sandbox
 * created in-process (`createSandbox`) leaves its host's collector alone.
 */

/** The heap may grow to (1 + this / 100) times the memory in use after a collection. */
const HEAP_GROWING_PERCENT = 100;

/** The flags of the sandbox process, with the name by which a flag given by the user is found. */
export const SANDBOX_HEAP_FLAGS: readonly { name: string; flag: string }[] = Object.freeze([
  { name: 'heap-growing-percent', flag: `--heap-growing-percent=${HEAP_GROWING_PERCENT}` },
]);

/** Whether `args` set the V8 flag `name` (either spelling, `--no-` included). */
export function given(args: readonly string[], name: string): boolean {
  const pattern = new RegExp(`^--(?:no[-_])?${name.replace(/-/g, '[-_]')}(?:=|$)`);
  return args.some((argument) => pattern.test(argument));
}

/** The sandbox's heap flags that the Node options `execArgv` do not set, in their order. */
export function missingHeapFlags(execArgv: readonly string[] = process.execArgv): string[] {
  return SANDBOX_HEAP_FLAGS.filter(({ name }) => !given(execArgv, name)).map(({ flag }) => flag);
}
