/**
 * `npm run docs`: builds the documentation site into site/ (see scripts/docs-site.ts): the landing
 * page, the API reference of each family and every guide under docs/. The pages work offline.
 *
 *   npm run docs                  build site/
 *   npm run docs -- --out public  build elsewhere
 *   npm run docs:serve            then serve it on http://127.0.0.1:4080
 */
import { relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DocsBuildError } from './docs-policy.js';
import { SITE_INPUTS, buildDocs } from './docs-site.js';
import { recordBuild } from './stale.js';
import { kilobytes, measureSite } from './docs-weight.js';
import type { SitePage } from './docs-site.js';

const USAGE = `Usage: npm run docs -- [--out <dir>]

  --out <dir>   where to write the site; default site/ (replaced as a whole)
  --help        show this text`;

let values: { out?: string; help?: boolean };
try {
  ({ values } = parseArgs({ options: { out: { type: 'string' }, help: { type: 'boolean', short: 'h' } } }));
} catch (error) {
  process.stderr.write(`docs: ${(error as Error).message}\n\n${USAGE}\n`);
  process.exit(2);
}
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

const started = Date.now();
try {
  const pages = await buildDocs({
    ...(values.out ? { outDir: values.out } : {}),
    log: (line) => process.stdout.write(`  ${line}\n`),
  });
  // The default site is recorded as built from the inputs as they are, for docs:serve.
  if (values.out === undefined) recordBuild(resolve(import.meta.dirname, '..'), SITE_INPUTS);
  const where = relative(process.cwd(), values.out ?? 'site') || '.';
  printWeights(resolve(values.out ?? resolve(import.meta.dirname, '..', 'site')), pages);
  process.stdout.write(
    `Wrote ${pages.length} pages to ${where}/ in ${((Date.now() - started) / 1000).toFixed(1)} s. Serve them with \`npm run docs:serve\`.\n`,
  );
} catch (error) {
  if (error instanceof DocsBuildError) {
    process.stderr.write(`docs: ${error.message}\n`);
    process.exit(1);
  }
  throw error;
}

/** Bytes on the wire (Brotli) of each reference and of the heaviest guide: the page alone, and a first visit with its assets. */
function printWeights(dir: string, pages: SitePage[]): void {
  const weights = new Map(measureSite(dir).map((w) => [w.file, w]));
  const kinds = new Map(pages.map((p) => [p.file, p.kind]));
  const guides = [...weights.values()].filter((w) => kinds.get(w.file) === 'guide');
  const shown = [...weights.values()].filter((w) => kinds.get(w.file) === 'reference');
  if (guides[0]) shown.push(guides[0]);
  process.stdout.write('Bytes on the wire (Brotli): the page alone / a first visit with its scripts, styles and pictures\n');
  for (const w of shown) {
    const note = kinds.get(w.file) === 'guide' ? `  (the heaviest of ${guides.length} guides)` : '';
    process.stdout.write(`  ${w.file.padEnd(22)} ${kilobytes(w.wire).padStart(9)} / ${kilobytes(w.firstVisit).padStart(9)}${note}\n`);
  }
}
