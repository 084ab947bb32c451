/**
 * User content parts (text, images, audio, files) -> Gemini parts. Inline bytes become `inlineData`; an
 * http(s) image URL becomes `fileData`, which the Gemini API fetches itself (public and signed URLs are
 * accepted since January 2026; before that only Files API and YouTube URIs were). What has no Gemini form is
 * refused with the reason, never dropped.
 */
import type { ContentPart } from '../../openai/chat-types.js';
import { untranslatable } from './errors.js';
import type { GeminiPart } from './wire-types.js';

/**
 * The image types Gemini documents. An OpenAI image URL carries no type, so it is guessed from the path's
 * extension and left out when unknown (`mimeType` is optional in `fileData`): a wrong guess would be worse.
 */
const IMAGE_TYPES: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
};

/** OpenAI's `input_audio.format` values with a Gemini audio type (Gemini lists wav, mp3, aiff, aac, ogg, flac). */
const AUDIO_TYPES: Readonly<Record<string, string>> = {
  wav: 'audio/wav',
  mp3: 'audio/mp3',
  aiff: 'audio/aiff',
  aac: 'audio/aac',
  ogg: 'audio/ogg',
  flac: 'audio/flac',
};

const FILE_TYPES: Readonly<Record<string, string>> = { pdf: 'application/pdf', txt: 'text/plain' };

export function userParts(content: string | ContentPart[] | null, where: string): GeminiPart[] {
  if (content === null) return [];
  if (typeof content === 'string') return textParts(content);
  return content.flatMap((part, i) => userPart(part, `${where}.content[${i}]`));
}

export function textParts(text: string): GeminiPart[] {
  // Gemini refuses an empty text part; an empty string adds nothing to the conversation anyway.
  return text.length > 0 ? [{ text }] : [];
}

function userPart(part: ContentPart, where: string): GeminiPart[] {
  switch (part.type) {
    case 'text':
      return textParts(part.text);
    case 'refusal':
      return textParts(part.refusal);
    case 'image_url':
      // `detail` is dropped: Gemini picks the resolution itself on the v1beta generateContent path.
      return [imagePart(part.image_url.url, `${where}.image_url.url`)];
    case 'input_audio': {
      const { format, data } = part.input_audio;
      const mimeType = AUDIO_TYPES[format.toLowerCase()];
      if (mimeType === undefined) throw untranslatable(`${where}.input_audio.format '${format}' has no Gemini type`);
      return [{ inlineData: { mimeType, data } }];
    }
    case 'file':
      return [filePart(part.file, where)];
  }
}

function imagePart(url: string, where: string): GeminiPart {
  if (url.startsWith('data:')) {
    const inline = dataUrl(url);
    if (inline === null) throw untranslatable(`${where} is a data: URL that is not base64-encoded`);
    return { inlineData: inline };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw untranslatable(`${where} is neither a data: URL nor an http(s) URL`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw untranslatable(`${where} uses ${parsed.protocol} URLs; send the image inline as a data: URL or by http(s)`);
  }
  const mimeType = IMAGE_TYPES[extension(parsed.pathname)];
  return { fileData: { ...(mimeType ? { mimeType } : {}), fileUri: url } };
}

function filePart(file: { file_id?: string; file_data?: string; filename?: string }, where: string): GeminiPart {
  if (file.file_data === undefined) {
    throw untranslatable(`${where}.file: OpenAI file ids mean nothing to Gemini; send the file inline in 'file_data'`);
  }
  if (file.file_data.startsWith('data:')) {
    const inline = dataUrl(file.file_data);
    if (inline === null) throw untranslatable(`${where}.file.file_data is a data: URL that is not base64-encoded`);
    return { inlineData: inline };
  }
  // Bare base64 (as some OpenAI clients send PDFs): the type can only come from the file name.
  const mimeType = FILE_TYPES[extension(file.filename ?? '')];
  if (mimeType === undefined) {
    throw untranslatable(`${where}.file.file_data: send a data: URL so the file's type is known`);
  }
  return { inlineData: { mimeType, data: file.file_data } };
}

/** `data:<type>[;param...];base64,<data>` -> Gemini inline data; null when the URL is not base64. */
function dataUrl(url: string): { mimeType: string; data: string } | null {
  const comma = url.indexOf(',');
  if (comma < 0) return null;
  const meta = url.slice('data:'.length, comma).split(';');
  if (meta.at(-1)?.toLowerCase() !== 'base64') return null;
  const mimeType = meta[0] || 'application/octet-stream';
  return { mimeType, data: url.slice(comma + 1) };
}

function extension(path: string): string {
  const dot = path.lastIndexOf('.');
  return dot < 0 || dot < path.lastIndexOf('/') ? '' : path.slice(dot + 1).toLowerCase();
}
