/**
 * The gateway configuration file (JSON or YAML, path in SVC_CONFIG), validated at start. Errors name the
 * field (`providers.openai.base_url: ...`). Reading the file and the environment happens in
 * src/runtime/node/; this module only validates a decoded value.
 */
import { z } from 'zod';
import { formatPath } from '../openai/validation-errors.js';

const positiveMs = z.number().int().positive();

export const timeoutsSchema = z
  .object({
    connect_ms: positiveMs.optional(),
    first_token_ms: positiveMs.optional(),
    between_chunks_ms: positiveMs.optional(),
    total_ms: positiveMs.optional(),
  })
  .strict();

const paceSchema = z
  .object({
    time_to_first_token_ms: z.number().int().min(0).default(0),
    tokens_per_second: z.number().min(0).default(0),
  })
  .strict();

const httpUrl = z.url({ protocol: /^https?$/ });
/** Name of the environment variable holding the API key; omit for keyless servers (Ollama, vLLM, test doubles). */
const apiKeyEnv = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name').optional();

/**
 * false: call this provider in one piece even for streaming clients, for servers whose streaming is broken.
 * `first_token_ms` then bounds the whole answer, and a failure can only be retried, not continued.
 */
const upstreamStreaming = z.boolean().default(true);

const openAICompatibleProvider = z
  .object({
    type: z.literal('openai-compatible'),
    base_url: httpUrl,
    api_key_env: apiKeyEnv,
    /** Unset: `max_completion_tokens` for OpenAI's reasoning families (o-series, GPT-5), `max_tokens` otherwise. */
    max_tokens_field: z.enum(['max_tokens', 'max_completion_tokens']).optional(),
    /** Whether calls cost money. Test keys never reach a paid provider. */
    paid: z.boolean().default(true),
    upstream_streaming: upstreamStreaming,
    headers: z.record(z.string(), z.string()).optional(),
    timeouts: timeoutsSchema.optional(),
  })
  .strict();

const anthropicProvider = z
  .object({
    type: z.literal('anthropic'),
    base_url: httpUrl.default('https://api.anthropic.com/v1'),
    api_key_env: apiKeyEnv,
    /** The `anthropic-version` header; see docs/providers.md for what differs between them. */
    api_version: z.enum(['2026-10-21', '2023-06-01']).default('2026-10-21'),
    paid: z.boolean().default(true),
    upstream_streaming: upstreamStreaming,
    headers: z.record(z.string(), z.string()).optional(),
    timeouts: timeoutsSchema.optional(),
  })
  .strict();

const geminiProvider = z
  .object({
    type: z.literal('gemini'),
    base_url: httpUrl.default('https://generativelanguage.googleapis.com/v1beta'),
    api_key_env: apiKeyEnv,
    paid: z.boolean().default(true),
    upstream_streaming: upstreamStreaming,
    headers: z.record(z.string(), z.string()).optional(),
    timeouts: timeoutsSchema.optional(),
  })
  .strict();

const sandboxProvider = z
  .object({
    type: z.literal('sandbox'),
    pace: paceSchema.optional(),
    timeouts: timeoutsSchema.optional(),
  })
  .strict();

export const providerSchema = z.discriminatedUnion('type', [
  openAICompatibleProvider,
  anthropicProvider,
  geminiProvider,
  sandboxProvider,
]);

/**
 * What the target's model takes, over the defaults for its family (src/providers/model-capabilities.ts):
 * for a model the gateway does not know, or a server that differs from the family it serves.
 */
const capabilitiesSchema = z
  .object({
    /** temperature and top_p. */
    sampling: z.boolean().optional(),
    /** presence_penalty and frequency_penalty. */
    penalties: z.boolean().optional(),
    /** Whether `reasoning_effort` means something to it. */
    reasoning: z.boolean().optional(),
    max_stop_sequences: z.number().int().min(0).max(64).optional(),
    /** The bound sent is capped to it. */
    max_output_tokens: z.number().int().positive().optional(),
  })
  .strict();

const targetSchema = z
  .object({
    provider: z.string().min(1),
    model: z.string().min(1),
    timeouts: timeoutsSchema.optional(),
    capabilities: capabilitiesSchema.optional(),
  })
  .strict();

const tierSchema = z
  .object({
    targets: z.array(targetSchema).min(1, 'needs at least one target'),
    default_max_tokens: z.number().int().positive().optional(),
  })
  .strict();

const autoSchema = z
  .object({
    /** 0 = always the cheapest tier that may do, 1 = lean to capability; the default favours quality. */
    quality_bias: z.number().min(0).max(1).default(0.7),
    default_max_tokens: z.number().int().positive().optional(),
  })
  .strict();

