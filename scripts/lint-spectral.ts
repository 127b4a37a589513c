/**
 * Lints the four bundled documents (generated/openapi/<family>.json) with Spectral, the linter
 * other teams point at OpenAPI documents, under the two rulesets kept in scripts/spectral/:
 *
 *   scripts/spectral/oas.yaml    Spectral's own `spectral:oas` ruleset
 *   scripts/spectral/owasp.yaml  the OWASP API Security Top 10 2023 ruleset (@stoplight/spectral-owasp-ruleset)
 *
 *   npm run lint:spectral   prints every finding; exits 1 on a finding that is not forced, or when a
 *                           forced finding no longer occurs (the list below must stay exact)
 *
 * A finding is forced when the described service itself causes it: HTTP Basic, the local http
 * servers, the public browser script. FORCED names each one by ruleset, family, rule code and path,
 * with its reason; docs/linting.md explains them. Every other finding is fixed in openapi/.
 * test/contract/spectral.test.ts runs the same check.
 */
import { spawnSync } from 'node:child_process';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FAMILIES, type Family } from './families.js';

const root = resolve(import.meta.dirname, '..');

export const RULESETS = {
  oas: 'scripts/spectral/oas.yaml',
  owasp: 'scripts/spectral/owasp.yaml',
} as const;
export type Ruleset = keyof typeof RULESETS;

/** Spectral's severities, by their number in its JSON output. */
const SEVERITIES = ['error', 'warning', 'information', 'hint'] as const;

export interface Finding {
  ruleset: Ruleset;
  family: Family;
  code: string;
  /** A JSON pointer into the bundle, e.g. `/paths/~1sdk.js/get/responses`. */
  path: string;
  severity: (typeof SEVERITIES)[number];
  message: string;
}

export interface Forced {
  ruleset: Ruleset;
  family: Family;
  code: string;
  path: string;
  reason: string;
}

const BASIC =
  'The interface description states HTTP Basic for these credentials, and the service accepts nothing else. ' +
  "They travel only over TLS (the operator's https address) and stay on servers.";
const LOCAL =
  'The local sandbox (npm start) and the Prism mock (npm run mock) listen on 127.0.0.1 without TLS; the traffic ' +
  "never leaves the machine. The service's own address is the https server variable.";
const PUBLIC_SCRIPT =
  'The description makes the browser script public: a script element sends no credentials, so the service never ' +
  'answers 401, and a documented 401 would describe an answer that cannot happen.';

const SHOP_ENDPOINT =
  "The callback's answers are the shop's endpoint's, not the service's (D73): the service promises nothing about " +
  'them, and counts any 2xx or 3xx as received, anything else as a reason to retry.';
const NOTES_CALLBACK = '/paths/~1api~1transaction/post/callbacks/notesWebhookUrl/{$request.body#~1notes~1webhook_url}/post/responses';

const localServers = (family: Family): Forced[] =>
  ['/servers/1/url', '/servers/2/url'].map((path) => ({ ruleset: 'owasp', family, code: 'owasp:api8:2023-no-server-http', path, reason: LOCAL }));

/** The findings the described service forces, each with its reason. */
export const FORCED: readonly Forced[] = [
  ...['merchantApiBasic', 'transactionalApiBasic'].map(
    (scheme): Forced => ({
      ruleset: 'owasp',
      family: 'gateway',
      code: 'owasp:api2:2023-no-http-basic',
      path: `/components/securitySchemes/${scheme}/scheme`,
      reason: BASIC,
    }),
  ),
  { ruleset: 'owasp', family: 'extras', code: 'owasp:api2:2023-no-http-basic', path: '/components/securitySchemes/extrasBasic/scheme', reason: BASIC },
  ...FAMILIES.flatMap(localServers),
  { ruleset: 'owasp', family: 'web', code: 'owasp:api8:2023-define-error-responses-401', path: '/paths/~1sdk.js/get/responses', reason: PUBLIC_SCRIPT },
  ...[
    'owasp:api4:2023-rate-limit-responses-429',
    'owasp:api8:2023-define-error-responses-401',
    'owasp:api8:2023-define-error-responses-500',
  ].map((code): Forced => ({ ruleset: 'owasp', family: 'web', code, path: NOTES_CALLBACK, reason: SHOP_ENDPOINT })),
  ...['2XX', '4XX'].map(
    (range): Forced => ({ ruleset: 'owasp', family: 'web', code: 'owasp:api4:2023-rate-limit', path: `${NOTES_CALLBACK}/${range}`, reason: SHOP_ENDPOINT }),
  ),
];

