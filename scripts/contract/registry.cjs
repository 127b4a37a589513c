'use strict';
/**
 * What the hooks tell the driver that Dredd itself does not carry: why a transaction was skipped,
 * and what the kit's own response check found wrong. Dredd runs the hooks in the driver's process,
 * so one object on `globalThis` is shared by both whichever way the modules are loaded.
 */
const KEY = Symbol.for('paylater.contract-kit.registry');

function registry() {
  if (!globalThis[KEY]) {
    globalThis[KEY] = { skips: new Map(), problems: new Map(), setupNotes: [] };
  }
  return globalThis[KEY];
}

module.exports = { registry };
