/**
 * The documents as documents: each bundle is valid OpenAPI 3.1 under the official schema, the
 * sources lint clean under redocly.yaml, the generated files are not stale, the generated types
 * compile, and every operation carries what integrators and tools rely on.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BUNDLES,
  bundleOf,
  FAMILIES,
  isObject,
  operationName,
  operationsOf,
  pathShape,
  requireDocument,
  ROOT,
  type Family,
  type JsonObject,
  type OperationEntry,
} from '../support/documents.js';
import { DESCRIPTION } from '../support/description.js';

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: readonly string[], cwd = ROOT): Promise<Run> {
  return new Promise((done) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', (error) => done({ status: null, stdout, stderr: `${stderr}${String(error)}` }));
    child.on('close', (status) => done({ status, stdout, stderr }));
  });
}

const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name);

/** Drops the Node-version banner of Redocly CLI so that a failure message shows what matters. */
function withoutBanner(text: string): string {
  return text
    .split('\n')
    .filter((line) => !/[║╔╚]/.test(line) && line.trim() !== '')
    .join('\n');
}

/** The JSON objects of a stream that holds several of them back to back (one per linted API). */
function jsonObjects(text: string): unknown[] {
  const objects: unknown[] = [];
  let depth = 0;
  let start = 0;
  let inString = false;
  let escaped = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (inString) {
      if (escaped) escaped = false;
      else if (char === '\\') escaped = true;
      else if (char === '"') inString = false;
    } else if (char === '"' && depth > 0) {
      inString = true;
    } else if (char === '{') {
      if (depth === 0) start = index;
      depth += 1;
    } else if (char === '}' && depth > 0) {
      depth -= 1;
      if (depth === 0) objects.push(JSON.parse(text.slice(start, index + 1)));
    }
  }
  return objects;
}

interface LintSummary {
  reports: number;
  errors: number;
  warnings: number;
  problems: string[];
}

function summariseLint(stdout: string): LintSummary {
  const summary: LintSummary = { reports: 0, errors: 0, warnings: 0, problems: [] };
  for (const report of jsonObjects(stdout)) {
    if (!isObject(report) || !isObject(report.totals)) continue;
    summary.reports += 1;
    summary.errors += Number(report.totals.errors);
    summary.warnings += Number(report.totals.warnings);
    for (const problem of Array.isArray(report.problems) ? report.problems : []) {
      if (!isObject(problem)) continue;
      const location = Array.isArray(problem.location) && isObject(problem.location[0]) ? problem.location[0] : {};
      const source = isObject(location.source) ? String(location.source.ref) : '?';
      summary.problems.push(`${String(problem.severity)} ${String(problem.ruleId)} ${source}${String(location.pointer ?? '')}: ${String(problem.message)}`);
    }
  }
  return summary;
}

/** The exports every generated type module must have; the webhooks only where the family has webhooks. */
const TYPE_EXPORTS: Record<Family, string[]> = {
  gateway: ['paths', 'components', 'operations', 'webhooks'],
  extras: ['paths', 'components', 'operations'],
  web: ['paths', 'components', 'operations', 'webhooks'],
  sdk: ['paths', 'components', 'operations', 'webhooks'],
};

const typeModules = FAMILIES.map((family) => ({ family, file: `generated/types/${family}.d.ts` }));
let typesDir: string | undefined;

/** Compiles every generated type module that exists, plus a module that imports their exports. */
function compileTypes(): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'paylater-types-'));
  typesDir = dir;
  const present = typeModules.filter((module) => existsSync(join(ROOT, module.file)));
  const lines = present.flatMap(({ family, file }) => {
    let specifier = relative(dir, join(ROOT, file)).replace(/\.d\.ts$/, '.js');
    if (!specifier.startsWith('.')) specifier = `./${specifier}`;
    const exported = TYPE_EXPORTS[family].map((name) => `${family}.${name}`).join(', ');
    return [`import type * as ${family} from '${specifier}';`, `export type ${family}Exports = [${exported}];`];
  });
  writeFileSync(join(dir, 'exports.mts'), `${lines.join('\n')}\nexport {};\n`);
  const config = {
    compilerOptions: {
      strict: true,
      noEmit: true,
      skipLibCheck: false,
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      types: [],
    },
    files: [...present.map((module) => join(ROOT, module.file)), join(dir, 'exports.mts')],
  };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(config, null, 2));
  return run(bin('tsc'), ['-p', join(dir, 'tsconfig.json')]);
}

