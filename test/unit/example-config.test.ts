/** The example config the README shows stays valid and builds adapters of the three real provider types. */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/schema.js';
import { buildRoutingTable } from '../../src/providers/registry.js';
import { providerSecrets } from '../../src/runtime/node/config-file.js';

const text = readFileSync(new URL('../../examples/real-providers.yaml', import.meta.url), 'utf8');

describe('examples/real-providers.yaml', () => {
  it('validates, needs exactly the three keys, and routes every tier to two or more vendors', () => {
    const config = parseConfig(parse(text));
    expect(() => providerSecrets(config, {})).toThrow(/OPENAI_API_KEY[\s\S]*ANTHROPIC_API_KEY[\s\S]*GEMINI_API_KEY/);
    const secrets = providerSecrets(config, { OPENAI_API_KEY: 'o', ANTHROPIC_API_KEY: 'a', GEMINI_API_KEY: 'g' });
    const table = buildRoutingTable(config, secrets);
    for (const route of Object.values(table.tiers)) {
      const vendors = new Set(route.targets.map((t) => t.adapter.name));
      expect(vendors.size).toBeGreaterThanOrEqual(2);
      expect(route.targets.every((t) => t.adapter.paid)).toBe(true);
    }
    // Test keys never reach these paid providers.
    for (const route of Object.values(table.testTiers)) expect(route.targets.every((t) => !t.adapter.paid)).toBe(true);
  });

  it('is the config the README shows', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const shown = /```yaml\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('## Real providers')))?.[1] ?? '';
    const a = parseConfig(parse(shown));
    const b = parseConfig(parse(text));
    expect(a.aliases).toEqual(b.aliases);
    expect(Object.keys(a.providers)).toEqual(Object.keys(b.providers));
  });
});
