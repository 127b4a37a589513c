/** The PHP samples (php-cli with php-curl) against the sandbox; the receivers under `php -S`. */
import { describeSamples } from './suite.js';

describeSamples({
  label: 'PHP',
  files: { operation: 'sample.php', webhook: 'receiver.php' },
  run: (file) => ({ command: 'php', args: [file] }),
  receiver: { server: (file, port) => ({ command: 'php', args: ['-S', `127.0.0.1:${port}`, file] }) },
});
