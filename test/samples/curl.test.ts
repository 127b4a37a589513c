/** The curl samples (bash, curl, openssl) against the sandbox; the receivers run as CGI scripts. */
import { describeSamples } from './suite.js';

describeSamples({
  label: 'curl',
  files: { operation: 'sample.sh', webhook: 'receiver.cgi' },
  run: (file) => ({ command: 'bash', args: [file] }),
  receiver: { cgi: (file) => ({ command: 'bash', args: [file] }) },
});