let lint: Run;
let generateCheck: Run;
let typesCompile: Run;

beforeAll(async () => {
  [lint, generateCheck, typesCompile] = await Promise.all([
    run(bin('redocly'), ['lint', '--format=json']),
    run(bin('tsx'), ['scripts/generate.ts', '--check']),
    compileTypes(),
  ]);
});

afterAll(() => {
  if (typesDir !== undefined) rmSync(typesDir, { recursive: true, force: true });
});

describe('bundled documents', () => {
  it.each(BUNDLES.map((bundle) => [bundle.file, bundle] as const))('%s is present', (_file, bundle) => {
    expect(bundle.problem, bundle.problem).toBeUndefined();
  });

  it.each(BUNDLES.map((bundle) => [bundle.file, bundle] as const))('%s is valid OpenAPI 3.1 (official schema)', async (file, bundle) => {
    const validator = new Validator();
    const result = await validator.validate(requireDocument(bundle));
    expect(validator.version, `${file}: OpenAPI version`).toBe('3.1');
    expect(result.valid, `${file}: ${JSON.stringify(result.errors, null, 2)}`).toBe(true);
  });
});

describe('redocly lint (redocly.yaml)', () => {
  it('lints every family document', () => {
    const summary = summariseLint(lint.stdout);
    expect(summary.reports, `redocly lint reported on ${summary.reports} of ${FAMILIES.length} documents:\n${withoutBanner(lint.stderr)}`).toBe(
      FAMILIES.length,
    );
  });

  it('reports zero errors and zero warnings', () => {
    const summary = summariseLint(lint.stdout);
    const message = `redocly lint (exit ${String(lint.status)}):\n  ${summary.problems.join('\n  ')}\n${withoutBanner(lint.stderr)}`;
    expect(summary.errors, message).toBe(0);
    expect(summary.warnings, message).toBe(0);
    expect(lint.status, message).toBe(0);
  });
});

describe('generated files', () => {
  it('are up to date (scripts/generate.ts --check)', () => {
    expect(generateCheck.status, `npm run generate:check failed:\n${withoutBanner(generateCheck.stderr)}\n${generateCheck.stdout}`).toBe(0);
  });

  it.each(typeModules.map((module) => [module.file] as const))('%s exists', (file) => {
    expect(existsSync(join(ROOT, file)), `${file} is missing: run npm run generate`).toBe(true);
  });

  it('compile with tsc --strict --skipLibCheck false and export paths, components, operations (and webhooks where the family has them)', () => {
    expect(typesCompile.status, `tsc over generated/types failed:\n${typesCompile.stdout}\n${typesCompile.stderr}`).toBe(0);
  });
});

/** The browser script: the operation the description names only by its URL. It needs no credentials. */
const publicOperations = DESCRIPTION.operations
  .filter((operation) => operation.method === null)
  .map((operation) => ({ family: operation.family, path: operation.path }));

function isPublic(family: Family, entry: OperationEntry): boolean {
  return (
    entry.kind === 'path' &&
    entry.method === 'get' &&
    publicOperations.some((operation) => operation.family === family && pathShape(operation.path) === pathShape(entry.key))
  );
}

function nonEmptyString(value: unknown): boolean {
  return typeof value === 'string' && value.trim().length > 0;
}

