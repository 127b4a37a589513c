/**
 * One settings table (src/sandbox/settings.ts): the flags, variables, defaults, checks, `--help`
 * and the docs' tables all come from it and agree.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { withSettingsTables, SANDBOX_DOC } from '../../scripts/settings-table.js';
import { runSandbox } from '../../src/cli/sandbox-command.js';
import { DEFAULT_CONFIG, resolveConfig } from '../../src/sandbox/config.js';
import { SETTINGS, settingOptions, settingsFromFlags } from '../../src/sandbox/settings.js';

/** The value at the dotted `key` of `object` (the shorthand of both webhook URLs: the web flow's). */
function at(object: unknown, key: string): unknown {
  return (key === 'partner.webhookUrl' ? 'partner.webhookUrls.web' : key).split('.').reduce<unknown>((value, part) => (value as Record<string, unknown>)?.[part], object);
}

async function help(): Promise<string> {
  let output = '';
  expect(await runSandbox(['--help'], { write: (text) => (output += text) })).toBe(0);
  return output;
}

/** A valid value of `setting` other than its default, as text. */
function another(setting: (typeof SETTINGS)[number]): string {
  if (setting.kind === 'port') return '4321';
  if (setting.kind === 'count') return String(Math.min(setting.max!, 7));
  if (setting.kind === 'switch') return setting.default === true ? '0' : '1';
  return setting.key.includes('ebhook') ? 'http://127.0.0.1:9/hook' : `other-${setting.env.toLowerCase()}`;
}

describe('the settings table', () => {
  it('is what docs/sandbox.md shows, in its settings table and its memory budget table', () => {
    const text = readFileSync(SANDBOX_DOC, 'utf8');
    expect(text, 'run `npm run docs:settings` to write the tables from src/sandbox/settings.ts').toBe(withSettingsTables(text));
    expect(text).toContain('| `--max-json-members N` | `PAYLATER_MAX_JSON_MEMBERS` | `524288` |');
    expect(text).toContain('| Levels of nesting of one `notes` or pushed `data` | 64 |');
  });

  it('gives the defaults of the configuration', () => {
    for (const setting of SETTINGS) {
      if (setting.key === 'databaseUrl') continue;
      expect(at(DEFAULT_CONFIG, setting.key), setting.key).toBe(setting.default);
      expect(at(resolveConfig(), setting.key), setting.key).toBe(setting.default);
    }
    expect(DEFAULT_CONFIG.limits).toMatchObject({ jsonMembers: 524_288, jsonDepth: 64 });
  });

  it('is read from each environment variable, and each flag wins over its variable', () => {
    for (const setting of SETTINGS) {
      if (setting.key === 'databaseUrl') continue;
      const value = another(setting);
      const fromEnv = at(resolveConfig({}, { [setting.env]: value }), setting.key);
      expect(fromEnv, setting.env).not.toBe(setting.default);
      expect(String(fromEnv === true ? 1 : fromEnv === false ? 0 : fromEnv), setting.env).toBe(value);
      if (setting.flag === undefined || setting.kind === 'switch') continue;
      const flags = settingsFromFlags({ [setting.flag]: setting.kind === 'port' ? '4322' : setting.kind === 'count' ? String(Math.min(setting.max!, 9)) : `${value}x` });
      expect(at(resolveConfig(flags, { [setting.env]: value }), setting.key), setting.flag).not.toBe(fromEnv);
    }
    expect(settingsFromFlags({ 'no-published-test-partner': true })).toEqual({ publishedTestPartner: false });
    expect(settingsFromFlags({ 'require-status-signature': true })).toEqual({ requireStatusSignature: true });
  });

  it('checks every count with its bounds, by flag, by variable and in code, naming the setting', () => {
    for (const setting of SETTINGS.filter((each) => each.kind === 'count')) {
      const message = `must be a whole number from 1 to ${setting.max}`;
      expect(() => resolveConfig({}, { [setting.env]: String(setting.max! + 1) })).toThrow(`${setting.env} ${message}`);
      expect(() => resolveConfig({}, { [setting.env]: '0' })).toThrow(`${setting.env} ${message}`);
      expect(() => settingsFromFlags({ [setting.flag!]: 'x' })).toThrow(`--${setting.flag} ${message}`);
      const overrides = settingsFromFlags({ [setting.flag!]: '1' });
      const key = setting.key.split('.');
      // The same value set in code, one past the bound.
      const inCode = key.length === 1 ? { [key[0]!]: setting.max! + 1 } : { [key[0]!]: { [key[1]!]: setting.max! + 1 } };
      expect(resolveConfig(overrides)).toBeDefined();
      expect(() => resolveConfig(inCode)).toThrow(`--${setting.flag} ${message}`);
    }
  });

  it('is what --help says: every flag with its default, its bounds and its variable', async () => {
    const text = await help();
    const options = Object.keys(settingOptions());
    expect(options).toHaveLength(SETTINGS.filter((setting) => setting.flag !== undefined).length);
    for (const setting of SETTINGS) {
      if (setting.flag === undefined) {
        expect(text).toContain(`  ${setting.env}: ${setting.help} (default ${setting.shownDefault ?? setting.default})`);
        continue;
      }
      const section = text.slice(text.indexOf(`  --${setting.flag}`), text.indexOf('\n  --', text.indexOf(`  --${setting.flag}`) + 3));
      const flat = section.replace(/\s+/g, ' ');
      expect(flat, setting.flag).toContain(setting.kind === 'switch' ? `[${setting.env}=` : `[${setting.env}]`);
      if (setting.kind === 'count') expect(flat, setting.flag).toContain(`(default ${setting.default}`);
      if (setting.kind === 'count') expect(flat, setting.flag).toContain(`1 to ${setting.max})`);
    }
    expect(text.replace(/\s+/g, ' ')).toContain('--max-json-members N values in one notes or pushed data (default 524288, 1 to 10000000)');
    expect(text.replace(/\s+/g, ' ')).toContain('--max-json-depth N levels of nesting of one notes or pushed data (default 64, 1 to 64)');
  });
});
