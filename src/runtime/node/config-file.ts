/** Reads the configuration file named by SVC_CONFIG (JSON or YAML) and the provider keys it points at. */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname } from 'node:path';
import { ConfigError, DEFAULT_CONFIG, parseConfig, type GatewayConfig } from '../../config/schema.js';

/**
 * The YAML parser, loaded the first time a YAML file is read: most gateways run on the built-in catalog or
 * a JSON file and should not hold it in memory. Through `require` so that loading stays synchronous.
 */
function yamlParser(): (text: string) => unknown {
  const yaml = createRequire(import.meta.url)('yaml') as typeof import('yaml');
  return (text) => yaml.parse(text);
}

export function loadConfig(path: string | undefined): GatewayConfig {
  if (!path) return parseConfig(DEFAULT_CONFIG);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(`cannot read the configuration file ${path}: ${e instanceof Error ? e.message : String(e)}`);
  }
  // Loaded outside the try: a parser that cannot be loaded is not the file's fault.
  const parse = extname(path) === '.json' ? JSON.parse : yamlParser();
  let value: unknown;
  try {
    value = parse(text);
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

export { providerSecrets } from '../../config/provider-secrets.js';
