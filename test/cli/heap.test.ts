/**
 * `paylater sandbox` sets V8's heap growth for its own process (src/cli/heap.ts, D63), unless the
 * process was started with its own value. Run in child processes: the flag would otherwise change
 * the collector of the test worker itself.
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..', '..');
const SCRIPT = `
import { limitHeapGrowth } from './src/cli/heap.ts';
console.log(JSON.stringify({ set: limitHeapGrowth() }));
`;

function run(nodeOptions: string[]): { set: boolean } {
  const output = execFileSync(process.execPath, [...nodeOptions, '--import', 'tsx', '--input-type=module', '-e', SCRIPT], {
    cwd: root,
    encoding: 'utf8',
  });
  return JSON.parse(output.trim().split('\n').at(-1)!) as { set: boolean };
}

describe('the sandbox process heap growth', () => {
  it('is set in a process started without one, and left alone when the process has its own', () => {
    expect(run([])).toEqual({ set: true });
    expect(run(['--heap-growing-percent=30'])).toEqual({ set: false });
    expect(run(['--heap_growing_percent=30'])).toEqual({ set: false });
  });
});
