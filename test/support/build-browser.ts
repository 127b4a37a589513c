/**
 * Global setup of the test suites: bundles the browser code into dist/browser/ (without the type
 * declarations), as `npm run build` does, so the sandbox under test serves the current sources.
 */
import { buildBrowser } from '../../scripts/build-browser.js';
import { oncePerRun } from './once-per-run.js';

/** Builds once per run however many projects call it (once-per-run.ts); the bundles stay. */
export default async function setup(): Promise<() => void> {
  const { teardown } = await oncePerRun('browser', () => buildBrowser({ types: false }), () => undefined);
  return teardown;
}
