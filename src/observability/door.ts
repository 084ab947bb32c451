/**
 * The "door" label of a request: which part of the API it knocked on. A fixed set, so a scanner trying
 * random paths cannot grow the metrics.
 */
export type DoorName =
  | 'chat_completions'
  | 'completions'
  | 'messages'
  | 'responses'
  | 'embeddings'
  | 'models'
  | 'credits'
  | 'usage'
  | 'api_keys'
  | 'admin'
  | 'probe'
  | 'metrics'
  | 'other';

export function doorOf(path: string): DoorName {
  if (path.startsWith('/v1/')) {
    if (path === '/v1/chat/completions') return 'chat_completions';
    if (path === '/v1/completions') return 'completions';
    if (path.startsWith('/v1/messages')) return 'messages';
    if (path.startsWith('/v1/responses')) return 'responses';
    if (path === '/v1/embeddings') return 'embeddings';
    if (path.startsWith('/v1/models')) return 'models';
    if (path === '/v1/credits') return 'credits';
    if (path === '/v1/usage') return 'usage';
    if (path.startsWith('/v1/api-keys')) return 'api_keys';
    return 'other';
  }
  if (path.startsWith('/admin/v1/')) return 'admin';
  if (path === '/healthz' || path === '/readyz') return 'probe';
  if (path === '/metrics') return 'metrics';
  return 'other';
}
