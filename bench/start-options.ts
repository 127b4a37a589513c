/**
 * The Node options with which `npm start` runs the sandbox: the options between `node` and
 * `dist/cli/main.js` in package.json's `start` script (the heap flags of src/cli/heap.ts, D63, D65).
 * The benches start the built sandbox with them, so that they measure the process `npm start` runs
 * (without them `paylater sandbox` would run itself again as a child, D84, and the pid the benches
 * watch would be the parent's).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');

/** The `node` options of `npm start`'s sandbox command, from package.json. */
export function npmStartNodeOptions(packageJson = resolve(root, 'package.json')): string[] {
  const start = (JSON.parse(readFileSync(packageJson, 'utf8')) as { scripts: Record<string, string> }).scripts.start ?? '';
  const match = /(?:^|&&\s*)node\s+((?:--\S+\s+)*)dist\/cli\/main\.js sandbox/.exec(start);
  if (match === null) throw new Error(`package.json's start script does not run "node [options] dist/cli/main.js sandbox": ${start}`);
  return match[1]!.split(/\s+/).filter(Boolean);
}
