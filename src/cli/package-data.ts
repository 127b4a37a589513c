/**
 * What the command line reads from the package at run time, relative to this module so that it works
 * the same from the sources (src/cli, run with tsx) and from the build (dist/cli): the version in
 * package.json, and values of the contract from the bundled documents (generated/openapi/*.json),
 * never typed again by hand.
 */
import { readFileSync } from 'node:fs';
import type { components } from '../../generated/types/web.js';

/** The package root: src/cli/../.. and dist/cli/../.. alike. */
const ROOT = new URL('../../', import.meta.url);

function readJson(relative: string): unknown {
  return JSON.parse(readFileSync(new URL(relative, ROOT), 'utf8')) as unknown;
}

/** The `version` of the package's package.json. */
export function packageVersion(): string {
  const manifest = readJson('package.json') as { version?: unknown };
  if (typeof manifest.version !== 'string') throw new Error('package.json has no version');
  return manifest.version;
}

export type WebTransactionStatus = components['schemas']['WebTransactionStatus'];

let webStatuses: readonly WebTransactionStatus[] | undefined;

/**
 * The status values of the web flow (`WebTransactionStatus` in generated/openapi/web.json): what a
 * status signature may be computed over.
 */
export function webTransactionStatuses(): readonly WebTransactionStatus[] {
  if (webStatuses === undefined) {
    const document = readJson('generated/openapi/web.json') as {
      components?: { schemas?: { WebTransactionStatus?: { enum?: unknown } } };
    };
    const values = document.components?.schemas?.WebTransactionStatus?.enum;
    if (!Array.isArray(values) || !values.every((value) => typeof value === 'string')) {
      throw new Error('generated/openapi/web.json has no WebTransactionStatus enum; run npm run generate');
    }
    webStatuses = Object.freeze(values as WebTransactionStatus[]);
  }
  return webStatuses;
}
