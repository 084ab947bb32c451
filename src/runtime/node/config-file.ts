/** Reads the configuration file named by SVC_CONFIG (JSON or YAML) and the provider keys it points at. */
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ConfigError, DEFAULT_CONFIG, parseConfig, type GatewayConfig } from '../../config/schema.js';
import type { ProviderSecrets } from '../../providers/registry.js';

export function loadConfig(path: string | undefined): GatewayConfig {
  if (!path) return parseConfig(DEFAULT_CONFIG);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(`cannot read the configuration file ${path}: ${e instanceof Error ? e.message : String(e)}`);
  }
  let value: unknown;
  try {
    value = extname(path) === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (e) {
    throw new ConfigError(`${path} is not valid ${extname(path) === '.json' ? 'JSON' : 'YAML'}: ${e instanceof Error ? e.message : String(e)}`);
  }
  try {
    return parseConfig(value);
  } catch (e) {
    if (e instanceof ConfigError) throw new ConfigError(`${path}: ${e.message}`);
    throw e;
  }
}

/** Every provider that names an api_key_env must find it set: a missing key fails the start, not a request. */
export function providerSecrets(config: GatewayConfig, env: NodeJS.ProcessEnv): ProviderSecrets {
  const secrets: Record<string, string | null> = {};
  const missing: string[] = [];
  for (const [name, p] of Object.entries(config.providers)) {
    if (p.type === 'sandbox' || !p.api_key_env) continue;
    const value = env[p.api_key_env];
    if (!value) missing.push(`  providers.${name}.api_key_env: environment variable ${p.api_key_env} is not set`);
    secrets[name] = value ?? null;
  }
  if (missing.length > 0) throw new ConfigError(`invalid configuration:\n${missing.join('\n')}`);
  return secrets;
}
