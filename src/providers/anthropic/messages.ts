/**
 * The gateway's OpenAI-shaped conversation -> Anthropic's `system` + `messages`.
 *
 * Anthropic has one top-level system prompt and strictly alternating user/assistant turns made of content
 * blocks. So system and developer messages, wherever they stand, are joined into `system`; each remaining
 * message becomes blocks (text, image, document, tool_use, tool_result); tool results become blocks of a
 * user turn; then consecutive turns of the same role are merged into one, as the API requires.
 */
import type { ChatMessage, ContentPart, ToolCall } from '../../openai/chat-types.js';
import { isRecord } from '../upstream-failures.js';
import { requestRefused } from './errors.js';

export type Block = Record<string, unknown> & { type: string };

export interface Turn {
  role: 'user' | 'assistant';
  content: Block[];
}

export interface Conversation {
  /** Every system and developer text, in order, joined by a blank line; null when there is none. */
  system: string | null;
  messages: Turn[];
}

/** `prefill` (already trimmed) is appended as the final assistant turn: see ./prefill.ts. */
export function toConversation(messages: readonly ChatMessage[], prefill: string | null): Conversation {
  const system: string[] = [];
  const turns: Turn[] = [];
  messages.forEach((m, i) => {
    const at = `messages[${i}]`;
    switch (m.role) {
      case 'system':
      case 'developer': {
        const text = plainText(m.content, at);
        if (text.length > 0) system.push(text);
        return;
      }
      case 'user':
        turns.push({ role: 'user', content: userBlocks(m.content, at) });
        return;
      case 'assistant':
        turns.push({ role: 'assistant', content: assistantBlocks(m, at) });
        return;
      case 'tool':
        turns.push({ role: 'user', content: [toolResult(m)] });
        return;
    }
  });
  if (prefill !== null && prefill.length > 0) turns.push({ role: 'assistant', content: [textBlock(prefill)] });
  return { system: system.length > 0 ? system.join('\n\n') : null, messages: mergeTurns(turns) };
}

/**
 * The API refuses empty turns and two turns of one role in a row. Within a user turn, tool results must
 * come before any other block ("tool_result blocks must come FIRST in the content array").
 */
function mergeTurns(turns: Turn[]): Turn[] {
  const merged: Turn[] = [];
  for (const turn of turns) {
    if (turn.content.length === 0) continue;
    const last = merged.at(-1);
    if (last && last.role === turn.role) last.content.push(...turn.content);
    else merged.push({ role: turn.role, content: [...turn.content] });
  }
  for (const turn of merged) {
    if (turn.role !== 'user') continue;
    turn.content = [
      ...turn.content.filter((b) => b.type === 'tool_result'),
      ...turn.content.filter((b) => b.type !== 'tool_result'),
    ];
  }
  return merged;
}

function textBlock(text: string): Block {
  return { type: 'text', text };
}

/** Empty text blocks are refused by the API, so empty strings and parts produce no block. */
function textBlocks(content: string | ContentPart[] | null): Block[] {
  if (content === null) return [];
  if (typeof content === 'string') return content.length > 0 ? [textBlock(content)] : [];
  return content.flatMap((p) => {
    const text = p.type === 'text' ? p.text : p.type === 'refusal' ? p.refusal : '';
    return text.length > 0 ? [textBlock(text)] : [];
  });
}

function plainText(content: string | ContentPart[] | null, at: string): string {
  if (content === null) return '';
  if (typeof content === 'string') return content;
  return content
    .map((p, j) => {
      if (p.type !== 'text') throw requestRefused(`${at}.content[${j}]: only text parts are allowed here`);
      return p.text;
    })
    .join('');
}

function userBlocks(content: string | ContentPart[] | null, at: string): Block[] {
  if (content === null || typeof content === 'string') return textBlocks(content);
  return content.flatMap((p, j): Block[] => {
    const where = `${at}.content[${j}]`;
    switch (p.type) {
      case 'text':
        return p.text.length > 0 ? [textBlock(p.text)] : [];
      case 'image_url':
        return [imageBlock(p.image_url.url, where)];
      case 'file':
        return [documentBlock(p.file, where)];
      case 'input_audio':
        throw requestRefused(`${where}: Anthropic models take no audio input`);
      case 'refusal':
        return p.refusal.length > 0 ? [textBlock(p.refusal)] : [];
    }
  });
}

/** `detail` has no Anthropic equivalent (the API sizes images itself) and is dropped. */
function imageBlock(url: string, where: string): Block {
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  const data = parseDataUrl(url);
  if (data === null) throw requestRefused(`${where}: an image must be an http(s) URL or a base64 data: URL`);
  return { type: 'image', source: { type: 'base64', media_type: data.mediaType, data: data.base64 } };
}

/**
 * OpenAI's `file` part carries a data: URL in `file_data`. Anthropic reads PDFs as `document` blocks; an
 * OpenAI `file_id` names a file in OpenAI's storage, which Anthropic cannot reach.
 */
function documentBlock(file: { file_id?: string; file_data?: string }, where: string): Block {
  const data = file.file_data !== undefined ? parseDataUrl(file.file_data) : null;
  if (data === null || data.mediaType !== 'application/pdf') {
    throw requestRefused(`${where}: only PDF files sent inline as a base64 data: URL in 'file_data' are supported`);
  }
  return { type: 'document', source: { type: 'base64', media_type: data.mediaType, data: data.base64 } };
}

function parseDataUrl(url: string): { mediaType: string; base64: string } | null {
  const comma = url.indexOf(',');
  if (!/^data:/i.test(url) || comma < 0) return null;
  const params = url.slice(5, comma).split(';');
  const mediaType = (params[0] ?? '').trim().toLowerCase();
  if (mediaType.length === 0 || params.at(-1)?.toLowerCase() !== 'base64') return null;
  const base64 = url.slice(comma + 1);
  return base64.length > 0 ? { mediaType, base64 } : null;
}

function assistantBlocks(m: ChatMessage, at: string): Block[] {
  const blocks = textBlocks(m.content);
  (m.tool_calls ?? []).forEach((call, k) => blocks.push(toolUse(call, `${at}.tool_calls[${k}]`)));
  return blocks;
}

/** Anthropic wants the arguments as the object they encode, and refuses anything but an object. */
function toolUse(call: ToolCall, at: string): Block {
  const raw = call.function.arguments.trim();
  let input: unknown = {};
  if (raw.length > 0) {
    try {
      input = JSON.parse(raw);
    } catch {
      throw requestRefused(`${at}.function.arguments is not valid JSON`);
    }
  }
  if (!isRecord(input)) throw requestRefused(`${at}.function.arguments must encode a JSON object`);
  return { type: 'tool_use', id: call.id, name: call.function.name, input };
}

function toolResult(m: ChatMessage): Block {
  const block: Block = { type: 'tool_result', tool_use_id: m.tool_call_id ?? '' };
  if (typeof m.content === 'string') {
    if (m.content.length > 0) block.content = m.content;
  } else {
    const parts = textBlocks(m.content);
    if (parts.length > 0) block.content = parts;
  }
  return block;
}