/** What an operation lacks; empty when it has everything. */
function operationProblems(family: Family, document: JsonObject, entry: OperationEntry): string[] {
  const { operation } = entry;
  const problems: string[] = [];
  for (const field of ['operationId', 'summary', 'description']) {
    if (!nonEmptyString(operation[field])) problems.push(`no ${field}`);
  }
  if (!Array.isArray(operation.tags) || operation.tags.length === 0) problems.push('no tags');
  if (entry.kind === 'webhook') return problems;

  const schemes = isObject(document.components) && isObject(document.components.securitySchemes) ? document.components.securitySchemes : {};
  if (isPublic(family, entry)) {
    // One empty requirement: anonymous access, stated explicitly (an empty list reads as "security
    // forgotten" to the OWASP ruleset, owasp:api2:2023-read-restricted).
    const security = operation.security;
    if (!Array.isArray(security) || security.length !== 1 || !isObject(security[0]) || Object.keys(security[0]).length !== 0) {
      problems.push('the browser script is public: it needs an explicit "security: [{}]" (one empty requirement)');
    }
  } else {
    const security = operation.security ?? document.security;
    if (!Array.isArray(security) || security.length === 0) {
      problems.push('no security (neither its own nor the root\'s)');
    } else {
      for (const requirement of security) {
        const names = isObject(requirement) ? Object.keys(requirement) : [];
        if (names.length === 0) problems.push('a security requirement is empty (anonymous access)');
        for (const name of names) if (!(name in schemes)) problems.push(`security scheme ${name} is not in components.securitySchemes`);
      }
    }
  }

  const statuses = isObject(operation.responses) ? Object.keys(operation.responses) : [];
  if (!statuses.some((status) => /^4([0-9]{2}|XX)$/.test(status))) problems.push(`no 4xx response (has ${statuses.join(', ')})`);
  if (!statuses.includes('500')) problems.push(`no 500 response (has ${statuses.join(', ')})`);
  return problems;
}

const operations = BUNDLES.flatMap((bundle) =>
  bundle.document === undefined
    ? []
    : operationsOf(bundle.document).map((entry) => ({ family: bundle.family, document: bundle.document as JsonObject, entry })),
);

describe('every operation', () => {
  it('the description names one public URL, the browser script of the web flow', () => {
    expect(publicOperations.map((operation) => operation.family)).toEqual(['web']);
  });

  it.each(
    operations.map((item) => {
      const name = `${operationName(item.family, item.entry)} (${String(item.entry.operation.operationId)})`;
      const needs = item.entry.kind === 'webhook' ? 'operationId, summary, description, tags' : 'operationId, summary, description, tags, security, a 4xx and a 500';
      return [`${name} has ${needs}`, name, item] as const;
    }),
  )('%s', (_title, name, { family, document, entry }) => {
    const problems = operationProblems(family, document, entry);
    expect(problems, `${name}: ${problems.join('; ')}`).toEqual([]);
  });
});

describe('addresses and webhook credentials', () => {
  it.each(FAMILIES)("%s lists the description's address of its operations as a server variable", (family) => {
    const document = requireDocument(bundleOf(family));
    const servers = Array.isArray(document.servers) ? document.servers.filter(isObject) : [];
    const addresses = [...new Set(DESCRIPTION.operations.filter((operation) => operation.family === family).map((operation) => operation.address))];
    expect(addresses.length, `the description names no operation of ${family}`).toBeGreaterThan(0);
    const problems = addresses.flatMap((address) => {
      const name = address.slice(1, -1);
      const server = servers.find((candidate) => candidate.url === address);
      if (server === undefined) return [`no server with url '${address}'`];
      const variable = isObject(server.variables) ? server.variables[name] : undefined;
      if (!isObject(variable) || typeof variable.default !== 'string' || !/^https?:\/\//.test(variable.default)) {
        return [`server '${address}' has no variable '${name}' with an http(s) default`];
      }
      return [];
    });
    expect(problems).toEqual([]);
  });

  it.each(FAMILIES.filter((family) => family !== 'extras'))(
    '%s: every webhook declares "security: []" (the service signs it; it sends no credentials)',
    (family) => {
      const document = requireDocument(bundleOf(family));
      const webhooks = operationsOf(document).filter((entry) => entry.kind === 'webhook');
      expect(webhooks.length).toBeGreaterThan(0);
      const inheriting = webhooks
        .filter((entry) => !Array.isArray(entry.operation.security) || entry.operation.security.length !== 0)
        .map((entry) => `${operationName(family, entry)} (${String(entry.operation.operationId)})`);
      expect(inheriting, `webhooks that inherit the document's security: ${inheriting.join('; ')}`).toEqual([]);
    },
  );
});
