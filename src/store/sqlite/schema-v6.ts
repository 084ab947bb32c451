/**
 * Version 6 (issue 16): what the upstream said about the tokens, kept beside them.
 *
 * - usage_events.cached_tokens: of prompt_tokens, those the provider read from its prompt cache (OpenAI's
 *   `prompt_tokens_details.cached_tokens`, Anthropic's `cache_read_input_tokens`, Gemini's
 *   `cachedContentTokenCount`), which providers price below other input.
 * - usage_events.reasoning_tokens: of completion_tokens, those the model spent reasoning (charged as output).
 * - usage_daily gets both, summed at settle time like the other counts, so GET /v1/usage reports them.
 *
 * Existing rows get 0: nobody recorded the split then. SQLite checks each new column's CHECK against the
 * existing rows, all 0.
 */
export const schemaV6 = `
ALTER TABLE usage_events ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0 CHECK (cached_tokens >= 0);
ALTER TABLE usage_events ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0 CHECK (reasoning_tokens >= 0);
ALTER TABLE usage_daily ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0 CHECK (cached_tokens >= 0);
ALTER TABLE usage_daily ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0 CHECK (reasoning_tokens >= 0);
`;