function pointer(path: readonly (string | number)[]): string {
  return path.map((segment) => `/${String(segment).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

interface SpectralResult {
  code: string | number;
  path: (string | number)[];
  severity: number;
  message: string;
  source?: string;
}

/** Runs the Spectral CLI with one ruleset over the four bundles; throws when Spectral itself fails. */
export function lint(ruleset: Ruleset): Finding[] {
  const documents = FAMILIES.map((family) => join('generated', 'openapi', `${family}.json`));
  const result = spawnSync(
    join(root, 'node_modules', '.bin', 'spectral'),
    ['lint', '--ruleset', RULESETS[ruleset], '--format', 'json', '--quiet', ...documents],
    { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1' } },
  );
  // Spectral exits 0 (no error-level finding) or 1 (findings); anything else is a failure of its own.
  let results: SpectralResult[] | undefined;
  try {
    results = JSON.parse(result.stdout) as SpectralResult[];
  } catch {
    results = undefined;
  }
  if ((result.status !== 0 && result.status !== 1) || !Array.isArray(results)) {
    throw new Error(
      `spectral lint --ruleset ${RULESETS[ruleset]} failed (exit ${String(result.status)}${result.error ? `, ${result.error.message}` : ''}):\n` +
        `${result.stderr}${result.stdout}`.trim().slice(0, 4000),
    );
  }
  return results.map((entry) => {
    const family = basename(entry.source ?? '', '.json') as Family;
    if (!FAMILIES.includes(family)) throw new Error(`spectral reported a finding for an unknown file: ${String(entry.source)}`);
    return {
      ruleset,
      family,
      code: String(entry.code),
      path: pointer(entry.path),
      severity: SEVERITIES[entry.severity] ?? 'error',
      message: entry.message,
    };
  });
}

const sameSpot = (finding: Pick<Finding, 'ruleset' | 'family' | 'code' | 'path'>, forced: Forced): boolean =>
  finding.ruleset === forced.ruleset && finding.family === forced.family && finding.code === forced.code && finding.path === forced.path;

/** The findings that FORCED does not list. */
export function unexpected(findings: readonly Finding[]): Finding[] {
  return findings.filter((finding) => !FORCED.some((forced) => sameSpot(finding, forced)));
}

/** The FORCED entries that no finding matches any more. */
export function stale(findings: readonly Finding[]): Forced[] {
  return FORCED.filter((forced) => !findings.some((finding) => sameSpot(finding, forced)));
}

export function formatFinding(finding: Pick<Finding, 'ruleset' | 'family' | 'code' | 'path'> & { severity?: string; message?: string }): string {
  const what = finding.message === undefined ? '' : ` ${finding.message}`;
  return `${finding.family.padEnd(8)} ${finding.code} ${finding.path}${finding.severity === undefined ? '' : ` [${finding.severity}]`}${what}`;
}

function main(): void {
  let failed = false;
  for (const ruleset of Object.keys(RULESETS) as Ruleset[]) {
    const findings = lint(ruleset);
    const extra = unexpected(findings);
    const gone = stale(findings).filter((forced) => forced.ruleset === ruleset);
    const forcedCount = findings.length - extra.length;
    console.log(`${RULESETS[ruleset]}: ${findings.length} finding(s), ${forcedCount} forced, ${extra.length} to fix`);
    for (const finding of findings) console.log(`  ${extra.includes(finding) ? 'FIX   ' : 'forced'} ${formatFinding(finding)}`);
    for (const forced of gone) console.log(`  STALE  ${formatFinding(forced)}: listed as forced in scripts/lint-spectral.ts, no longer reported`);
    if (extra.length > 0 || gone.length > 0) failed = true;
  }
  if (failed) {
    console.log('Fix the findings in openapi/ (then npm run generate), or, only for a finding the service forces, list it in FORCED with its reason and in docs/linting.md.');
    process.exitCode = 1;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main();
