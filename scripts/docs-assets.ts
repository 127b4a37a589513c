/**
 * The site's shared assets named by the hash of their content (`assets/redoc.3f2a9c0d1e4b5a67.js`):
 * the Redoc bundle of the four references, the Scalar bundle of the console, the style sheet, the
 * search script and its index. A name that changes whenever the bytes change lets the docs server
 * (scripts/docs-server.ts) tell browsers to keep the file for a year without asking again
 * (`immutable`), so the megabytes of a renderer are downloaded once for the whole site, not with
 * every page. The hash is the first 16 hex digits of the content's SHA-256, as for the diagrams.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** A name ending in `<16 hex>.<extension>` under assets/ (`redoc.<hash>.js`, `diagrams/<hash>.svg`): the same name always holds the same bytes. */
export const HASHED_ASSET = /\/assets\/(?:[^/]+\/)*(?:[^/]+\.)?[0-9a-f]{16}\.[a-z0-9]+$/;

/** `redoc.js` and its content -> `redoc.<16 hex>.js` (the path under assets/ kept). */
export function hashedName(name: string, content: string | Uint8Array): string {
  const hash = createHash('sha256').update(content).digest('hex').slice(0, 16);
  const dot = name.lastIndexOf('.');
  return dot > name.lastIndexOf('/') ? `${name.slice(0, dot)}.${hash}${name.slice(dot)}` : `${name}.${hash}`;
}

/** Writes content under siteDir/assets/ by its hashed name; returns the page's link to it (`assets/...`). */
export function writeHashedAsset(siteDir: string, name: string, content: string | Uint8Array): string {
  const link = `assets/${hashedName(name, content)}`;
  const file = join(siteDir, link);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, content);
  return link;
}
