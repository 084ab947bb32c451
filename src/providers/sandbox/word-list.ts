/** Words the simulator builds answers from: common enough to read like prose, varied enough to look generated. */
export const WORDS: readonly string[] = [
  'the', 'model', 'answer', 'request', 'gateway', 'token', 'stream', 'credit', 'route', 'provider',
  'latency', 'quality', 'system', 'data', 'value', 'result', 'simple', 'careful', 'quickly', 'clearly',
  'because', 'however', 'therefore', 'while', 'each', 'every', 'first', 'next', 'then', 'finally',
  'we', 'you', 'it', 'they', 'this', 'that', 'these', 'which', 'can', 'should',
  'will', 'might', 'is', 'are', 'was', 'has', 'uses', 'makes', 'keeps', 'shows',
  'returns', 'checks', 'handles', 'builds', 'reads', 'writes', 'sends', 'waits', 'counts', 'finds',
  'in', 'on', 'with', 'for', 'from', 'into', 'over', 'under', 'after', 'before',
  'a', 'an', 'of', 'to', 'and', 'or', 'but', 'not', 'more', 'less',
  'small', 'large', 'fast', 'slow', 'new', 'old', 'good', 'useful', 'exact', 'stable',
  'code', 'test', 'example', 'question', 'problem', 'idea', 'plan', 'step', 'detail', 'reason',
];
