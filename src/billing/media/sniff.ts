/**
 * What an attachment is, decided from its first bytes rather than from the MIME type the client declared:
 * the declared type costs nothing to lie about, and the estimate must follow what the upstream will
 * actually decode. The declared type only decides among formats that carry no magic number.
 */
import { fourcc, type Base64Bytes } from './base64-bytes.js';

export type MediaFormat =
  | 'png'
  | 'jpeg'
  | 'gif'
  | 'webp'
  | 'heif'
  | 'pdf'
  | 'wav'
  | 'mp3'
  | 'mp4-audio'
  | 'mp4-video'
  | 'ogg'
  | 'flac'
  | 'aiff'
  | 'webm'
  | 'unknown';

export type MediaKind = 'image' | 'audio' | 'video' | 'pdf' | 'other';

const KIND: Readonly<Record<MediaFormat, MediaKind>> = {
  png: 'image',
  jpeg: 'image',
  gif: 'image',
  webp: 'image',
  heif: 'image',
  pdf: 'pdf',
  wav: 'audio',
  mp3: 'audio',
  'mp4-audio': 'audio',
  ogg: 'audio',
  flac: 'audio',
  aiff: 'audio',
  'mp4-video': 'video',
  webm: 'video',
  unknown: 'other',
};

export function kindOf(format: MediaFormat): MediaKind {
  return KIND[format];
}

/** ISO BMFF brands of HEIF/AVIF still images; any other `ftyp` is a movie or an audio file. */
const HEIF_BRANDS = new Set(['heic', 'heix', 'heim', 'heis', 'hevc', 'hevx', 'mif1', 'msf1', 'avif', 'avis']);
const AUDIO_BRANDS = new Set(['M4A ', 'M4B ', 'M4P ', 'F4A ', 'F4B ']);

export function sniffFormat(bytes: Base64Bytes): MediaFormat {
  const h = bytes.read(0, 16);
  const at = (i: number): number => h[i] ?? -1;
  if (at(0) === 0x89 && at(1) === 0x50 && at(2) === 0x4e && at(3) === 0x47) return 'png';
  if (at(0) === 0xff && at(1) === 0xd8 && at(2) === 0xff) return 'jpeg';
  if (fourcc(h, 0) === 'GIF8') return 'gif';
  if (fourcc(h, 0) === 'RIFF') {
    const form = fourcc(h, 8);
    if (form === 'WEBP') return 'webp';
    if (form === 'WAVE') return 'wav';
  }
  if (fourcc(h, 4) === 'ftyp') {
    const brand = fourcc(h, 8);
    if (HEIF_BRANDS.has(brand)) return 'heif';
    return AUDIO_BRANDS.has(brand) ? 'mp4-audio' : 'mp4-video';
  }
  if (fourcc(h, 0) === 'OggS') return 'ogg';
  if (fourcc(h, 0) === 'fLaC') return 'flac';
  if (fourcc(h, 0) === 'FORM' && (fourcc(h, 8) === 'AIFF' || fourcc(h, 8) === 'AIFC')) return 'aiff';
  if (at(0) === 0x1a && at(1) === 0x45 && at(2) === 0xdf && at(3) === 0xa3) return 'webm';
  if (fourcc(h, 0).startsWith('ID3') || (at(0) === 0xff && at(1) >= 0xe0)) return 'mp3';
  // PDF readers accept junk before the header; the specification's implementation notes allow 1 KB.
  if (findAscii(bytes.read(0, 1024), '%PDF-') >= 0) return 'pdf';
  return 'unknown';
}

/** Formats without a magic number the gateway checks, by declared MIME type (audio/aac, video/mpeg ...). */
export function kindOfMimeType(mimeType: string): MediaKind {
  const t = mimeType.toLowerCase();
  if (t === 'application/pdf') return 'pdf';
  if (t.startsWith('image/')) return 'image';
  if (t.startsWith('audio/')) return 'audio';
  if (t.startsWith('video/')) return 'video';
  return 'other';
}

export function findAscii(b: Uint8Array, needle: string): number {
  outer: for (let i = 0; i + needle.length <= b.length; i++) {
    for (let k = 0; k < needle.length; k++) if (b[i + k] !== needle.charCodeAt(k)) continue outer;
    return i;
  }
  return -1;
}
