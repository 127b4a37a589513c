/**
 * The sandbox process compacts its heap only while the old generation is fragmented
 * (src/cli/compaction.ts): when the flag is turned on, and that turning it on at run time does
 * compact the next full collection, on the Node that runs the tests (a child process with
 * `--expose-gc`, so that the collections happen when the script says).
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compactWhenFragmented, fragmented, worthCompacting } from '../../src/cli/compaction.js';

const MB = 1024 * 1024;
const root = resolve(import.meta.dirname, '../..');

describe('when the old generation is compacted', () => {
  it('is when its pages hold a quarter more than what is in use, and 16 MB more at least', () => {
    expect(fragmented({ space_size: 200 * MB, space_used_size: 130 * MB })).toBe(true);
    expect(fragmented({ space_size: 160 * MB, space_used_size: 130 * MB })).toBe(false);
    expect(fragmented({ space_size: 30 * MB, space_used_size: 10 * MB })).toBe(true);
    // A quarter and more of a small heap, but under 16 MB of free room.
    expect(fragmented({ space_size: 20 * MB, space_used_size: 8 * MB })).toBe(false);
    expect(fragmented({ space_size: 13 * MB, space_used_size: 13 * MB })).toBe(false);
  });

  it('is wanted only where its pause fits the stall budget (16 MB in use at most) or the pages passed 320 MB', () => {
    expect(worthCompacting({ space_size: 30 * MB, space_used_size: 10 * MB })).toBe(true);
    expect(worthCompacting({ space_size: 200 * MB, space_used_size: 130 * MB })).toBe(false);
    expect(worthCompacting({ space_size: 340 * MB, space_used_size: 230 * MB })).toBe(true);
    expect(worthCompacting({ space_size: 340 * MB, space_used_size: 330 * MB })).toBe(false);
  });

  it('is left to the user who gave the flag either way', () => {
    expect(compactWhenFragmented(['--compact-on-every-full-gc'])).toBeUndefined();
    expect(compactWhenFragmented(['--no-compact_on_every_full_gc'])).toBeUndefined();
  });
});

// Makes some 60 MB of small records, keeps one in ten, and collects: the pages stay, mostly empty.
// The watch then turns the flag on, and the next collection compacts them.
const SCRIPT = `
import { getHeapSpaceStatistics } from 'node:v8';
const { compactWhenFragmented, fragmented } = await import(${JSON.stringify(pathToFileURL(resolve(root, 'src/cli/compaction.ts')).href)});
const old = () => getHeapSpaceStatistics().find((space) => space.space_name === 'old_space');
const turn = () => new Promise((done) => setTimeout(done, 50));
const watch = compactWhenFragmented([]);
const records = [];
for (let i = 0; i < 400000; i++) records.push({ i, name: 'record ' + i, list: [i, i + 1] });
globalThis.gc();
await turn();
for (let i = 0; i < records.length; i++) if (i % 10 !== 0) records[i] = null;
globalThis.gc();
await turn();
const sparse = old();
const armedAfterSparse = watch.armed;
globalThis.gc();
await turn();
const compacted = old();
globalThis.gc();
await turn();
process.stdout.write(JSON.stringify({
  sparse: { size: sparse.space_size, used: sparse.space_used_size, fragmented: fragmented(sparse) },
  armedAfterSparse,
  compacted: { size: compacted.space_size, used: compacted.space_used_size, fragmented: fragmented(compacted) },
  armed: watch.armed,
  majors: watch.majors,
  kept: records.filter(Boolean).length,
}));
`;

describe('the watch in a process', () => {
  it('turns compaction on after a collection that leaves sparse pages, and the next collection gives them back', () => {
    const result = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', SCRIPT], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    expect(result.status, result.stderr).toBe(0);
    const figures = JSON.parse(result.stdout) as {
      sparse: { size: number; used: number; fragmented: boolean };
      armedAfterSparse: number;
      compacted: { size: number; used: number; fragmented: boolean };
      armed: number;
      majors: number;
      kept: number;
    };
    expect(figures.kept).toBe(40_000);
    // Without compaction the collection left the pages: mostly free room.
    expect(figures.sparse.fragmented).toBe(true);
    expect(figures.armedAfterSparse).toBe(1);
    // The next collection compacted: the pages are near what they hold, at least 16 MB fewer.
    expect(figures.compacted.fragmented).toBe(false);
    expect(figures.compacted.size).toBeLessThan(figures.sparse.size - 16 * MB);
    // Turned on once, and off again after the compacting collection (a later one did not turn it on).
    expect(figures.armed).toBe(1);
    expect(figures.majors).toBeGreaterThanOrEqual(4);
  });
});
