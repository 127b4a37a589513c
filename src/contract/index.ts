/**
 * The contract model: the API families, their bundled documents loaded once, and every schema of
 * them compiled with one Ajv configuration. See ./model.ts.
 */
export { FAMILIES, isFamily, type Family } from './families.js';
export {
  deref,
  documentUrl,
  escapePointer,
  isObject,
  pointerGet,
  pointerOf,
  readDocument,
  resolveRef,
  unescapePointer,
  type JsonObject,
  type OpenApiDocument,
  type PathItem,
} from './document.js';
export {
  compileContract,
  contractOf,
  isJsonType,
  loadContract,
  type Contract,
  type ContractOperation,
  type ContractParameter,
  type ParameterLocation,
  type RequestCheck,
  type RequestInput,
  type RequestProblem,
  type ResponseCheck,
  type ValidRequest,
} from './model.js';
