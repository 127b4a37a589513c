/**
 * Global setup of the test suites: bundles the browser code into dist/browser/ (without the type
 * declarations), as `npm run build` does, so the sandbox under test serves the current sources.
 */
import { buildBrowser } from '../../scripts/build-browser.js';

export default async function setup(): Promise<void> {
  await buildBrowser({ types: false });
}
