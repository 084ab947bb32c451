/**
 * The span attributes the gateway writes. The GenAI names are the OpenTelemetry GenAI semantic conventions'
 * (still "incubating"): the semantic-conventions package advises copying incubating names rather than
 * importing them, since they may change in a minor release, so they are copied here. HTTP names are stable.
 */
export {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_PATH,
  ATTR_ERROR_TYPE,
} from '@opentelemetry/semantic-conventions';

export const GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
export const GEN_AI_PROVIDER_NAME = 'gen_ai.provider.name';
export const GEN_AI_REQUEST_MODEL = 'gen_ai.request.model';
export const GEN_AI_REQUEST_MAX_TOKENS = 'gen_ai.request.max_tokens';
export const GEN_AI_REQUEST_STREAM = 'gen_ai.request.stream';
export const GEN_AI_RESPONSE_MODEL = 'gen_ai.response.model';
export const GEN_AI_RESPONSE_ID = 'gen_ai.response.id';
export const GEN_AI_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
export const GEN_AI_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
export const GEN_AI_INPUT_MESSAGES = 'gen_ai.input.messages';
export const GEN_AI_OUTPUT_MESSAGES = 'gen_ai.output.messages';

/** The gateway's own facts, under its own namespace. */
export const SVC_ATTEMPT_OUTCOME = 'svc.attempt.outcome';
export const SVC_ATTEMPT_CONTINUATION = 'svc.attempt.continuation';
export const SVC_ROUTED_MODEL = 'svc.routed_model';
export const SVC_CREDITS = 'svc.credits';
export const SVC_HOLD_OUTCOME = 'svc.hold.outcome';
export const SVC_ENDING = 'svc.ending';
export const SVC_REQUEST_ID = 'svc.request_id';
export const SVC_KEY_ID = 'svc.key_id';
export const SVC_ATTEMPTS = 'svc.attempts';
