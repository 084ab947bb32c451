/**
 * Resolves a requested alias to an ordered list of upstream targets. svc-auto first chooses a tier and
 * then uses that tier's targets (priced at svc-auto's own prices). Test-environment keys are served only
 * by free providers (the sandbox), whatever the configuration says, so they never spend real money.
 */
import type { ProviderAdapter } from '../providers/contract.js';
import type { ParamTarget } from '../providers/target-params.js';
import type { Environment } from '../store/types.js';
import { classifyRequest, type RoutableRequest } from './auto/classifier.js';
import type { Tier, TierDecision } from './auto/tier.js';
import { CATALOG, type Alias, type CatalogEntry } from './catalog.js';
import type { Deadlines } from './deadlines.js';
import type { TargetHealth } from './health.js';

export interface Target {
  adapter: ProviderAdapter;
  /** What the model takes: the adapter already applies it; the HTTP layer reads it to name what it dropped. */
  params: ParamTarget;
  model: string;
  deadlines: Deadlines;
  /** Called in one piece (`upstream_streaming: false`) rather than streamed. */
  oneShot: boolean;
  /** Shared by every route that uses the same provider and model. */
  health: TargetHealth;
}

export interface TierRoute {
  targets: Target[];
  defaultMaxTokens: number | null;
}

export interface RoutingTable {
  tiers: Record<Tier, TierRoute>;
  /** Where test keys go: the free provider, one target per tier. */
  testTiers: Record<Tier, TierRoute>;
  /** Every upstream model's health, by `provider/model`. */
  health: ReadonlyMap<string, TargetHealth>;
  autoQualityBias: number;
  autoDefaultMaxTokens: number | null;
}

export interface Route {
  entry: CatalogEntry;
  targets: Target[];
  /** The output bound used when the client sets none. */
  defaultMaxTokens: number;
  decision: TierDecision | null;
}

const TIER_OF_ALIAS: Record<Exclude<Alias, 'svc-auto'>, Tier> = {
  'svc-fast': 'fast',
  'svc-code': 'code',
  'svc-smart': 'smart',
};

/**
 * `request` is what svc-auto reads (messages and tool definitions); `qualityBias`, when given, is the
 * caller's per-request dial (the `x-svc-quality-bias` header), which may lower the configured one, never raise it.
 */
export function resolveRoute(
  table: RoutingTable,
  alias: Alias,
  environment: Environment,
  request: RoutableRequest,
  qualityBias: number | null = null,
): Route {
  const entry = CATALOG[alias];
  const tiers = environment === 'test' ? table.testTiers : table.tiers;
  if (alias === 'svc-auto') {
    // A client may lower the operator's dial (spend less), never raise it: svc-auto's price is fixed, so a
    // higher bias would buy svc-smart answers at svc-auto's price.
    const decision = classifyRequest(request, qualityBias === null ? table.autoQualityBias : Math.min(qualityBias, table.autoQualityBias));
    const route = tiers[decision.tier];
    return {
      entry,
      targets: route.targets,
      defaultMaxTokens: table.autoDefaultMaxTokens ?? entry.defaultMaxTokens,
      decision,
    };
  }
  const route = tiers[TIER_OF_ALIAS[alias]];
  return { entry, targets: route.targets, defaultMaxTokens: route.defaultMaxTokens ?? entry.defaultMaxTokens, decision: null };
}
