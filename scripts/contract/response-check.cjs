'use strict';
/**
 * The real response check of the contract kit. Dredd 14 does not validate OpenAPI 3 response
 * bodies (it ignores allOf/anyOf, pattern, formats, additionalProperties...), so every response is
 * checked here against the bundled document with Ajv (JSON Schema 2020-12, the dialect of
 * OpenAPI 3.1): status code, Content-Type, and the body against the schema of
 * (path, method, status, media type). The whole document is registered so `$ref`s resolve.
 */
const { readFileSync } = require('node:fs');
const Ajv2020Module = require('ajv/dist/2020');
const addFormatsModule = require('ajv-formats');

const Ajv2020 = Ajv2020Module.default || Ajv2020Module;
const addFormats = addFormatsModule.default || addFormatsModule;

const DOCUMENT_ID = 'https://contract-kit.paylater.invalid/document.json';
const MAX_ERRORS = 5;
const EXCERPT = 300;

function escapePointer(segment) {
  return String(segment).replace(/~/g, '~0').replace(/\//g, '~1');
}

function pointerGet(document, pointer) {
  if (!pointer.startsWith('#/')) throw new Error(`only local references are supported (got ${pointer})`);
  return pointer
    .slice(2)
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((node, key) => (node === undefined || node === null ? undefined : node[key]), document);
}

/** The media type of a Content-Type value, lower case, without parameters. */
function mediaTypeOf(contentType) {
  return String(contentType || '').split(';')[0].trim().toLowerCase();
}

function isJsonMediaType(mediaType) {
  return mediaType === 'application/json' || /^application\/[^;]+\+json$/.test(mediaType);
}

function header(headers, name) {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers || {})) {
    if (key.toLowerCase() === wanted) return Array.isArray(value) ? value.join(', ') : value;
  }
  return undefined;
}

function excerpt(text) {
  const flat = String(text || '').replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT ? `${flat.slice(0, EXCERPT)}...` : flat;
}

function describeAjvError(error) {
  const where = error.instancePath || '/';
  let text = `${where} ${error.message}`;
  if (error.keyword === 'enum' && error.params && error.params.allowedValues) {
    text += ` (${error.params.allowedValues.map((value) => JSON.stringify(value)).join(', ')})`;
  } else if (error.keyword === 'additionalProperties' && error.params) {
    text += ` ('${error.params.additionalProperty}')`;
  }
  return text;
}

class ResponseChecker {
  /** @param {string} documentPath the bundled OpenAPI 3.1 document of one family (JSON). */
  constructor(documentPath) {
    this.document = JSON.parse(readFileSync(documentPath, 'utf8'));
    this.ajv = new Ajv2020({ strict: false, allErrors: true, logger: false, validateFormats: true });
    addFormats(this.ajv);
    // OpenAPI's numeric formats: the type already says what is checked.
    for (const format of ['int32', 'int64', 'float', 'double']) this.ajv.addFormat(format, { type: 'number', validate: () => true });
    this.ajv.addSchema(this.document, DOCUMENT_ID);
    this.cache = new Map();
  }

  /** The operation object of (path, method), or undefined. */
  operation(path, method) {
    const item = this.document.paths && this.document.paths[path];
    return item ? item[method.toLowerCase()] : undefined;
  }

  /**
   * Where the response schema of (path, method, status, mediaType) is in the document, as a
   * JSON pointer, or undefined when the document gives no schema for it.
   */
  schemaPointer(path, method, status, mediaType) {
    const operation = this.operation(path, method);
    if (!operation || !operation.responses) return undefined;
    const code = String(status);
    const key = [code, `${code[0]}XX`, 'default'].find((candidate) => operation.responses[candidate] !== undefined);
    if (key === undefined) return undefined;
    let pointer = `#/paths/${escapePointer(path)}/${method.toLowerCase()}/responses/${escapePointer(key)}`;
    let response = operation.responses[key];
    for (let hops = 0; response && typeof response.$ref === 'string' && hops < 10; hops += 1) {
      pointer = response.$ref;
      response = pointerGet(this.document, pointer);
    }
    const media = response && response.content && response.content[mediaType];
    if (!media || media.schema === undefined) return undefined;
    return `${pointer}/content/${escapePointer(mediaType)}/schema`;
  }

  validator(pointer) {
    let validate = this.cache.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}${pointer}` });
      this.cache.set(pointer, validate);
    }
    return validate;
  }

  /**
   * What is wrong with a real response, as a list of sentences (empty when it is right).
   * @param {{ path: string, method: string, status: string|number, mediaType?: string,
   *           expectCode?: string, codeField?: string }} expected
   * @param {{ statusCode: number, headers: object, body?: string, bodyEncoding?: string }} real
   */
  check(expected, real) {
    const problems = [];
    if (!real) return ['no response was received'];
    const status = Number(expected.status);
    if (real.statusCode !== status) {
      problems.push(`status ${real.statusCode}, expected ${status}${real.body ? ` (body: ${excerpt(real.body)})` : ''}`);
      return problems;
    }
    const mediaType = expected.mediaType ? expected.mediaType.toLowerCase() : undefined;
    if (!mediaType) {
      if (real.body) problems.push(`a body was sent where the document describes none (${excerpt(real.body)})`);
      return problems;
    }
    const contentType = header(real.headers, 'content-type');
    if (contentType === undefined) {
      problems.push(`no Content-Type header, expected ${mediaType}`);
    } else if (mediaTypeOf(contentType) !== mediaType) {
      problems.push(`Content-Type is ${contentType}, expected ${mediaType}`);
    }
    const pointer = this.schemaPointer(expected.path, expected.method, status, mediaType);
    if (!isJsonMediaType(mediaType)) {
      if (!real.body) problems.push(`the body is empty, expected ${mediaType} content`);
      return problems;
    }
    if (!real.body) {
      problems.push(`the body is empty, expected ${mediaType}`);
      return problems;
    }
    if (real.bodyEncoding === 'base64') {
      problems.push('the body is not valid UTF-8');
      return problems;
    }
    let body;
    try {
      body = JSON.parse(real.body);
    } catch (error) {
      problems.push(`the body is not JSON (${error.message}): ${excerpt(real.body)}`);
      return problems;
    }
    if (pointer) {
      const validate = this.validator(pointer);
      if (!validate(body)) {
        const errors = validate.errors || [];
        const shown = errors.slice(0, MAX_ERRORS).map(describeAjvError);
        const more = errors.length > MAX_ERRORS ? ` (and ${errors.length - MAX_ERRORS} more)` : '';
        problems.push(`the body does not match the schema of ${status} ${mediaType}: ${shown.join('; ')}${more}; body: ${excerpt(real.body)}`);
      }
    }
    if (expected.expectCode && expected.codeField && problems.length === 0) {
      const actual = body && typeof body === 'object' ? body[expected.codeField] : undefined;
      if (actual !== expected.expectCode) {
        problems.push(
          `${expected.codeField} is ${JSON.stringify(actual)}, expected ${JSON.stringify(expected.expectCode)} (the request was built to cause it)`,
        );
      }
    }
    return problems;
  }
}

module.exports = { ResponseChecker, mediaTypeOf, header, pointerGet, escapePointer, excerpt };
