/**
 * The TypeScript compiler over some of the repository's sources, for the tests that read the code
 * as the compiler sees it (a record type's fields, the types of the sandbox's expressions). Module
 * resolution is held inside the repository, as a fresh clone has nothing beside it
 * (test/support/hermetic.ts).
 */
import ts from 'typescript';
import { REPOSITORY } from './hermetic.js';

/** One program over `paths` (absolute) and what they import, checked as `tsconfig.json` would. */
export function compileSources(paths: string[]): ts.Program {
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  };
  // Module resolution looks for node_modules folders above the repository too: the compiler sees
  // only the repository.
  const host = ts.createCompilerHost(options);
  const inside = (name: string) => name === REPOSITORY || name.startsWith(`${REPOSITORY}/`);
  const { fileExists, directoryExists } = host;
  host.fileExists = (name) => inside(name) && fileExists.call(host, name);
  host.directoryExists = (name) => inside(name) && (directoryExists?.call(host, name) ?? true);
  return ts.createProgram(paths, options, host);
}
