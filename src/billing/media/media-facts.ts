/**
 * What the attachments of a request are, read once per request whatever the number of targets: for each
 * image, audio and file part, its kind (from its bytes, not its declared type) and what its cost depends
 * on (pixel size, duration, page count, byte size), or, for a part given by reference, what kind of
 * reference it is. Turning facts into tokens is per provider (./media-rules.ts). Never throws: whatever a
 * part holds, it becomes a fact, at worst "unreadable, this many bytes".
 */
import type { ChatMessage, ContentPart } from '../../openai/chat-types.js';
import { readAudioDuration } from './audio-duration.js';
import { Base64Bytes } from './base64-bytes.js';
import { parseDataUrl } from './data-url.js';
import { readImageSize, type ImageSize } from './image-size.js';
import { readPdfPages, scanPdf } from './pdf-pages.js';
import { kindOf, kindOfMimeType, sniffFormat, type MediaKind } from './sniff.js';
import { readMp4Seconds } from './video-duration.js';

export type ImageDetail = 'auto' | 'low' | 'high';

/** What a linked resource is, judged from its URL: only images have a size some providers cap. */
export type RemoteKind = 'video' | 'audio' | 'document';

export type MediaFact =
  /** Inline image; `size` null when its header could not be read. */
  | { type: 'image'; size: ImageSize | null; detail: ImageDetail; bytes: number }
  /** Inline audio; `seconds` null when unreadable, `unreadBytes` what a partial read left uncounted. */
  | { type: 'audio'; seconds: number | null; unreadBytes: number; bytes: number }
  | { type: 'video'; seconds: number | null; bytes: number }
  | { type: 'pdf'; pages: number | null; bytes: number }
  /** Any other inline file (text, office documents, unknown binary). */
  | { type: 'file'; bytes: number }
  /** An image given by URL; `fetchable` when http(s) (the only URLs an upstream will fetch). */
  | { type: 'image-url'; detail: ImageDetail; fetchable: boolean }
  /** Audio, video or a document given by URL: no provider caps what such a link may cost. */
  | { type: 'remote'; what: RemoteKind }
  /** A file stored at the provider (`file_id`): its size is not the gateway's to know. */
  | { type: 'stored-file' };

export interface MediaPart {
  /** Where the part is, as a request parameter path, e.g. `messages[0].content[1].image_url.url`. */
  param: string;
  fact: MediaFact;
}

/** Every attachment of `messages`, with PDF object streams inflated to count their pages. */
export async function inspectMedia(messages: readonly ChatMessage[]): Promise<MediaPart[]> {
  const parts = collect(messages, true);
  for (const p of parts) {
    if (p.pdf) p.part.fact = { type: 'pdf', pages: await readPdfPages(p.pdf), bytes: p.pdf.length };
  }
  return parts.map((p) => p.part);
}

/** The same without inflating anything: PDFs whose page tree is compressed count as unreadable. */
export function inspectMediaSync(messages: readonly ChatMessage[]): MediaPart[] {
  return collect(messages, false).map((p) => p.part);
}

interface Collected {
  part: MediaPart;
  /** A PDF whose pages are still to be counted (async path). */
  pdf?: Base64Bytes;
}

function collect(messages: readonly ChatMessage[], deferPdf: boolean): Collected[] {
  const out: Collected[] = [];
  messages.forEach((m, i) => {
    if (!Array.isArray(m.content)) return;
    m.content.forEach((part, j) => {
      const c = collectPart(part, `messages[${i}].content[${j}]`, deferPdf);
      if (c) out.push(c);
    });
  });
  return out;
}

