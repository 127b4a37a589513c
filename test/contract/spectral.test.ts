/**
 * The bundles hold up under Spectral, as other teams run it: Spectral's `spectral:oas` ruleset
 * finds nothing, and the OWASP API Security ruleset finds only what the described service forces
 * (scripts/lint-spectral.ts lists those by rule code and path, with their reasons; docs/linting.md
 * explains them to readers).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { FORCED, formatFinding, lint, stale, unexpected, type Finding } from '../../scripts/lint-spectral.js';
import { bundleOf, FAMILIES, isObject, requireDocument, ROOT } from '../support/documents.js';

const SPECTRAL_MS = 120_000;

let oas: Finding[] = [];
let owasp: Finding[] = [];

beforeAll(() => {
  oas = lint('oas');
  owasp = lint('owasp');
}, 2 * SPECTRAL_MS);

const list = (findings: readonly Pick<Finding, 'ruleset' | 'family' | 'code' | 'path'>[]): string =>
  findings.map((finding) => `\n  ${formatFinding(finding)}`).join('');

describe('Spectral (scripts/lint-spectral.ts)', () => {
  it('lints with the pinned Spectral CLI and OWASP ruleset', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    expect(manifest.devDependencies['@stoplight/spectral-cli']).toBe('6.16.3');
    expect(manifest.devDependencies['@stoplight/spectral-owasp-ruleset']).toBe('2.0.1');
    const installed = JSON.parse(
      readFileSync(join(ROOT, 'node_modules', '@stoplight', 'spectral-owasp-ruleset', 'package.json'), 'utf8'),
    ) as { version: string };
    expect(installed.version, 'the forced list was written against this version of the ruleset').toBe('2.0.1');
  });

  it('spectral:oas finds nothing in any bundle (errors, warnings, information or hints)', () => {
    expect(oas, `findings:${list(oas)}`).toEqual([]);
  });

  it('the OWASP ruleset finds nothing but the forced findings', () => {
    const extra = unexpected(owasp);
    expect(extra, `findings to fix in openapi/:${list(extra)}`).toEqual([]);
  });

  it('every forced finding still occurs, so the list stays exact', () => {
    const gone = stale(owasp);
    expect(gone, `listed as forced, no longer reported:${list(gone)}`).toEqual([]);
  });

  it('each forced finding has a reason, and docs/linting.md names its rule', () => {
    const guide = readFileSync(join(ROOT, 'docs', 'linting.md'), 'utf8');
    for (const forced of FORCED) {
      expect(forced.reason.length, formatFinding(forced)).toBeGreaterThan(40);
      expect(guide, `docs/linting.md does not name ${forced.code}`).toContain(forced.code);
    }
  });

  it.each(FAMILIES)("%s: the forced http servers are the local ones; the service's address is https", (family) => {
    const document = requireDocument(bundleOf(family));
    const servers = Array.isArray(document.servers) ? document.servers.filter(isObject) : [];
    const http = servers.map((server, index) => ({ index, url: String(server.url) })).filter((server) => server.url.startsWith('http:'));
    expect(http.map((server) => server.url).every((url) => /^http:\/\/127\.0\.0\.1:[0-9]+$/.test(url)), JSON.stringify(http)).toBe(true);
    const forcedPaths = FORCED.filter((forced) => forced.family === family && forced.code === 'owasp:api8:2023-no-server-http').map(
      (forced) => forced.path,
    );
    expect(forcedPaths.sort()).toEqual(http.map((server) => `/servers/${server.index}/url`).sort());
    const variables = servers.flatMap((server) => (isObject(server.variables) ? Object.values(server.variables).filter(isObject) : []));
    expect(variables.length).toBeGreaterThan(0);
    for (const variable of variables) expect(String(variable.default)).toMatch(/^https:\/\//);
  });
});
