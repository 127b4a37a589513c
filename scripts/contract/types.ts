/** The shapes the contract kit's modules pass around: Dredd's transaction, the kit's plans. */

/** A Dredd transaction, as far as the hooks read and change it. */
export interface DreddTransaction {
  name: string;
  /** The request path and query as sent, with the server URL's path prefix. */
  fullPath: string;
  request: { method: string; uri: string; headers: Record<string, string>; body?: string };
  expected: { statusCode: string | number; headers: Record<string, string>; body?: unknown; bodySchema?: unknown };
  real?: RealResponse;
  origin?: { resourceName?: string; exampleName?: string };
  skip?: boolean;
  fail?: string | boolean;
  /** What the kit planned for this transaction. */
  paylater?: Operation;
}

/** The response Dredd received. */
export interface RealResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body?: string;
  bodyEncoding?: string;
}

/** One transaction as the kit sees it: (path, method, status, media type) and what it expects. */
export interface Operation {
  name: string;
  /** The path template of the document (`/api/merchant/{id}`). */
  path: string;
  method: string;
  status: string;
  mediaType: string | undefined;
  /** The error code the request was built to cause. */
  expectCode?: string | undefined;
  /** Where the family's error body carries the code (`message` or `errorCode`). */
  codeField?: string;
  check?: ((real: RealResponse) => string[]) | undefined;
}

export type Edit = (transaction: DreddTransaction) => void;

/** The credentials put on a request: the right ones, or well-formed wrong ones (a 401). */
export type AuthMode = 'valid' | 'wrong';

/** How to cause one response code; see ./plans.ts. */
export interface Plan {
  skip?: string;
  auth?: AuthMode;
  edit?: Edit;
  prefer?: string;
  expectCode?: string;
  invalid?: boolean;
  check?: (real: RealResponse) => string[];
}
