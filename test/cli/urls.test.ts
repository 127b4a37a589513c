/**
 * One variable for the service's address (D77): `PAYLATER_BASE_URL`, which the guides' servers,
 * the samples, the example shop, `listen` and `trigger` read; `PAYLATER_SANDBOX_URL`, the name of
 * 2.0.0, still read with one deprecation line.
 */
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/command-line.js';
import { baseUrlFromEnvironment, sandboxUrl } from '../../src/cli/urls.js';

describe('the sandbox URL from the environment', () => {
  it('reads PAYLATER_BASE_URL, silently', () => {
    const lines: string[] = [];
    const url = sandboxUrl(undefined, 'paylater listen', { PAYLATER_BASE_URL: 'http://127.0.0.1:4100' }, (line) => lines.push(line));
    expect(url.href).toBe('http://127.0.0.1:4100/');
    expect(lines).toEqual([]);
  });

  it('still reads PAYLATER_SANDBOX_URL, with one deprecation line, and prefers the new name', () => {
    const lines: string[] = [];
    const warn = (line: string) => lines.push(line);
    expect(sandboxUrl(undefined, 'paylater trigger', { PAYLATER_SANDBOX_URL: 'http://127.0.0.1:4200' }, warn).port).toBe('4200');
    expect(lines).toEqual(['PAYLATER_SANDBOX_URL is deprecated and will be removed: set PAYLATER_BASE_URL instead (the same value).']);
    lines.length = 0;
    const both = { PAYLATER_SANDBOX_URL: 'http://127.0.0.1:4200', PAYLATER_BASE_URL: 'http://127.0.0.1:4300' };
    expect(sandboxUrl(undefined, 'paylater trigger', both, warn).port).toBe('4300');
    expect(lines).toEqual([]);
  });

  it('lets --sandbox win, treats an empty variable as unset, and names the variable of a bad value', () => {
    const lines: string[] = [];
    const warn = (line: string) => lines.push(line);
    expect(sandboxUrl('http://127.0.0.1:4400', 'paylater listen', { PAYLATER_SANDBOX_URL: 'http://x:1' }, warn).port).toBe('4400');
    expect(lines).toEqual([]);
    expect(sandboxUrl(undefined, 'paylater listen', { PAYLATER_BASE_URL: '' }, warn).href).toBe('http://127.0.0.1:4000/');
    expect(baseUrlFromEnvironment({ PAYLATER_BASE_URL: '', PAYLATER_SANDBOX_URL: '' }, warn)).toBeUndefined();
    expect(() => sandboxUrl(undefined, 'paylater listen', { PAYLATER_BASE_URL: 'ftp://x' }, warn)).toThrow(UsageError);
    expect(() => sandboxUrl(undefined, 'paylater listen', { PAYLATER_BASE_URL: 'ftp://x' }, warn)).toThrow(/^PAYLATER_BASE_URL takes an absolute/);
  });
});