export const configSchema = z
  .object({
    server: z
      .object({
        max_body_bytes: z.number().int().min(1024).default(10 * 1024 * 1024),
        /**
         * Bytes read at most from one upstream answer (a whole JSON answer, a whole stream, an error body); past
         * it the attempt ends as an upstream failure and failover goes on (src/providers/upstream-byte-cap.ts).
         * 32 MiB: far above any real answer (128k tokens of text are about 0.5 MB), far below trouble.
         */
        max_upstream_response_bytes: z.number().int().min(64 * 1024).default(32 * 1024 * 1024),
        hold_lease_ms: z.number().int().min(1_000).default(15 * 60 * 1000),
        reaper_interval_ms: z.number().int().min(100).default(30_000),
        /**
         * The longest a chat completion may run, across failover attempts. It must end before the hold's
         * lease does, or the reaper could void a hold still in use; unset: 10 minutes, or 2/3 of the lease.
         */
        request_timeout_ms: z.number().int().min(100).optional(),
        /** A stream silent this long (waiting on a slow or failing upstream) gets an SSE comment. */
        keepalive_ms: z.number().int().min(100).default(10_000),
        /**
         * How long a streaming client may stop reading before the gateway ends its stream and charges what
         * was produced (a client that never reads must not hold an upstream call and a hold forever).
         */
        write_timeout_ms: z.number().int().min(100).default(60_000),
        /**
         * On SIGTERM/SIGINT: how long in-flight completions may run to their end before the rest are ended
         * with an error event (streams) or a 503, and settled. Below the orchestrator's kill deadline
         * (Kubernetes: terminationGracePeriodSeconds, 30 s by default).
         */
        shutdown_grace_ms: z.number().int().min(0).default(20_000),
        /**
         * false (the default): a parameter the client set that the serving target cannot take is dropped and
         * named in `x-svc-dropped-params`; true: the request is refused (400 `unsupported_parameter`) before
         * anything is held. docs/api.md, "Parameters per target".
         */
        strict_params: z.boolean().default(false),
        /**
         * Origins a browser page may call the public API from (CORS): `["*"]` (the default: keys travel in a
         * header, never in cookies, so no origin gains anything it could not do with the key anyway), a list
         * of origins, or `[]` for none. The operator API never answers CORS.
         */
        cors_origins: z.array(z.union([z.literal('*'), z.url({ protocol: /^https?$/ })])).default(['*']),
        /** Whether the model's reasoning text (`reasoning_content`) reaches clients; false for operators who must not relay it. */
        relay_reasoning: z.boolean().default(true),
        /**
         * How long a Responses API answer made with `store` (OpenAI's default) is kept for
         * `previous_response_id`, `item_reference` and GET /v1/responses/{id}: 30 days, as OpenAI keeps
         * them. 0 keeps nothing: `store: true` is then answered `store: false`, and a later turn must send its
         * whole conversation (docs/api.md, "Responses").
         */
        responses_retention_days: z.number().int().min(0).max(3650).default(30),
        /** Each failed admin-token attempt in the last minute slows the next failure by this much (max 5 s); 0: off. */
        admin_failure_delay_ms: z.number().int().min(0).default(250),
        /**
         * The Node HTTP server's own bounds (docs/configuration.md): time to receive the headers, the whole
         * request (headers and body), an idle keep-alive connection, and the number of open connections.
         */
        http: z
          .object({
            headers_timeout_ms: z.number().int().min(100).default(10_000),
            receive_timeout_ms: z.number().int().min(100).default(60_000),
            keep_alive_timeout_ms: z.number().int().min(100).default(5_000),
            max_connections: z.number().int().min(1).default(10_000),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    health: z
      .object({
        /** Consecutive failures that open a target's circuit breaker. */
        failure_threshold: z.number().int().min(1).default(3),
        /** How long an open breaker skips its target before one request probes it; doubles on each failed probe. */
        open_ms: z.number().int().min(100).default(10_000),
        max_open_ms: z.number().int().min(100).default(120_000),
      })
      .strict()
      .prefault({}),
    limits: z
      .object({
        /**
         * Tokens held for one attachment given by a URL whose size cannot be known before the call (a video,
         * audio or file URL, a `file_id`, an image URL when a Gemini target may serve): such a part is
         * charged whatever the provider reports, capped at the hold. Unset: such parts are refused with a
         * 400 (`unbounded_media_url`). See docs/attachments.md.
         */
        media_url_max_tokens: z.number().int().positive().max(10_000_000).optional(),
        /**
         * Active keys an account may hold before POST /v1/api-keys refuses to create more (403
         * `api_key_limit_reached`): a leaked key cannot mint keys without bound. The operator's CLI and admin
         * API are not limited.
         */
        max_api_keys_per_account: z.number().int().positive().default(1000),
      })
      .strict()
      .prefault({}),
    /** Per-key rate limits (docs/rate-limits.md). */
    rate_limits: z
      .object({
        /** Requests per minute of a key created without its own `rpm_limit`; null: none. */
        rpm: z.number().int().positive().nullable().default(null),
        /** Tokens (prompt estimate + output bound) per minute of a key without its own `tpm_limit`; null: none. */
        tpm: z.number().int().positive().nullable().default(null),
        /**
         * Redis shared by every instance (`redis://[:password@]host:port[/db]`); SVC_REDIS_URL overrides it.
         * Unset: each process limits on its own, exactly (right for one instance).
         */
        redis_url: z.url({ protocol: /^rediss?$/ }).optional(),
        /** When Redis does not answer: `open` admits unlimited with a logged warning; `closed` answers 503. */
        on_redis_error: z.enum(['open', 'closed']).default('open'),
        /** How long a decision may wait on Redis before it counts as unreachable. */
        redis_timeout_ms: z.number().int().min(10).default(250),
      })
      .strict()
      .prefault({}),
    providers: z.record(z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, 'provider names are lower-case'), providerSchema),
    /**
     * Embedding aliases served by POST /v1/embeddings (docs/api.md, "Embeddings"), e.g. `svc-embed`: a price
     * in credits per 1,000 input tokens and targets tried in order. None by default: /v1/models then lists
     * exactly the four chat aliases.
     */
    embeddings: z
      .record(
        z.string().regex(/^svc-[a-z0-9][a-z0-9-]*$/, "embedding aliases are named 'svc-...' in lower case"),
        z
          .object({
            credits_per_1k_tokens: z.number().positive(),
            targets: z.array(z.object({ provider: z.string(), model: z.string().min(1) }).strict()).min(1),
            description: z.string().optional(),
          })
          .strict(),
      )
      .default({}),
    aliases: z
      .object({
        'svc-fast': tierSchema,
        'svc-code': tierSchema,
        'svc-smart': tierSchema,
        'svc-auto': autoSchema.prefault({}),
      })
      .strict(),
  })
  .strict()
  .superRefine((cfg, ctx) => {
    if (cfg.server.http.headers_timeout_ms > cfg.server.http.receive_timeout_ms) {
      ctx.addIssue({
        code: 'custom',
        path: ['server', 'http', 'headers_timeout_ms'],
        message: `must not exceed server.http.receive_timeout_ms (${cfg.server.http.receive_timeout_ms}): the headers are part of the request`,
      });
    }
    const requestTimeout = cfg.server.request_timeout_ms;
    if (requestTimeout !== undefined && requestTimeout >= cfg.server.hold_lease_ms) {
      ctx.addIssue({
        code: 'custom',
        path: ['server', 'request_timeout_ms'],
        message: `must be shorter than server.hold_lease_ms (${cfg.server.hold_lease_ms}), or the reaper could void a hold still in use`,
      });
    }
    for (const [alias, spec] of Object.entries(cfg.embeddings)) {
      if (['svc-auto', 'svc-fast', 'svc-code', 'svc-smart'].includes(alias)) {
        ctx.addIssue({ code: 'custom', path: ['embeddings', alias], message: 'is a chat alias; name the embedding alias otherwise (svc-embed)' });
      }
      spec.targets.forEach((t, i) => {
        const type = cfg.providers[t.provider]?.type;
        if (type === undefined || type === 'anthropic') {
          ctx.addIssue({
            code: 'custom',
            path: ['embeddings', alias, 'targets', i, 'provider'],
            message:
              type === 'anthropic'
                ? `'${t.provider}' is an Anthropic provider, which has no embeddings API (use an openai-compatible, gemini or sandbox provider)`
                : `unknown provider '${t.provider}' (defined: ${Object.keys(cfg.providers).join(', ') || 'none'})`,
          });
        }
      });
    }
    for (const tier of ['svc-fast', 'svc-code', 'svc-smart'] as const) {
      cfg.aliases[tier].targets.forEach((t, i) => {
        if (!(t.provider in cfg.providers)) {
          ctx.addIssue({
            code: 'custom',
            path: ['aliases', tier, 'targets', i, 'provider'],
            message: `unknown provider '${t.provider}' (defined: ${Object.keys(cfg.providers).join(', ') || 'none'})`,
          });
        }
      });
    }
  });

export type GatewayConfig = z.infer<typeof configSchema>;
export type ProviderConfig = z.infer<typeof providerSchema>;
export type TimeoutsConfig = z.infer<typeof timeoutsSchema>;

/** The request deadline in force: the configured one, else 10 minutes capped at 2/3 of the hold lease. */
export function requestTimeoutMs(server: GatewayConfig['server']): number {
  return server.request_timeout_ms ?? Math.min(600_000, Math.floor((server.hold_lease_ms * 2) / 3));
}
export type TierAlias = 'svc-fast' | 'svc-code' | 'svc-smart';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Validates a decoded config value; throws ConfigError listing every bad field. */
export function parseConfig(value: unknown): GatewayConfig {
  const result = configSchema.safeParse(value);
  if (result.success) return result.data;
  const lines = result.error.issues.map((i) => `  ${formatPath(i.path) || '(root)'}: ${i.message}`);
  throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
}

/** The built-in catalog: every alias served by the in-process sandbox, so a fresh install works offline. */
export const DEFAULT_CONFIG: unknown = {
  providers: { sandbox: { type: 'sandbox', pace: { time_to_first_token_ms: 120, tokens_per_second: 80 } } },
  aliases: {
    'svc-fast': { targets: [{ provider: 'sandbox', model: 'sandbox-fast' }] },
    'svc-code': { targets: [{ provider: 'sandbox', model: 'sandbox-code' }] },
    'svc-smart': { targets: [{ provider: 'sandbox', model: 'sandbox-smart' }] },
  },
};
