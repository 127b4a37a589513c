/**
 * Compaction of the sandbox process's heap when, and only when, its old generation is fragmented.
 *
 * A compacting full collection moves every live object of the pages it compacts, in one pause of
 * the event loop. V8's `--compact-on-every-full-gc` compacts every page at every full collection:
 * the pages stay close to what is in use over a long soak (D65), but every full collection then
 * copies the whole live heap, 40 to 110 ms of a 60 to 170 ms pause for the 13 to 40 MB heap of a
 * sandbox under the `notes` attack (`--trace-gc-nvp`, `evacuate`), against 6 to 30 ms pauses
 * without the flag; more on a larger heap.
 *
 * So the flag is set only while it is needed: after each full collection (a `gc` performance entry
 * of the major kind) the old generation's pages (`space_size`) are compared with what they hold
 * (`space_used_size`); when the pages hold more than {@link SLACK_RATIO} of free room beyond what is
 * in use, and at least {@link SLACK_FLOOR_BYTES}, the flag is turned on, so the next full
 * collection compacts; it is turned off after a full collection that leaves the pages close to what
 * is in use. Most full collections then compact nothing, and the few that do are the ones that give
 * memory back.
 *
 * And only where its pause is worth it ({@link worthCompacting}): a heap of at most 16 MB in use,
 * whose copy stays near the 50 ms stall budget, or pages past 320 MB, where memory comes first.
 * Between the two the copy took 250 to 1,000 ms (100 to 120 MB in use under the attack suite's
 * `first-page`), the longest pause the sandbox had, and V8's own compaction is left to move a few MB
 * of the emptiest pages at each full collection.
 *
 * V8 has no API to ask for one compacting collection (a "memory pressure" notification is not
 * reachable from JavaScript, and `gc()` needs `--expose-gc` and runs a whole atomic collection at
 * once), so the flag is turned on and off with `v8.setFlagsFromString`, which V8 reads when a full
 * collection starts marking: Node keeps its flags writable after start-up for that call. A process
 * started with the flag, or with `--no-compact-on-every-full-gc`, keeps the user's choice: nothing is
 * watched. A sandbox created in-process (`createSandbox`) leaves its host's collector alone.
 */
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { given } from './heap.js';

/** The V8 flag turned on while the old generation is fragmented. */
const FLAG = 'compact-on-every-full-gc';

/** Free room in the old generation's pages, as a share of what they hold, above which they are compacted. */
const SLACK_RATIO = 0.25;

/** Below this much free room in the pages nothing is compacted, whatever the share (a young sandbox's small heap). */
const SLACK_FLOOR_BYTES = 16 * 1024 * 1024;

/** The old generation's figures that decide (from `v8.getHeapSpaceStatistics()`). */
export interface SpaceFigures {
  space_size: number;
  space_used_size: number;
}

/** Whether pages of `space_size` bytes holding `space_used_size` are sparse enough to be worth compacting. */
export function fragmented({ space_size, space_used_size }: SpaceFigures): boolean {
  const slack = space_size - space_used_size;
  return slack > SLACK_FLOOR_BYTES && slack > space_used_size * SLACK_RATIO;
}

/** What is in use up to which a compaction's copy stays near the 50 ms stall budget (2 to 8 ms a MB copied here). */
const PAUSE_FITS_BYTES = 16 * 1024 * 1024;

/** Old-generation pages beyond which memory comes first: a compaction then, whatever its pause. */
const CEILING_BYTES = 320 * 1024 * 1024;

/**
 * Whether the next full collection should compact: the pages are {@link fragmented}, and either
 * the copy fits the stall budget (at most {@link PAUSE_FITS_BYTES} in use) or the pages passed
 * {@link CEILING_BYTES}, where the process's memory would otherwise leave its budget. Between the
 * two, V8's own compaction moves a few MB of its emptiest pages at each full collection.
 */
export function worthCompacting(old: SpaceFigures): boolean {
  return fragmented(old) && (old.space_used_size <= PAUSE_FITS_BYTES || old.space_size >= CEILING_BYTES);
}

/** What a watch did: full collections seen, and how many times the flag was turned on. */
export interface CompactionWatch {
  readonly majors: number;
  readonly armed: number;
  stop(): void;
}

/**
 * Watches the process's full collections and turns the compaction flag on and off (see the
 * module's header); `undefined` when `execArgv` gives the flag either way (the user's choice).
 */
export function compactWhenFragmented(execArgv: readonly string[] = process.execArgv): CompactionWatch | undefined {
  if (given(execArgv, FLAG)) return undefined;
  let on = false;
  let majors = 0;
  let armed = 0;
  const observer = new PerformanceObserver((list) => {
    const major = list.getEntries().some((entry) => (entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR);
    if (!major) return;
    majors++;
    const old = getHeapSpaceStatistics().find((space) => space.space_name === 'old_space');
    const wanted = old !== undefined && worthCompacting(old);
    if (wanted === on) return;
    on = wanted;
    if (on) armed++;
    setFlagsFromString(on ? `--${FLAG}` : `--no-${FLAG}`);
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    get majors() {
      return majors;
    },
    get armed() {
      return armed;
    },
    stop() {
      observer.disconnect();
      if (on) setFlagsFromString(`--no-${FLAG}`);
      on = false;
    },
  };
}
