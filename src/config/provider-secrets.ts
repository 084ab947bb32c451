/**
 * The provider API keys a configuration names (`api_key_env`), read from the runtime's variables: Node's
 * environment, or a Worker's secrets. Runtime-agnostic.
 */
import { ConfigError, type GatewayConfig } from './schema.js';
import type { ProviderSecrets } from '../providers/registry.js';

/** Every provider that names an api_key_env must find it set: a missing key fails the start, not a request. */
export function providerSecrets(config: GatewayConfig, env: Readonly<Record<string, unknown>>): ProviderSecrets {
  const secrets: Record<string, string | null> = {};
  const missing: string[] = [];
  for (const [name, p] of Object.entries(config.providers)) {
    if (p.type === 'sandbox' || !p.api_key_env) continue;
    const raw = env[p.api_key_env];
    const value = typeof raw === 'string' && raw !== '' ? raw : undefined;
    if (!value) missing.push(`  providers.${name}.api_key_env: environment variable ${p.api_key_env} is not set`);
    secrets[name] = value ?? null;
  }
  if (missing.length > 0) throw new ConfigError(`invalid configuration:\n${missing.join('\n')}`);
  return secrets;
}
