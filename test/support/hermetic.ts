/**
 * Vitest setup file: the test suite reads nothing outside the repository. A stranger's clone sits
 * in a folder with nothing beside it, so a test that reads `../something` passes here and fails
 * there; this guard makes it fail here too.
 *
 * It wraps the `node:fs` functions that read or look at files and records every path outside the
 * allowed places: the repository (its `node_modules` included), the OS temporary folder, and the
 * system's own folders (devices, `/proc`, configuration, installed programs, Node's installation).
 * Each test file fails in `afterAll` when it read elsewhere. Child processes are not covered here;
 * `test/hermetic.test.ts` scans the sources they run.
 *
 * Hand-written because no library does this one job: it is a thin wrapper over `node:fs`, applied
 * once per worker, and `syncBuiltinESMExports()` makes the wrapped functions visible to
 * `import { readFileSync } from 'node:fs'` as well.
 */
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';

export const REPOSITORY = resolve(import.meta.dirname, '../..');

const ALLOWED: readonly string[] = [
  REPOSITORY,
  resolve(tmpdir()),
  '/tmp',
  '/proc',
  '/dev',
  '/sys',
  '/etc',
  '/usr',
  '/lib',
  '/lib64',
  '/bin',
  '/sbin',
  dirname(dirname(process.execPath)),
];

const ANCESTORS: ReadonlySet<string> = new Set(
  ((): string[] => {
    const found: string[] = [];
    for (let folder = dirname(REPOSITORY); ; folder = dirname(folder)) {
      found.push(folder);
      if (dirname(folder) === folder) return found;
    }
  })(),
);

/** The folder holding the repository, unless that is a system folder every test may use. */
const BESIDE: string | undefined = ((parent) =>
  parent === '/' || parent === resolve(tmpdir()) || parent === '/tmp' ? undefined : parent)(dirname(REPOSITORY));

function inside(path: string, folder: string): boolean {
  return path === folder || path.startsWith(folder.endsWith(sep) ? folder : folder + sep);
}

/** Whether a path the suite reads is allowed; relative paths resolve against the working directory. */
export function isAllowedPath(target: unknown): boolean {
  let path: string;
  if (typeof target === 'string') path = target;
  else if (target instanceof URL) {
    if (target.protocol !== 'file:') return true;
    path = fileURLToPath(target);
  } else if (Buffer.isBuffer(target)) path = target.toString('utf8');
  else return true; // a file descriptor or a handle: its path was checked when it was opened
  const absolute = resolve(path);
  if (inside(absolute, REPOSITORY)) return true;
  // The folders on the way to the repository themselves (a tool resolving a path stats them); what
  // they hold besides the repository is not allowed.
  if (ANCESTORS.has(absolute)) return true;
  // Whatever sits beside the repository is exactly what a stranger's clone does not have, even
  // when the clone itself lives in an allowed place such as a temporary folder.
  if (BESIDE !== undefined && inside(absolute, BESIDE)) return false;
  return ALLOWED.some((folder) => inside(absolute, folder));
}

interface GuardState {
  violations: string[];
}

const KEY = Symbol.for('paylater-api.hermetic-guard');
const globals = globalThis as typeof globalThis & { [KEY]?: GuardState };

const WRAPPED = [
  'readFileSync',
  'readdirSync',
  'existsSync',
  'statSync',
  'lstatSync',
  'openSync',
  'accessSync',
  'opendirSync',
  'createReadStream',
  'readFile',
  'readdir',
  'stat',
  'lstat',
  'open',
  'access',
  'opendir',
] as const;
const WRAPPED_PROMISES = ['readFile', 'readdir', 'stat', 'lstat', 'open', 'access', 'opendir'] as const;

function install(): GuardState {
  const state: GuardState = { violations: [] };
  const wrap = (owner: Record<string, unknown>, name: string, label: string): void => {
    const original = owner[name];
    if (typeof original !== 'function') return;
    owner[name] = function guarded(this: unknown, target: unknown, ...rest: unknown[]) {
      if (!isAllowedPath(target) && state.violations.length < 100) {
        state.violations.push(`${label}(${String(target)})`);
      }
      return (original as (...args: unknown[]) => unknown).call(this, target, ...rest);
    };
  };
  const fsObject = fs as unknown as Record<string, unknown>;
  for (const name of WRAPPED) wrap(fsObject, name, `fs.${name}`);
  for (const name of WRAPPED_PROMISES) wrap(fs.promises as unknown as Record<string, unknown>, name, `fs.promises.${name}`);
  syncBuiltinESMExports();
  return state;
}

const state = (globals[KEY] ??= install());

/** Takes (and clears) what was read outside the allowed places since the last call. */
export function takeViolations(): string[] {
  return state.violations.splice(0);
}

beforeAll(() => {
  takeViolations();
});

afterAll(() => {
  const violations = takeViolations();
  if (violations.length > 0) {
    throw new Error(
      `this test file read outside the repository (a fresh clone has nothing beside it):\n  ${violations.join('\n  ')}\n` +
        'Keep what the tests need inside the repository (test/data/, test/vectors/) or in a temporary folder.',
    );
  }
});
