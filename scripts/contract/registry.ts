/**
 * What the hooks tell the driver that Dredd itself does not carry: why a transaction was skipped,
 * and what the kit's own response check found wrong. Dredd runs the hooks in the driver's process,
 * but the two are separate bundles, so one object on `globalThis` is shared by both.
 */
const KEY = Symbol.for('paylater.contract-kit.registry');

export interface Registry {
  skips: Map<string, string>;
  problems: Map<string, string[]>;
  setupNotes: string[];
  hooksLoaded?: boolean;
  hooksError?: string;
}

export function registry(): Registry {
  const global = globalThis as { [KEY]?: Registry };
  global[KEY] ??= { skips: new Map(), problems: new Map(), setupNotes: [] };
  return global[KEY];
}
