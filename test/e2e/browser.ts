/**
 * The one way the browser tests start Chromium: Debian's package (or CHROMIUM_PATH), headless, with
 * every background connection off, since no machine here reaches the internet.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(executablePath)) {
    throw new Error(`Chromium is not installed at ${executablePath}; run \`bash .ci/e2e-setup.sh\` (or set CHROMIUM_PATH).`);
  }
  return chromium.launch({
    executablePath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-quic',
      '--no-first-run',
    ],
  });
}
