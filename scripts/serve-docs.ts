/**
 * `npm run docs:serve`: serves the built site (site/, see `npm run docs`) on
 * http://127.0.0.1:4080, building it first when it is missing or its inputs changed since
 * (scripts/stale.ts; not for --dir, which is served as it is). Options: --port <n>, --host <address>, --dir <folder>, --sandbox <url>
 * (where the try-it console's requests go, and the sandbox the references name; default
 * PAYLATER_BASE_URL, else the sandbox of `npm start`). Ctrl-C (SIGINT),
 * SIGTERM or SIGHUP stop it, and so does the end of the npm process that started it (npm passes
 * signals to a shell that does not pass them on; src/cli/launcher.ts).
 * Exit codes: 0 after a stop, 1 when it cannot serve (port in use, no site), 2 for a usage error.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { watchLauncher } from '../src/cli/launcher.js';
import { ServeError, serveDocs } from './docs-server.js';
import { DocsBuildError } from './docs-policy.js';
import { SITE_INPUTS, buildDocs } from './docs-site.js';
import { isCurrent, recordBuild } from './stale.js';

const USAGE = `Usage: npm run docs:serve -- [--port <n>] [--host <address>] [--dir <folder>] [--sandbox <url>]

  --port <n>          default 4080 (0 picks a free port)
  --host <address>    default 127.0.0.1
  --dir <folder>      default site/
  --sandbox <url>     the sandbox the try-it console calls and the references name; default
                      PAYLATER_BASE_URL, else http://127.0.0.1:4000 (npm start)
  --help              show this text`;

function usageError(message: string): never {
  process.stderr.write(`docs:serve: ${message}\n\n${USAGE}\n`);
  process.exit(2);
}

let values: { port?: string; host?: string; dir?: string; sandbox?: string; help?: boolean };
try {
  ({ values } = parseArgs({
    options: { port: { type: 'string' }, host: { type: 'string' }, dir: { type: 'string' }, sandbox: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  }));
} catch (error) {
  usageError((error as Error).message);
}
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const port = Number(values.port ?? '4080');
if (!/^\d+$/.test(values.port ?? '4080') || port > 65_535) usageError(`--port must be a number from 0 to 65535 (got '${values.port}').`);

// The sandbox's one setting, as for the samples and the shops: --sandbox, else PAYLATER_BASE_URL.
const sandbox = values.sandbox ?? (process.env.PAYLATER_BASE_URL || 'http://127.0.0.1:4000');
if (!/^https?:\/\/[^/?#]+\/?$/.test(sandbox)) usageError(`--sandbox must be an http(s) origin such as http://127.0.0.1:4000 (got '${sandbox}').`);

// The default site is built first when it is missing or older than the guides and documents.
if (values.dir === undefined) {
  const root = resolve(import.meta.dirname, '..');
  if (!isCurrent(root, SITE_INPUTS)) {
    process.stdout.write('Building the site first (site/ is missing, or the guides or documents changed since it was built)...\n');
    try {
      await buildDocs({ log: (line) => process.stdout.write(`  ${line}\n`) });
    } catch (error) {
      if (!(error instanceof DocsBuildError)) throw error;
      process.stderr.write(`docs:serve: ${error.message}\n`);
      process.exit(1);
    }
    recordBuild(root, SITE_INPUTS);
  }
}

try {
  const server = await serveDocs({ port, sandbox, ...(values.host ? { host: values.host } : {}), ...(values.dir ? { dir: values.dir } : {}) });
  process.stdout.write(`Serving the documentation on ${server.url}/ (Ctrl-C stops)\n`);
  let stopping = false;
  const stop = () => {
    if (stopping) process.exit(1); // a second signal: do not wait
    stopping = true;
    void server.close().then(() => process.exit(0));
  };
  for (const name of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(name, stop);
  watchLauncher(() => {
    if (!stopping) stop();
  });
} catch (error) {
  if (error instanceof ServeError) {
    process.stderr.write(`docs:serve: ${error.message}\n`);
    process.exit(1);
  }
  throw error;
}
