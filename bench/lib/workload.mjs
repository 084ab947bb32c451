// The request every bench target gets: one user message of about `promptBytes` bytes of prose, a fixed
// output bound, non-streaming or streaming (with include_usage, which the gateway asks its upstream for
// anyway, so the floor's upstream call is the same call as the gateway's).

const WORDS = ('the gateway routes each request to an upstream model and meters the credits it costs while the client ' +
  'waits for its answer so every microsecond spent here is added to every call a user makes').split(' ');

export function promptText(bytes, variant = 0) {
  let text = `Request ${variant}:`;
  for (let i = 0; text.length < bytes; i++) text += ' ' + WORDS[(i * 7 + variant) % WORDS.length];
  return text.slice(0, bytes);
}

export function requestBody({ model, prompt, maxTokens, stream }) {
  const body = { model, messages: [{ role: 'user', content: prompt }], max_tokens: maxTokens };
  if (stream) Object.assign(body, { stream: true, stream_options: { include_usage: true } });
  return JSON.stringify(body);
}

/**
 * A prompt whose sandbox answer is cut at exactly `maxTokens` tokens (finish_reason "length"), so every
 * target streams the same fixed-size answer: the sandbox's natural length varies with the prompt.
 */
export async function fixedSizePrompt(upstreamPort, { model, promptBytes, maxTokens }) {
  for (let variant = 0; variant < 50; variant++) {
    const prompt = promptText(promptBytes, variant);
    const res = await fetch(`http://127.0.0.1:${upstreamPort}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: requestBody({ model, prompt, maxTokens, stream: false }),
    });
    if (!res.ok) throw new Error(`upstream answered ${res.status}: ${await res.text()}`);
    const answer = await res.json();
    if (answer.choices[0].finish_reason === 'length' && answer.usage.completion_tokens === maxTokens) {
      return { prompt, answerChars: answer.choices[0].message.content.length };
    }
  }
  throw new Error(`no prompt found whose sandbox answer reaches max_tokens ${maxTokens}; lower --max-tokens`);
}
