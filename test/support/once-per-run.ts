/**
 * Work a global setup does once per run although Vitest calls the setup once per project:
 * `npm test` has two projects (vitest.config.ts), and building the same folder twice at once
 * would let one build delete what the other wrote. The first call starts the work, later calls
 * share it, and the cleanup runs when the last project's teardown releases it.
 *
 * The state lives on `globalThis` under a registered symbol: Vitest loads a setup module once per
 * project, so module-level state would not be shared, while every global setup runs in the one
 * main process.
 */
interface Shared {
  result: Promise<unknown>;
  users: number;
}

const KEY = Symbol.for('paylater-api.once-per-run');
const globals = globalThis as typeof globalThis & { [KEY]?: Map<string, Shared> };

/** Runs `work` once for every caller with the same `name`; the returned teardown runs `cleanup` after the last one. */
export async function oncePerRun<T>(name: string, work: () => Promise<T>, cleanup: (result: T) => void): Promise<{ result: T; teardown: () => void }> {
  const all = (globals[KEY] ??= new Map());
  let shared = all.get(name);
  if (shared === undefined) {
    shared = { result: work(), users: 0 };
    all.set(name, shared);
  }
  shared.users += 1;
  const entry = shared;
  const result = (await entry.result) as T;
  return {
    result,
    teardown: () => {
      entry.users -= 1;
      if (entry.users > 0) return;
      all.delete(name);
      cleanup(result);
    },
  };
}
