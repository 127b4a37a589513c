/**
 * The parts of Dredd 14 the contract kit uses (Dredd ships no types). `hooks` is the module Dredd
 * hands a hook file when it loads it (through proxyquire).
 */
declare module 'hooks' {
  import type { DreddTransaction } from './types.js';

  type Done = () => void;
  interface DreddHooks {
    log(text: string): void;
    beforeAll(hook: (transactions: DreddTransaction[], done: Done) => void): void;
    beforeEach(hook: (transaction: DreddTransaction, done: Done) => void): void;
    beforeEachValidation(hook: (transaction: DreddTransaction, done: Done) => void): void;
  }
  const hooks: DreddHooks;
  export default hooks;
}

declare module 'dredd' {
  import type { EventEmitter } from 'node:events';

  interface DreddOptions {
    endpoint: string;
    path: string[];
    apiDescriptions: { location: string; content: string }[];
    hookfiles: string[];
    names: boolean;
    loglevel: string;
    color: boolean;
    emitter: EventEmitter;
  }
  interface DreddStats {
    tests: number;
    passes: number;
    failures: number;
    errors: number;
    skipped: number;
  }
  class Dredd {
    constructor(options: DreddOptions);
    run(callback: (error: Error | null | undefined, stats: DreddStats | undefined) => void): void;
  }
  export default Dredd;
}

/** Dredd's loggers are CommonJS modules whose `exports.default` is the logger. */
declare module 'dredd/build/logger' {
  const module: { default: { transports: { console: { level: string; colorize: boolean; silent: boolean } } } };
  export default module;
}

declare module 'dredd/build/reporters/reporterOutputLogger' {
  const module: { default: { transports: { console: { silent: boolean } } } };
  export default module;
}
