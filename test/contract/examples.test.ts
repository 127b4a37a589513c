/**
 * Every example of the four bundled documents validates against its schema (JSON Schema 2020-12
 * with formats), and the documents have the named examples a reader, the mock and the docs need:
 * one per request body, at least one per response with content, one per stage step of the
 * gateway's transaction read.
 */
import { describe, expect, it } from 'vitest';
import {
  BUNDLES,
  bundleOf,
  derefObject,
  HTTP_METHODS,
  isObject,
  operationName,
  operationsOf,
  requireDocument,
  schemaProblems,
  where,
  type Family,
  type JsonObject,
} from '../support/documents.js';
import { DESCRIPTION } from '../support/description.js';

interface ExampleCase {
  family: Family;
  /** Where the example is. */
  label: string;
  /** The schema it must satisfy; undefined when there is none (that is a failure). */
  schema: string[] | undefined;
  value: unknown;
  /** A defect of the example's form found while collecting it. */
  problem: string | undefined;
}

const MAP_KEYWORDS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const LIST_KEYWORDS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SINGLE_KEYWORDS = [
  'items',
  'additionalItems',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
];

/**
 * Every example of a document, each with the schema it must satisfy. References are not
 * followed: what they point to is visited where it stands (components), once.
 */
function collectExamples(family: Family, document: JsonObject): ExampleCase[] {
  const cases: ExampleCase[] = [];
  const seenSchemas = new Set<string>();
  const add = (segments: string[], schema: string[] | undefined, value: unknown, problem?: string) =>
    cases.push({ family, label: `${family}: ${where(segments)}`, schema, value, problem });

  const visitSchema = (node: unknown, segments: string[]): void => {
    if (!isObject(node)) return;
    const key = segments.join('\u0000');
    if (seenSchemas.has(key)) return;
    seenSchemas.add(key);
    if ('examples' in node) {
      if (Array.isArray(node.examples)) node.examples.forEach((value, index) => add([...segments, 'examples', String(index)], segments, value));
      else add([...segments, 'examples'], segments, node.examples, 'a schema\'s "examples" must be an array (JSON Schema 2020-12)');
    }
    if ('example' in node) add([...segments, 'example'], segments, node.example);
    for (const keyword of MAP_KEYWORDS) {
      const map = node[keyword];
      if (isObject(map)) for (const [name, child] of Object.entries(map)) visitSchema(child, [...segments, keyword, name]);
    }
    for (const keyword of LIST_KEYWORDS) {
      const list = node[keyword];
      if (Array.isArray(list)) list.forEach((child, index) => visitSchema(child, [...segments, keyword, String(index)]));
    }
    for (const keyword of SINGLE_KEYWORDS) visitSchema(node[keyword], [...segments, keyword]);
  };

  /** `example` and `examples` of a media type, parameter or header, against its `schema`. */
  const visitExamplesOf = (node: JsonObject, segments: string[]): void => {
    const schema = 'schema' in node ? [...segments, 'schema'] : undefined;
    if (schema !== undefined) visitSchema(node.schema, schema);
    const missingSchema = schema === undefined ? 'there is no schema to validate this example against' : undefined;
    if ('example' in node) add([...segments, 'example'], schema, node.example, missingSchema);
    if (!('examples' in node)) return;
    if (!isObject(node.examples)) {
      add([...segments, 'examples'], schema, node.examples, '"examples" must be a map of named Example Objects');
      return;
    }
    for (const [name, raw] of Object.entries(node.examples)) {
      const example = derefObject(document, raw);
      const at = [...segments, 'examples', name];
      if (example === undefined || !('value' in example)) add(at, schema, undefined, 'the example has no "value" to validate');
      else add(at, schema, example.value, missingSchema);
    }
  };

  const visitContent = (content: unknown, segments: string[]): void => {
    if (!isObject(content)) return;
    for (const [mediaType, node] of Object.entries(content)) {
      if (isObject(node)) visitExamplesOf(node, [...segments, mediaType]);
    }
  };

  /** A Parameter or Header Object. */
  const visitParameter = (node: unknown, segments: string[]): void => {
    if (!isObject(node) || '$ref' in node) return;
    visitExamplesOf(node, segments);
    visitContent(node.content, [...segments, 'content']);
  };

  const visitHeaders = (headers: unknown, segments: string[]): void => {
    if (isObject(headers)) for (const [name, header] of Object.entries(headers)) visitParameter(header, [...segments, name]);
  };

  const visitResponse = (node: unknown, segments: string[]): void => {
    if (!isObject(node) || '$ref' in node) return;
    visitHeaders(node.headers, [...segments, 'headers']);
    visitContent(node.content, [...segments, 'content']);
  };

  const visitRequestBody = (node: unknown, segments: string[]): void => {
    if (!isObject(node) || '$ref' in node) return;
    visitContent(node.content, [...segments, 'content']);
  };

  const visitPathItem = (node: unknown, segments: string[]): void => {
    if (!isObject(node) || '$ref' in node) return;
    if (Array.isArray(node.parameters)) node.parameters.forEach((parameter, index) => visitParameter(parameter, [...segments, 'parameters', String(index)]));
    for (const method of HTTP_METHODS) {
      const operation = node[method];
      if (!isObject(operation)) continue;
      const at = [...segments, method];
      if (Array.isArray(operation.parameters)) operation.parameters.forEach((parameter, index) => visitParameter(parameter, [...at, 'parameters', String(index)]));
      visitRequestBody(operation.requestBody, [...at, 'requestBody']);
      if (isObject(operation.responses)) for (const [status, response] of Object.entries(operation.responses)) visitResponse(response, [...at, 'responses', status]);
      if (isObject(operation.callbacks)) {
        for (const [name, callback] of Object.entries(operation.callbacks)) {
          if (isObject(callback)) for (const [expression, item] of Object.entries(callback)) visitPathItem(item, [...at, 'callbacks', name, expression]);
        }
      }
    }
  };

  for (const section of ['paths', 'webhooks']) {
    const items = document[section];
    if (isObject(items)) for (const [key, item] of Object.entries(items)) visitPathItem(item, [section, key]);
  }
  const components = isObject(document.components) ? document.components : {};
  const each = (name: string, visit: (node: unknown, segments: string[]) => void) => {
    const section = components[name];
    if (isObject(section)) for (const [key, node] of Object.entries(section)) visit(node, ['components', name, key]);
  };
  each('schemas', visitSchema);
  each('parameters', visitParameter);
  each('headers', visitParameter);
  each('responses', visitResponse);
  each('requestBodies', visitRequestBody);
  each('pathItems', visitPathItem);
  return cases;
}

