/**
 * The Node samples against the sandbox: each imports 'paylater-api', which resolves to this
 * repository's sources (run through tsx) in the work folder, as an installed package would.
 */
import { nodeProject } from './support.js';
import { describeSamples } from './suite.js';

let node: ReturnType<typeof nodeProject> | undefined;

describeSamples({
  label: 'Node',
  files: { operation: 'sample.mjs', webhook: 'receiver.mjs' },
  prepare: (dir) => {
    node = nodeProject(dir);
  },
  run: (file) => ({ command: node!.command, args: node!.args(file) }),
  receiver: { server: (file) => ({ command: node!.command, args: node!.args(file) }) },
});
