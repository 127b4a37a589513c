/**
 * `paylater sandbox` sets V8's heap growth and compaction for its own process (src/cli/heap.ts,
 * D63, D65), each unless the process was started with its own value. Run in child processes: the
 * flags would otherwise change the collector of the test worker itself.
 */
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SANDBOX_HEAP_FLAGS } from '../../src/cli/heap.js';
import { CLI_BUILD } from '../support/cli.js';

const root = resolve(import.meta.dirname, '..', '..');
const SCRIPT = `
import { tuneSandboxHeap } from ${JSON.stringify(pathToFileURL(join(CLI_BUILD, 'cli', 'heap.js')).href)};
console.log(JSON.stringify({ set: tuneSandboxHeap() }));
`;

function run(nodeOptions: string[], env: Record<string, string> = {}): { set: string[] } {
  const output = execFileSync(process.execPath, [...nodeOptions, '--input-type=module', '-e', SCRIPT], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '', ...env },
  });
  return JSON.parse(output.trim().split('\n').at(-1)!) as { set: string[] };
}

describe('the sandbox process heap flags', () => {
  it('are set in a process started without them', () => {
    expect(run([])).toEqual({ set: ['--heap-growing-percent=100', '--compact-on-every-full-gc'] });
  });

  it('leave a flag the process was given alone, in either spelling, negated, or in NODE_OPTIONS', () => {
    expect(run(['--heap-growing-percent=30'])).toEqual({ set: ['--compact-on-every-full-gc'] });
    expect(run(['--heap_growing_percent=30'])).toEqual({ set: ['--compact-on-every-full-gc'] });
    expect(run(['--no-compact-on-every-full-gc'])).toEqual({ set: ['--heap-growing-percent=100'] });
    expect(run(['--compact_on_every_full_gc', '--heap-growing-percent=50'])).toEqual({ set: [] });
    expect(run([], { NODE_OPTIONS: '--max-old-space-size=512' })).toEqual({ set: ['--heap-growing-percent=100', '--compact-on-every-full-gc'] });
  });

  it('are flags this Node version has', () => {
    const options = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
    for (const { name } of SANDBOX_HEAP_FLAGS) expect(options).toContain(`--${name} `);
  });
});