interface NamedExampleCase {
  label: string;
  family: Family;
  /** Names of the `examples` map of the media type (empty when it has none). */
  names: string[];
}

/** Every request body and every response with content, per media type, with its named examples. */
function collectNamedExampleSlots(family: Family, document: JsonObject): { requests: NamedExampleCase[]; responses: NamedExampleCase[] } {
  const requests: NamedExampleCase[] = [];
  const responses: NamedExampleCase[] = [];
  const namesOf = (mediaType: unknown): string[] =>
    isObject(mediaType) && isObject(mediaType.examples) ? Object.keys(mediaType.examples) : [];
  for (const entry of operationsOf(document)) {
    const name = `${operationName(family, entry)} (${String(entry.operation.operationId)})`;
    const body = derefObject(document, entry.operation.requestBody);
    if (body !== undefined && isObject(body.content)) {
      for (const [mediaType, node] of Object.entries(body.content)) {
        requests.push({ family, label: `${name} request ${mediaType}`, names: namesOf(node) });
      }
    }
    if (!isObject(entry.operation.responses)) continue;
    for (const [status, raw] of Object.entries(entry.operation.responses)) {
      const response = derefObject(document, raw);
      if (response === undefined || !isObject(response.content)) continue;
      for (const [mediaType, node] of Object.entries(response.content)) {
        responses.push({ family, label: `${name} ${status} ${mediaType}`, names: namesOf(node) });
      }
    }
  }
  return { requests, responses };
}

const present = BUNDLES.filter((bundle) => bundle.document !== undefined);
const examples = present.flatMap((bundle) => collectExamples(bundle.family, bundle.document as JsonObject));
const slots = present.map((bundle) => collectNamedExampleSlots(bundle.family, bundle.document as JsonObject));

describe('bundled documents with examples', () => {
  it.each(BUNDLES.map((bundle) => [bundle.file, bundle] as const))('%s is present', (_file, bundle) => {
    expect(bundle.problem, bundle.problem).toBeUndefined();
  });

  it.each(present.map((bundle) => bundle.family))('%s has examples to check', (family) => {
    expect(examples.filter((example) => example.family === family).length).toBeGreaterThan(0);
  });
});

describe('every example validates against its schema', () => {
  it.each(examples.map((example) => [example.label, example] as const))('%s', (_label, example) => {
    expect(example.problem, example.problem).toBeUndefined();
    const schema = example.schema as string[];
    const problems = schemaProblems(example.family, schema, example.value);
    expect(problems, `${example.label}\n${JSON.stringify(example.value)}\n  ${problems.join('\n  ')}`).toEqual([]);
  });
});

describe('every request body has a named example', () => {
  it.each(slots.flatMap((slot) => slot.requests).map((slot) => [slot.label, slot] as const))('%s', (_label, slot) => {
    expect(slot.names, `${slot.label}: no named example (an "examples" map)`).not.toEqual([]);
  });
});

describe('every response with content has a named example', () => {
  it.each(slots.flatMap((slot) => slot.responses).map((slot) => [slot.label, slot] as const))('%s', (_label, slot) => {
    expect(slot.names, `${slot.label}: no named example (an "examples" map)`).not.toEqual([]);
  });
});

describe('gateway getTransaction', () => {
  const steps = DESCRIPTION.stageSteps;

  it('the description lists the five stage steps', () => {
    expect(steps).toEqual(['authenticate', 'wait', 'payment', 'success', 'failure']);
  });

  it.each(steps)('200 has an example of the step %s', (step) => {
    const bundle = bundleOf('gateway');
    const document = requireDocument(bundle);
    const entry = operationsOf(document).find((candidate) => candidate.operation.operationId === 'getTransaction');
    expect(entry, `${bundle.file} has no operation getTransaction`).toBeDefined();
    const responses = isObject(entry?.operation.responses) ? entry.operation.responses : {};
    const ok = derefObject(document, responses['200']);
    expect(ok, 'getTransaction has no 200 response').toBeDefined();
    const found: string[] = [];
    for (const mediaType of Object.values(isObject(ok?.content) ? ok.content : {})) {
      if (!isObject(mediaType) || !isObject(mediaType.examples)) continue;
      for (const [name, raw] of Object.entries(mediaType.examples)) {
        const value = derefObject(document, raw)?.value;
        if (stepOf(value) === step) found.push(name);
      }
    }
    expect(found, `getTransaction 200 has no named example whose transactionStage.nextStep.step is '${step}'`).not.toEqual([]);
  });
});

/** `value.transactionStage.nextStep.step` of an example value, if it has one. */
function stepOf(value: unknown): unknown {
  const stage = isObject(value) ? value.transactionStage : undefined;
  const nextStep = isObject(stage) ? stage.nextStep : undefined;
  return isObject(nextStep) ? nextStep.step : undefined;
}
