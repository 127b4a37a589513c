/**
 * `npm run test:coverage`: the coverage of src/ by `npm test` and by `npm run test:slow`, each
 * alone and both together (the suite CI runs), as Vitest's blob reports merged with
 * `--merge-reports`. Writes `coverage/` (HTML and `coverage-summary.json` of the merged run) and
 * prints the three summaries.
 *
 *   npm run test:coverage [-- --fast-only]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const root = resolve(import.meta.dirname, '..');
const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
const { values } = parseArgs({ options: { 'fast-only': { type: 'boolean' } } });
const blobs = join(root, 'coverage', '.blobs');

interface Summary {
  total: Record<'lines' | 'statements' | 'functions' | 'branches', { pct: number; covered: number; total: number }>;
}

function run(args: string[]): void {
  const result = spawnSync(process.execPath, [vitest, ...args], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

function summary(folder: string): string {
  const { total } = JSON.parse(readFileSync(join(folder, 'coverage-summary.json'), 'utf8')) as Summary;
  return (['lines', 'statements', 'functions', 'branches'] as const)
    .map((kind) => `${kind} ${total[kind].pct.toFixed(2)} % (${total[kind].covered}/${total[kind].total})`)
    .join(', ');
}

rmSync(join(root, 'coverage'), { recursive: true, force: true });
mkdirSync(blobs, { recursive: true });
const groups: [string, string[]][] = [['npm test', ['--config', 'vitest.config.ts']]];
if (!values['fast-only']) groups.push(['npm run test:slow', ['--config', 'vitest.slow.config.ts']]);
const lines: string[] = [];
for (const [index, [name, config]] of groups.entries()) {
  const folder = join(root, 'coverage', `group-${index}`);
  run(['run', ...config, '--coverage', `--coverage.reportsDirectory=${folder}`, '--reporter=dot', '--reporter=blob', `--outputFile.blob=${join(blobs, `group-${index}.json`)}`]);
  lines.push(`${name.padEnd(22)} ${summary(folder)}`);
}
if (groups.length > 1) {
  run(['run', `--merge-reports=${blobs}`, '--coverage', '--coverage.reportsDirectory=coverage', '--reporter=dot']);
  lines.push(`${'both together'.padEnd(22)} ${summary(join(root, 'coverage'))}`);
}
process.stdout.write(`\nCoverage of src/:\n${lines.map((line) => `  ${line}`).join('\n')}\n`);
