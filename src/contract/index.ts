/**
 * The contract model: the API families, their bundled documents loaded once, and every schema of
 * them compiled with one Ajv configuration. See ./model.ts.
 */
export { FAMILIES, familyInfo, isFamily, type Family } from './families.js';
export {
  isWebhookFamily,
  WEBHOOK_EVENTS,
  WEBHOOK_FAMILIES,
  webhookEvents,
  type WebhookEvent,
  type WebhookFamily,
  type WebhookName,
} from './webhooks.js';
export {
  derefObject,
  escapePointer,
  HTTP_METHODS,
  isObject,
  operationEntries,
  safeDecode,
  type JsonObject,
  type OpenApiDocument,
  type OperationEntry,
} from './document.js';
export {
  compileContract,
  contractOf,
  isJsonType,
  type Contract,
  type ContractOperation,
  type ParameterLocation,
  type RequestInput,
  type RequestProblem,
  type ResponseCheck,
  type ValidRequest,
} from './model.js';