function collectPart(part: ContentPart, at: string, deferPdf: boolean): Collected | null {
  switch (part.type) {
    case 'text':
    case 'refusal':
      return null;
    case 'image_url': {
      const param = `${at}.image_url.url`;
      const detail = part.image_url.detail ?? 'auto';
      const url = part.image_url.url;
      const data = parseDataUrl(url);
      if (data !== null) {
        if (!data.base64) return { part: { param, fact: { type: 'image', size: null, detail, bytes: data.payload.length } } };
        return inline(new Base64Bytes(data.payload), data.mimeType || 'image/*', param, detail, deferPdf);
      }
      if (!/^https?:\/\//i.test(url)) return { part: { param, fact: { type: 'image-url', detail, fetchable: false } } };
      const what = remoteKind(url);
      return { part: { param, fact: what === null ? { type: 'image-url', detail, fetchable: true } : { type: 'remote', what } } };
    }
    case 'input_audio': {
      const param = `${at}.input_audio.data`;
      const data = parseDataUrl(part.input_audio.data);
      const payload = data?.base64 ? data.payload : part.input_audio.data;
      return inline(new Base64Bytes(payload), `audio/${part.input_audio.format.toLowerCase()}`, param, 'auto', deferPdf);
    }
    case 'file': {
      const { file_id: fileId, file_data: fileData, filename } = part.file;
      if (fileData === undefined) {
        return fileId === undefined ? null : { part: { param: `${at}.file.file_id`, fact: { type: 'stored-file' } } };
      }
      const param = `${at}.file.file_data`;
      if (/^https?:\/\//i.test(fileData)) return { part: { param, fact: { type: 'remote', what: 'document' } } };
      const data = parseDataUrl(fileData);
      if (data !== null && !data.base64) return { part: { param, fact: { type: 'file', bytes: data.payload.length } } };
      const mimeType = data?.mimeType || (filename?.toLowerCase().endsWith('.pdf') ? 'application/pdf' : '');
      return inline(new Base64Bytes(data ? data.payload : fileData), mimeType, param, 'auto', deferPdf);
    }
  }
}

/**
 * An inline attachment: its kind from its bytes when they say, else from the declared type (formats
 * without a magic number, or bytes that are not what they claim to be).
 */
function inline(bytes: Base64Bytes, declared: string, param: string, detail: ImageDetail, deferPdf: boolean): Collected {
  const format = sniffFormat(bytes);
  const kind: MediaKind = format === 'unknown' ? kindOfMimeType(declared) : kindOf(format);
  const n = bytes.length;
  switch (kind) {
    case 'image':
      return { part: { param, fact: { type: 'image', size: readImageSize(bytes, format), detail, bytes: n } } };
    case 'audio': {
      const d = format === 'mp4-audio' ? wrapSeconds(readMp4Seconds(bytes)) : readAudioDuration(bytes, format);
      return { part: { param, fact: { type: 'audio', seconds: d?.seconds ?? null, unreadBytes: d?.unreadBytes ?? 0, bytes: n } } };
    }
    case 'video':
      return { part: { param, fact: { type: 'video', seconds: format === 'mp4-video' ? readMp4Seconds(bytes) : null, bytes: n } } };
    case 'pdf':
      if (format !== 'pdf') return { part: { param, fact: { type: 'pdf', pages: null, bytes: n } } };
      if (deferPdf) return { part: { param, fact: { type: 'pdf', pages: null, bytes: n } }, pdf: bytes };
      return { part: { param, fact: { type: 'pdf', pages: scanPdf(bytes).pages, bytes: n } } };
    case 'other':
      return { part: { param, fact: { type: 'file', bytes: n } } };
  }
}

function wrapSeconds(seconds: number | null): { seconds: number; unreadBytes: number } | null {
  return seconds === null ? null : { seconds, unreadBytes: 0 };
}

const VIDEO_EXTENSIONS = new Set(['mp4', 'm4v', 'mov', 'qt', 'webm', 'mkv', 'avi', 'wmv', 'flv', 'mpeg', 'mpg', '3gp', '3g2', 'ogv', 'ts', 'm2ts', 'mts']);
const AUDIO_EXTENSIONS = new Set(['mp3', 'wav', 'ogg', 'oga', 'opus', 'flac', 'aac', 'm4a', 'aif', 'aiff', 'wma', 'amr']);
const DOCUMENT_EXTENSIONS = new Set(['pdf', 'txt', 'md', 'csv', 'tsv', 'json', 'xml', 'html', 'htm', 'rtf', 'doc', 'docx', 'odt', 'ppt', 'pptx', 'xls', 'xlsx', 'epub', 'zip']);
/** Hosts whose links are videos whatever their path (Gemini takes YouTube links as video input). */
const VIDEO_HOSTS = /(^|\.)(youtube\.com|youtu\.be|youtube-nocookie\.com|vimeo\.com)$/i;

/**
 * What a URL in an `image_url` part points at, judged by its host and its path's extension; null for an
 * image, or for a path that says nothing (signed URLs and CDNs often have no extension: those count as
 * images, the part's declared type).
 */
export function remoteKind(url: string): RemoteKind | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (VIDEO_HOSTS.test(parsed.hostname)) return 'video';
  const path = parsed.pathname;
  const dot = path.lastIndexOf('.');
  if (dot < 0 || dot < path.lastIndexOf('/')) return null;
  const ext = path.slice(dot + 1).toLowerCase();
  if (VIDEO_EXTENSIONS.has(ext)) return 'video';
  if (AUDIO_EXTENSIONS.has(ext)) return 'audio';
  if (DOCUMENT_EXTENSIONS.has(ext)) return 'document';
  return null;
}
