/**
 * A project folder for running a guide's script as written: `node_modules/paylater-api` is this
 * repository's generated files and its sources as transpiled once for this run (the suites' global
 * setup, test/support/build-sources.ts: plain JavaScript at src/'s depth, so `../../generated`
 * resolves as from src/), with the `exports` given (`./src/....js`), and the script itself beside a
 * `package.json` of type module. A script then runs with plain `node`, as the reader runs it, with
 * no loader compiling the library's modules again in each process.
 */
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CLI_BUILD } from './cli.js';

const ROOT = resolve(import.meta.dirname, '..', '..');

/** Makes the folder with `files` (name: text) in it; returns its path. */
export function guideProject(prefix: string, exports: Record<string, string>, files: Record<string, string>): string {
  const work = mkdtempSync(join(tmpdir(), prefix));
  const pkg = join(work, 'node_modules', 'paylater-api');
  mkdirSync(pkg, { recursive: true });
  symlinkSync(CLI_BUILD, join(pkg, 'src'), 'junction');
  symlinkSync(join(ROOT, 'generated'), join(pkg, 'generated'), 'junction');
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'paylater-api', type: 'module', exports }));
  writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'shop', private: true, type: 'module' }));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(work, name), text);
  return work;
}
