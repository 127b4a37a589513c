/**
 * The settings of one contract-kit run, read from the environment of the Dredd run
 * (./run.ts sets them; the same variables work with a plain `dredd --hookfiles`).
 * The private key and passwords are only ever read from here, never printed.
 */
import { randomBytes } from 'node:crypto';
import { FAMILIES, isFamily } from '../../src/contract/index.js';

/** The environment variables, by setting. */
export const ENV = {
  family: 'PAYLATER_CONTRACT_FAMILY',
  server: 'PAYLATER_CONTRACT_SERVER',
  document: 'PAYLATER_CONTRACT_DOCUMENT',
  mock: 'PAYLATER_CONTRACT_MOCK',
  proxy: 'PAYLATER_CONTRACT_PROXY',
  controls: 'PAYLATER_CONTRACT_CONTROLS',
  names: 'PAYLATER_CONTRACT_NAMES',
  runId: 'PAYLATER_CONTRACT_RUN_ID',
  waitSeconds: 'PAYLATER_CONTRACT_WAIT_SECONDS',
  username: 'PAYLATER_USERNAME',
  password: 'PAYLATER_PASSWORD',
  partnerId: 'PAYLATER_PARTNER_ID',
  privateKey: 'PAYLATER_PRIVATE_KEY',
} as const;

/** A fresh run id: letters and digits only, so `${runId}_${suffix}` is a valid id (D24). */
export function newRunId(): string {
  return `ck${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}

/** The settings of one run. */
export type Settings = ReturnType<typeof readSettings>;

export function readSettings(env: NodeJS.ProcessEnv) {
  const family = env[ENV.family];
  if (!isFamily(family)) {
    throw new Error(`${ENV.family} must be one of ${FAMILIES.join(', ')} (got ${JSON.stringify(family)})`);
  }
  const server = env[ENV.server];
  if (!server) throw new Error(`${ENV.server} is required`);
  const document = env[ENV.document];
  if (!document) throw new Error(`${ENV.document} is required (the bundled document of the family)`);
  const waitSeconds = Number(env[ENV.waitSeconds] || 120);
  return {
    family,
    server: server.replace(/\/+$/, ''),
    document,
    mock: env[ENV.mock] === '1' || env[ENV.mock] === 'true',
    proxy: env[ENV.proxy] === '1' || env[ENV.proxy] === 'true',
    /** Where the sandbox's test controls (`/sandbox/...`) are; by default the server itself. */
    controls: (env[ENV.controls] || server).replace(/\/+$/, ''),
    runId: env[ENV.runId] || newRunId(),
    waitSeconds: Number.isFinite(waitSeconds) && waitSeconds > 0 ? waitSeconds : 120,
    username: env[ENV.username] || '',
    password: env[ENV.password] || '',
    partnerId: env[ENV.partnerId] || '',
    privateKey: env[ENV.privateKey] || '',
  };
}
