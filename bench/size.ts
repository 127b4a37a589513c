/** Minified and gzipped size of the client entries a browser can import. */
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

export interface SizeFigures {
  entry: string;
  minifiedBytes: number;
  gzippedBytes: number;
}

/** The Basic-auth clients need no node: module; the signing clients are for servers only. */
const ENTRIES = ['src/clients/gateway.ts', 'src/clients/extras.ts'];

export async function benchSizes(): Promise<SizeFigures[]> {
  const figures: SizeFigures[] = [];
  for (const entry of ENTRIES) {
    const result = await build({ entryPoints: [entry], bundle: true, minify: true, platform: 'browser', format: 'esm', write: false, logLevel: 'silent' });
    const code = result.outputFiles[0]?.contents ?? new Uint8Array();
    figures.push({ entry, minifiedBytes: code.byteLength, gzippedBytes: gzipSync(code).byteLength });
  }
  return figures;
}
