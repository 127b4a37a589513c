/** The Python samples (python3, standard library only) against the sandbox. */
import { describeSamples } from './suite.js';

describeSamples({
  label: 'Python',
  files: { operation: 'sample.py', webhook: 'receiver.py' },
  run: (file) => ({ command: 'python3', args: [file] }),
  receiver: { server: (file) => ({ command: 'python3', args: [file] }) },
});
