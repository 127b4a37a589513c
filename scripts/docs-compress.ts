/**
 * Precompresses the built site: beside every text file of more than 1 KiB (HTML, JSON, CSS,
 * JavaScript, SVG, YAML, Markdown) a Brotli copy (`.br`) and a gzip copy (`.gz`), which the docs
 * server (scripts/docs-server.ts, sirv) sends to a browser that accepts them. Compressing once at
 * build time costs nothing per request and lets the server answer with the file's own validators.
 *
 * Brotli at quality 9, not 11: on a 3 MB reference page, 11 takes about 9 s and saves another
 * 10 %; 9 takes about 0.6 s. Node's zlib runs the work on its thread pool, so the event loop stays free.
 */
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';

const brotli = promisify(brotliCompress);
const gz = promisify(gzip);

/** The kinds of file worth compressing (images in PNG are already compressed). */
export const COMPRESSIBLE = new Set(['.html', '.json', '.css', '.js', '.mjs', '.svg', '.yaml', '.yml', '.md', '.txt', '.map']);

/** Below this size a compressed copy saves less than its headers cost. */
const MIN_BYTES = 1024;

export interface CompressedFile {
  file: string;
  bytes: number;
  br: number;
  gzip: number;
}

/** Writes `<file>.br` and `<file>.gz` for every compressible file under dir; returns what it wrote. */
export async function precompress(dir: string): Promise<CompressedFile[]> {
  const files: string[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !COMPRESSIBLE.has(extname(entry.name).toLowerCase())) continue;
    files.push(join(entry.parentPath, entry.name));
  }
  const results: CompressedFile[] = [];
  // Two at a time: the machine's cores are shared, and a reference page is a few megabytes.
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const file = files[next++] as string;
      if ((await stat(file)).size < MIN_BYTES) continue;
      const body = await readFile(file);
      const [br, gzipped] = await Promise.all([
        brotli(body, {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: 9,
            [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
            [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
          },
        }),
        gz(body, { level: 9 }),
      ]);
      await writeFile(`${file}.br`, br);
      await writeFile(`${file}.gz`, gzipped);
      results.push({ file, bytes: body.length, br: br.length, gzip: gzipped.length });
    }
  };
  await Promise.all([worker(), worker()]);
  return results;
}
