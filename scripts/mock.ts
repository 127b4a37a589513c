/**
 * `npm run mock`: serves every API family from its bundled document with Prism, one process per
 * family (gateway 4010, extras 4011, web 4012, sdk 4013). See docs/mock.md.
 *
 *   npm run mock                                   all four families on 127.0.0.1
 *   npm run mock -- --family sdk --family web      some of them
 *   npm run mock -- --host 0.0.0.0                 listen on every address
 *   npm run mock -- --port-offset 100              ports 4110-4113
 *   PAYLATER_MOCK_PORT_OFFSET=100 npm run mock     the same (the README's mock snippets read it too)
 *   npm run mock -- --quiet                        do not echo Prism's request log
 *
 * Exit codes: 0 after a clean stop (Ctrl-C, SIGTERM), 1 when the mocks cannot start or one of
 * them dies, 2 for a wrong command line.
 */
import { parseArgs } from 'node:util';
import { watchLauncher } from '../src/cli/launcher.js';
import { FAMILIES, MOCK_PORTS, isFamily, type Family } from './families.js';
import { familyLabel, MockStartError, startMocks, type RunningMocks } from './mock-servers.js';

const USAGE = `Usage: npm run mock -- [--family <name>]... [--host <address>] [--port-offset <n>] [--quiet]

  --family <name>     serve only this family (repeatable): ${FAMILIES.join(', ')}; default all
  --host <address>    the address to listen on; default 127.0.0.1
  --port-offset <n>   add n to every port (${FAMILIES.map((f) => `${f} ${MOCK_PORTS[f]}`).join(', ')});
                      default PAYLATER_MOCK_PORT_OFFSET, else 0
                      Each family's Prism listens behind its port on a free port of 127.0.0.1
                      that the system picks (internal, loopback only, shown at start).
  --quiet             do not echo Prism's log lines
  --help              show this text`;

function usageError(message: string): never {
  process.stderr.write(`mock: ${message}\n\n${USAGE}\n`);
  process.exit(2);
}

let values: { family?: string[]; host?: string; 'port-offset'?: string; quiet?: boolean; help?: boolean };
try {
  ({ values } = parseArgs({
    options: {
      family: { type: 'string', multiple: true },
      host: { type: 'string' },
      'port-offset': { type: 'string' },
      quiet: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: false,
  }));
} catch (error) {
  usageError((error as Error).message);
}
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

const families: Family[] = [];
for (const name of values.family ?? FAMILIES) {
  if (!isFamily(name)) usageError(`unknown family '${name}'; the families are ${FAMILIES.join(', ')}.`);
  if (!families.includes(name)) families.push(name);
}
// The option, else the variable the README's mock snippets read their ports from: one setting moves both.
const offsetFromEnv = process.env.PAYLATER_MOCK_PORT_OFFSET;
const offsetSource = values['port-offset'] !== undefined || offsetFromEnv === undefined || offsetFromEnv === '' ? '--port-offset' : 'PAYLATER_MOCK_PORT_OFFSET';
const offsetText = values['port-offset'] ?? (offsetFromEnv === undefined || offsetFromEnv === '' ? '0' : offsetFromEnv);
const offset = Number(offsetText);
if (!/^-?\d+$/.test(offsetText) || families.some((f) => MOCK_PORTS[f] + offset < 1 || MOCK_PORTS[f] + offset > 65_535)) {
  usageError(`${offsetSource} must be an integer that keeps every port within 1-65535 (got '${offsetText}').`);
}
const host = values.host ?? '127.0.0.1';
const ports = Object.fromEntries(families.map((f) => [f, MOCK_PORTS[f] + offset])) as Record<Family, number>;

let ready = false;
let mocks: RunningMocks | undefined;
let shuttingDown = false;

async function shutdown(code: number): Promise<never> {
  shuttingDown = true;
  await mocks?.stop();
  process.exit(code);
}

for (const name of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(name, () => {
    if (shuttingDown) {
      process.stderr.write('mock: still stopping the Prism processes...\n');
      return;
    }
    process.stderr.write(`\nmock: ${name} received; stopping the mocks.\n`);
    void shutdown(0);
  });
}

// npm passes SIGINT and SIGTERM to the shell that runs the script, which does not pass them on:
// stop when the npm process, or a process between it and the mock, has ended (src/cli/launcher.ts).
watchLauncher((pid) => {
  if (shuttingDown) return;
  process.stderr.write(`mock: the process that started the mock (pid ${pid}) has ended; stopping the mocks.\n`);
  void shutdown(0);
});

const width = Math.max(...families.map((f) => f.length));
try {
  mocks = await startMocks({
    families,
    host,
    ports,
    onOutput: (family, line) => {
      if (ready && !values.quiet) process.stdout.write(`[${family}] ${line}\n`);
    },
  });
} catch (error) {
  if (error instanceof MockStartError) {
    const hint =
      error.port === undefined
        ? ''
        : ` Choose other ports with --port-offset <n> (npm run mock -- --port-offset 100 serves on ${families.map((f) => MOCK_PORTS[f] + 100).join(', ')}), or fewer families with --family.`;
    process.stderr.write(`mock: ${error.message}${hint}\n`);
    process.exit(1);
  }
  throw error;
}

for (const family of families) {
  process.stdout.write(
    `${family.padEnd(width)}  ${mocks.urls[family]}  (${familyLabel(family)}; its Prism, internal: 127.0.0.1:${mocks.internalPorts[family]})\n`,
  );
}
process.stdout.write(
  'Pick a response with the header `Prefer: code=401`, `Prefer: example=<name>` or `Prefer: dynamic=true` (docs/mock.md). Ctrl-C stops.\n',
);
ready = true;

const exit = await mocks.unexpectedExit;
if (!shuttingDown) {
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
  process.stderr.write(`mock: Prism for ${exit.family} ${how}; stopping the others.\nIts last output:\n${exit.output}\n`);
  await shutdown(1);
}
