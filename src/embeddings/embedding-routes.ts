/**
 * The embedding aliases of the configuration (`embeddings:`), each with its price and its targets in
 * failover order; test keys get the free targets only, else a built-in sandbox.
 */
import type { GatewayConfig, ProviderConfig } from '../config/schema.js';
import { createGeminiEmbeddingAdapter } from '../providers/gemini/embeddings.js';
import { createOpenAICompatibleEmbeddingAdapter } from '../providers/openai-compatible/embeddings.js';
import { healthSettingsOf, type ProviderSecrets } from '../providers/registry.js';
import { capReplyBytes } from '../providers/upstream-byte-cap.js';
import { httpOverFetch, type UpstreamHttp } from '../providers/upstream-http.js';
import { createSandboxEmbeddingAdapter } from '../providers/sandbox/embeddings.js';
import { TargetHealth } from '../routing/health.js';
import type { EmbeddingAdapter } from './contract.js';

export interface EmbeddingTarget {
  adapter: EmbeddingAdapter;
  model: string;
  health: TargetHealth;
}

export interface EmbeddingRoute {
  alias: string;
  creditsPer1kTokens: number;
  description: string;
  targets: readonly EmbeddingTarget[];
  testTargets: readonly EmbeddingTarget[];
}

export type EmbeddingRoutes = ReadonlyMap<string, EmbeddingRoute>;

function adapterFor(name: string, p: ProviderConfig, secrets: ProviderSecrets, http: UpstreamHttp): EmbeddingAdapter | null {
  const common = { name, apiKey: secrets[name] ?? null, http, ...(p.type !== 'sandbox' && p.headers ? { extraHeaders: p.headers } : {}) };
  switch (p.type) {
    case 'openai-compatible':
      return createOpenAICompatibleEmbeddingAdapter({ ...common, baseUrl: p.base_url, paid: p.paid });
    case 'gemini':
      return createGeminiEmbeddingAdapter({ ...common, baseUrl: p.base_url, paid: p.paid });
    case 'sandbox':
      return createSandboxEmbeddingAdapter(name);
    case 'anthropic':
      return null; // refused by the config's validation: Anthropic has no embeddings API
  }
}

/** Upstream answers are read up to `server.max_upstream_response_bytes`, as the chat targets' are. */
export function buildEmbeddingRoutes(config: GatewayConfig, secrets: ProviderSecrets, http: UpstreamHttp = httpOverFetch(fetch)): EmbeddingRoutes {
  const settings = healthSettingsOf(config);
  const capped = capReplyBytes(http, config.server.max_upstream_response_bytes);
  const health = new Map<string, TargetHealth>();
  const healthOf = (provider: string, model: string): TargetHealth => {
    const id = `${provider}/${model}`;
    const h = health.get(id) ?? new TargetHealth(settings);
    health.set(id, h);
    return h;
  };
  const routes = new Map<string, EmbeddingRoute>();
  for (const [alias, spec] of Object.entries(config.embeddings)) {
    const targets = spec.targets.flatMap((t) => {
      const provider = config.providers[t.provider];
      const adapter = provider === undefined ? null : adapterFor(t.provider, provider, secrets, capped);
      return adapter === null ? [] : [{ adapter, model: t.model, health: healthOf(t.provider, t.model) }];
    });
    const free = targets.filter((t) => !t.adapter.paid);
    routes.set(alias, {
      alias,
      creditsPer1kTokens: spec.credits_per_1k_tokens,
      description: spec.description ?? 'Text embeddings.',
      targets,
      testTargets: free.length > 0 ? free : [{ adapter: createSandboxEmbeddingAdapter(), model: 'sandbox-embed', health: healthOf('sandbox', 'sandbox-embed') }],
    });
  }
  return routes;
}
