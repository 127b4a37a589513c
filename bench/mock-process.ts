/**
 * `node --import tsx bench/mock-process.ts GATEWAY_PORT SDK_PORT`: the Prism mock of the gateway and
 * SDK families (scripts/mock-servers.ts: a Prism process per family behind its error proxy), as the
 * sandbox bench measures it, in a process of its own. Started by bench/sandbox.ts so that the mock's
 * proxies do not share the load generator's event loop (autocannon runs in the bench's process)
 * while the sandbox and the bare server each have one of their own. Prints `ready` once both
 * answer; stops its Prism processes on SIGTERM or SIGINT.
 */
import { startMocks } from '../scripts/mock-servers.js';

const [gateway, sdk] = process.argv.slice(2).map(Number);
if (!Number.isInteger(gateway) || !Number.isInteger(sdk)) {
  process.stderr.write('usage: node --import tsx bench/mock-process.ts GATEWAY_PORT SDK_PORT\n');
  process.exit(2);
}
const mocks = await startMocks({ families: ['gateway', 'sdk'], ports: { gateway: gateway!, sdk: sdk! } });
const stop = (): void => {
  void mocks.stop().then(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
process.stdout.write('ready\n');
