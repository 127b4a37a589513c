/**
 * The CPU profile summary of bench/cpuprofile.ts (bench/profile.ts prints it): self time by place
 * and by function, the call tree with totals, the idle time left out of the shares.
 */
import { describe, expect, it } from 'vitest';
import { summariseProfile, type CpuProfile } from '../../bench/cpuprofile.js';

const ROOT = '/work/repo';
const frame = (functionName: string, url = '', lineNumber = 0) => ({ functionName, url, lineNumber });

/**
 * (root) -> handle (router.ts) -> writev (native); (root) -> parse (a dependency);
 * (root) -> (idle); (root) -> (garbage collector). Each sample lasts 1 ms.
 */
const PROFILE: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2, 4, 5, 6] },
    { id: 2, callFrame: frame('handle', `file://${ROOT}/src/sandbox/router.ts`, 41), children: [3] },
    { id: 3, callFrame: frame('writev') },
    { id: 4, callFrame: frame('parse', `file://${ROOT}/node_modules/find-my-way/index.js`, 9) },
    { id: 5, callFrame: frame('(idle)') },
    { id: 6, callFrame: frame('(garbage collector)') },
  ],
  // writev 4 ms, handle 2 ms, parse 1 ms, idle 2 ms, gc 1 ms: the last sample has no duration.
  samples: [3, 3, 3, 3, 2, 2, 4, 5, 5, 6, 3],
  timeDeltas: [0, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000],
};

describe('summariseProfile', () => {
  const summary = summariseProfile(PROFILE, { root: ROOT, minPercent: 10 });

  it('says how much was sampled and how much of it was busy, idle time left out', () => {
    expect(summary).toContain('Sampled 10 ms, of which 8 ms busy (80.0 %)');
  });

  it('sums self time by place: native code, a module of the project, a dependency, the collector', () => {
    expect(summary).toContain('| (native or V8 built-ins) | 4 | 50.0 % |');
    expect(summary).toContain('| src/sandbox/router.ts | 2 | 25.0 % |');
    expect(summary).toContain('| dependency: find-my-way | 1 | 12.5 % |');
    expect(summary).toContain('| (garbage collector) | 1 | 12.5 % |');
    expect(summary).not.toContain('(idle)');
  });

  it('ranks functions by self time, named with their file and line', () => {
    const rows = summary.split('\n').filter((line) => line.startsWith('| `'));
    expect(rows[0]).toBe('| `writev` | 4 | 50.0 % |');
    expect(rows[1]).toBe('| `handle src/sandbox/router.ts:42` | 2 | 25.0 % |');
  });

  it('shows the call tree with each frame’s total and self share, children indented', () => {
    expect(summary).toContain(' 75.0 % (25.0 %) handle src/sandbox/router.ts:42\n   50.0 % (50.0 %) writev');
    expect(summary).toContain(' 12.5 % (12.5 %) parse node_modules/find-my-way/index.js:10');
  });

  it('leaves frames under the threshold out of the tree', () => {
    const tree = summariseProfile(PROFILE, { root: ROOT, minPercent: 20 }).split('```')[1]!;
    expect(tree).toContain('handle');
    expect(tree).not.toContain('parse');
  });
});
