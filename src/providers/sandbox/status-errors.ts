/** The OpenAI error envelope a real upstream sends with each status, so a status fault looks like the real thing. */

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

const BY_STATUS: Readonly<Record<number, { type: string; code: string | null; message: string }>> = {
  400: { type: 'invalid_request_error', code: null, message: 'Bad request.' },
  401: { type: 'invalid_request_error', code: 'invalid_api_key', message: 'Incorrect API key provided.' },
  403: { type: 'invalid_request_error', code: 'unsupported_country_region_territory', message: 'Request not allowed.' },
  404: { type: 'invalid_request_error', code: 'model_not_found', message: 'The model does not exist.' },
  408: { type: 'timeout', code: null, message: 'Request timed out.' },
  429: { type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached for requests. Please try again in 1s.' },
  500: { type: 'server_error', code: null, message: 'The server had an error while processing your request.' },
  502: { type: 'server_error', code: null, message: 'Bad gateway.' },
  503: { type: 'server_error', code: null, message: 'The engine is currently overloaded, please try again later.' },
  504: { type: 'server_error', code: null, message: 'Gateway timeout.' },
};

export function errorBodyForStatus(status: number, message?: string): OpenAIErrorBody {
  const known = BY_STATUS[status] ?? {
    type: status >= 500 ? 'server_error' : 'invalid_request_error',
    code: null,
    message: `Sandbox fault: HTTP ${status}.`,
  };
  return { error: { message: message ?? known.message, type: known.type, param: null, code: known.code } };
}

export function invalidRequestBody(message: string, param: string | null): OpenAIErrorBody {
  return { error: { message, type: 'invalid_request_error', param, code: null } };
}
