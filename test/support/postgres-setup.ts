/**
 * Global setup of `npm run test:shared` (vitest.shared.config.ts): one private PostgreSQL cluster
 * for the run (test/support/postgres.ts). Its URL reaches the tests as `inject('postgresUrl')`;
 * test/support/sandbox.ts then starts every sandbox on a fresh database of it, so the sandbox's
 * own tests run against the shared store unchanged.
 */
import type { TestProject } from 'vitest/node';
import { postgresUnavailable, startPostgres } from './postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cluster = await startPostgres();
  if (cluster === undefined) {
    // Throws what to install: this command has nothing to run without PostgreSQL, whatever
    // PAYLATER_SKIP_POSTGRES says.
    postgresUnavailable({});
    throw new Error('npm run test:shared needs PostgreSQL');
  }
  project.provide('postgresUrl', cluster.url);
  return () => cluster.stop();
}
