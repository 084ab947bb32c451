/**
 * Builds provider adapters and the routing table from a validated configuration. The one place that
 * maps a provider `type` to its adapter factory.
 */
import type { GatewayConfig, ProviderConfig, TierAlias, TimeoutsConfig } from '../config/schema.js';
import type { Tier } from '../routing/auto/tier.js';
import { DEFAULT_DEADLINES, type Deadlines } from '../routing/deadlines.js';
import { DEFAULT_HEALTH, TargetHealth, type HealthSettings } from '../routing/health.js';
import type { RoutingTable, Target, TierRoute } from '../routing/router.js';
import type { ProviderAdapter } from './contract.js';
import { createAnthropicAdapter } from './anthropic/adapter.js';
import { createGeminiAdapter } from './gemini/adapter.js';
import { createOpenAICompatibleAdapter } from './openai-compatible/adapter.js';
import { createSandboxAdapter } from './sandbox/adapter.js';
import { capabilitiesFor } from './model-capabilities.js';
import { withTargetParams } from './target-params.js';
import { capReplyBytes } from './upstream-byte-cap.js';
import { httpOverFetch, type UpstreamHttp } from './upstream-http.js';
import { boundOutput } from './upstream-output-bound.js';

/** Provider API keys, resolved by the runtime from the environment variables the config names. */
export type ProviderSecrets = Readonly<Record<string, string | null>>;

const TIERS: Record<Tier, TierAlias> = { fast: 'svc-fast', code: 'svc-code', smart: 'svc-smart' };

/** Every adapter's answers are bounded: in bytes read (its transport) and in output past its `max_tokens`. */
function buildAdapter(name: string, p: ProviderConfig, secrets: ProviderSecrets, http: UpstreamHttp): ProviderAdapter {
  return boundOutput(buildProtocolAdapter(name, p, secrets, http));
}

function buildProtocolAdapter(name: string, p: ProviderConfig, secrets: ProviderSecrets, http: UpstreamHttp): ProviderAdapter {
  switch (p.type) {
    case 'openai-compatible':
      return createOpenAICompatibleAdapter({
        name,
        baseUrl: p.base_url,
        apiKey: secrets[name] ?? null,
        paid: p.paid,
        maxTokensField: p.max_tokens_field,
        http,
        ...(p.headers ? { extraHeaders: p.headers } : {}),
      });
    case 'anthropic':
      return createAnthropicAdapter({
        name,
        baseUrl: p.base_url,
        apiKey: secrets[name] ?? null,
        apiVersion: p.api_version,
        paid: p.paid,
        http,
        ...(p.headers ? { extraHeaders: p.headers } : {}),
      });
    case 'gemini':
      return createGeminiAdapter({
        name,
        baseUrl: p.base_url,
        apiKey: secrets[name] ?? null,
        paid: p.paid,
        http,
        ...(p.headers ? { extraHeaders: p.headers } : {}),
      });
    case 'sandbox':
      return createSandboxAdapter({
        name,
        pace: {
          timeToFirstTokenMs: p.pace?.time_to_first_token_ms ?? 0,
          tokensPerSecond: p.pace?.tokens_per_second ?? 0,
        },
      });
  }
}

function deadlines(...layers: (TimeoutsConfig | undefined)[]): Deadlines {
  const d = { ...DEFAULT_DEADLINES };
  for (const t of layers) {
    if (t?.connect_ms !== undefined) d.connectMs = t.connect_ms;
    if (t?.first_token_ms !== undefined) d.firstTokenMs = t.first_token_ms;
    if (t?.between_chunks_ms !== undefined) d.betweenChunksMs = t.between_chunks_ms;
    if (t?.total_ms !== undefined) d.totalMs = t.total_ms;
  }
  return d;
}

function sandboxTarget(free: ProviderAdapter, model: string, healthOf: (provider: string, model: string) => TargetHealth): Target {
  const params = { protocol: free.protocol, model, capabilities: capabilitiesFor(free.protocol, model) };
  return { adapter: withTargetParams(free, params), params, model, deadlines: deadlines(), oneShot: false, health: healthOf(free.name, model) };
}

/** The circuit breakers' settings from the config's `health` section. */
export function healthSettingsOf(config: GatewayConfig): HealthSettings {
  return {
    ...DEFAULT_HEALTH,
    failureThreshold: config.health.failure_threshold,
    openMs: config.health.open_ms,
    maxOpenMs: Math.max(config.health.max_open_ms, config.health.open_ms),
  };
}

export function buildRoutingTable(
  config: GatewayConfig,
  secrets: ProviderSecrets,
  http: UpstreamHttp = httpOverFetch(fetch),
): RoutingTable {
  const settings = healthSettingsOf(config);
  // One breaker per upstream model, whichever tiers route to it: its failures are the same failures.
  const health = new Map<string, TargetHealth>();
  const healthOf = (provider: string, model: string): TargetHealth => {
    const id = `${provider}/${model}`;
    let h = health.get(id);
    if (h === undefined) {
      h = new TargetHealth(settings);
      health.set(id, h);
    }
    return h;
  };
  const adapters = new Map<string, ProviderAdapter>();
  const capped = capReplyBytes(http, config.server.max_upstream_response_bytes);
  for (const [name, p] of Object.entries(config.providers)) adapters.set(name, buildAdapter(name, p, secrets, capped));

  // Test keys use the configured sandbox provider if there is one, else a built-in instant sandbox.
  const free =
    [...adapters.values()].find((a) => !a.paid && config.providers[a.name]?.type === 'sandbox') ??
    createSandboxAdapter({ name: 'sandbox', pace: { timeToFirstTokenMs: 0, tokensPerSecond: 0 } });

  const tiers = {} as Record<Tier, TierRoute>;
  const testTiers = {} as Record<Tier, TierRoute>;
  for (const [tier, alias] of Object.entries(TIERS) as [Tier, TierAlias][]) {
    const spec = config.aliases[alias];
    const targets: Target[] = spec.targets.map((t) => {
      const provider = config.providers[t.provider];
      const adapter = adapters.get(t.provider) as ProviderAdapter;
      const capabilities = capabilitiesFor(
        adapter.protocol,
        t.model,
        provider?.type === 'anthropic' ? { anthropicApiVersion: provider.api_version } : {},
        t.capabilities,
      );
      const paramTarget = { protocol: adapter.protocol, model: t.model, capabilities };
      return {
        // Each call goes out with only what this model takes (./target-params.ts).
        adapter: withTargetParams(adapter, paramTarget, config.server.strict_params),
        params: paramTarget,
        model: t.model,
        deadlines: deadlines(provider?.timeouts, t.timeouts),
        oneShot: provider !== undefined && provider.type !== 'sandbox' && !provider.upstream_streaming,
        health: healthOf(t.provider, t.model),
      };
    });
    const defaultMaxTokens = spec.default_max_tokens ?? null;
    tiers[tier] = { targets, defaultMaxTokens };
    const freeTargets = targets.filter((t) => !t.adapter.paid);
    testTiers[tier] = {
      targets:
        freeTargets.length > 0
          ? freeTargets
          : [
              sandboxTarget(free, `sandbox-${tier}`, healthOf),
            ],
      defaultMaxTokens,
    };
  }
  return {
    tiers,
    testTiers,
    health,
    autoQualityBias: config.aliases['svc-auto'].quality_bias,
    autoDefaultMaxTokens: config.aliases['svc-auto'].default_max_tokens ?? null,
  };
}
