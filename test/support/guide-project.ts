/**
 * A project folder for running a guide's script as written: `node_modules/paylater-api` is this
 * repository's sources and generated files (linked, run through tsx), with the `exports` given, and
 * the script itself beside a `package.json` of type module.
 */
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..', '..');

/** Makes the folder with `files` (name: text) in it; returns its path. */
export function guideProject(prefix: string, exports: Record<string, string>, files: Record<string, string>): string {
  const work = mkdtempSync(join(tmpdir(), prefix));
  const pkg = join(work, 'node_modules', 'paylater-api');
  mkdirSync(pkg, { recursive: true });
  symlinkSync(join(ROOT, 'src'), join(pkg, 'src'), 'junction');
  symlinkSync(join(ROOT, 'generated'), join(pkg, 'generated'), 'junction');
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'paylater-api', type: 'module', exports }));
  writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'shop', private: true, type: 'module' }));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(work, name), text);
  return work;
}
