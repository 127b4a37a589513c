/**
 * A stored record is never spread: the rule of store.ts and gateway/records.ts, checked here on the
 * code as the compiler types it rather than left to convention. A record read from the store is
 * frozen (store.ts), and a copy made from a frozen object with spread syntax (`{ ...record, x }`, or
 * the rest of a destructuring, `{ id, ...rest } = record`) takes V8's slow path and keeps most
 * fields in a second allocation; records are copied field by field by their `copy…` functions.
 *
 * The records are the types the sandbox keeps in its store: the type argument of every
 * `collection<T>(...)` and `observe<T>(...)` call under src/sandbox. Every object spread and
 * object rest under src/sandbox whose operand has one of those types (or that type or undefined)
 * fails the test, with its place. A spread of something else (a request body, a view's parts, a
 * record's `echoed` fields) is not concerned.
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPOSITORY } from '../support/hermetic.js';
import { compileSources } from '../support/typescript.js';

const SANDBOX = join(REPOSITORY, 'src/sandbox');

const SOURCES = readdirSync(SANDBOX, { recursive: true, encoding: 'utf8' })
  .filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))
  .map((name) => join(SANDBOX, name))
  .sort();

const program = compileSources(SOURCES);
const checker = program.getTypeChecker();
const files = SOURCES.map((path) => program.getSourceFile(path)).filter((file): file is ts.SourceFile => file !== undefined);

/** Calls everywhere under `files`, depth first. */
function eachNode(visit: (node: ts.Node, file: ts.SourceFile) => void): void {
  for (const file of files) {
    const walk = (node: ts.Node): void => {
      visit(node, file);
      ts.forEachChild(node, walk);
    };
    walk(file);
  }
}

/** The record types: the object types given to `collection<T>` and `observe<T>`, by name. */
function recordTypes(): Map<ts.Type, string> {
  const found = new Map<ts.Type, string>();
  eachNode((node) => {
    if (!ts.isCallExpression(node) || node.typeArguments?.length !== 1) return;
    const callee = node.expression;
    const name = ts.isPropertyAccessExpression(callee) ? callee.name.text : ts.isIdentifier(callee) ? callee.text : '';
    if (name !== 'collection' && name !== 'observe') return;
    const argument = node.typeArguments[0]!;
    const type = checker.getTypeFromTypeNode(argument);
    // Numbers and the like are not records; a type parameter (the stores' own generic code) is none either.
    if ((type.flags & ts.TypeFlags.Object) === 0 && (type.flags & ts.TypeFlags.Intersection) === 0) return;
    found.set(type, argument.getText());
  });
  return found;
}

const RECORDS = recordTypes();

/** The record type `expression` has (itself, or with `undefined`), if any. */
function recordOf(expression: ts.Expression): string | undefined {
  const type = checker.getTypeAtLocation(expression);
  const candidates = type.isUnion() ? type.types : [type];
  for (const candidate of candidates) {
    const name = RECORDS.get(candidate);
    if (name !== undefined) return name;
  }
  return undefined;
}

/** Every spread or rest of a record under src/sandbox: `file:line: text (Record)`. */
function recordSpreads(): string[] {
  const found: string[] = [];
  const report = (file: ts.SourceFile, node: ts.Node, record: string) => {
    const { line } = file.getLineAndCharacterOfPosition(node.getStart(file));
    found.push(`${relative(REPOSITORY, file.fileName)}:${line + 1}: ${node.getText(file)} (${record})`);
  };
  eachNode((node, file) => {
    if (ts.isSpreadAssignment(node)) {
      const record = recordOf(node.expression);
      if (record !== undefined) report(file, node, record);
    }
    // `const { a, ...rest } = record` and `({ a, ...rest }) => ...` given a record.
    if (ts.isObjectBindingPattern(node) && node.elements.some((element) => element.dotDotDotToken !== undefined)) {
      const type = checker.getTypeAtLocation(node);
      const candidates = type.isUnion() ? type.types : [type];
      const record = candidates.map((candidate) => RECORDS.get(candidate)).find((name) => name !== undefined);
      if (record !== undefined) report(file, node, record);
    }
  });
  return found;
}

describe('stored records are never spread (src/sandbox)', () => {
  it('finds the record types: what the families and the deliveries keep in the store', () => {
    const names = [...RECORDS.values()];
    expect(names).toEqual(expect.arrayContaining(['TransactionRecord', 'MerchantRecord', 'RefundRecord', 'SdkTransaction', 'WebTransaction', 'PersistedDelivery']));
  });

  it('no object spread or rest takes a stored record: copy it with its copy function, field by field', () => {
    const spreads = recordSpreads();
    expect(spreads, `spreads of stored records (frozen when read: copy them field by field):\n  ${spreads.join('\n  ')}`).toEqual([]);
  });
});
