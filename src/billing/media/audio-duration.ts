/**
 * Audio duration from headers: WAV (the fmt chunk's byte rate and the data chunk's size), MP3 (every
 * frame header walked, so variable bit rates count right) and FLAC (STREAMINFO's sample count). Other
 * formats return null and the caller bounds them by size. `unreadBytes` is the part of the file the walk
 * could not account for (a trailing tag, or junk after a broken frame): the caller counts it at its
 * size-based rate rather than assume it is silence.
 */
import { fourcc, u16le, u32be, u32le, type Base64Bytes } from './base64-bytes.js';
import type { MediaFormat } from './sniff.js';

export interface AudioDuration {
  seconds: number;
  unreadBytes: number;
}

export function readAudioDuration(bytes: Base64Bytes, format: MediaFormat): AudioDuration | null {
  const d = format === 'wav' ? wav(bytes) : format === 'mp3' ? mp3(bytes) : format === 'flac' ? flac(bytes) : null;
  if (d === null || !Number.isFinite(d.seconds) || d.seconds < 0) return null;
  return d;
}

/** Below this a "byte rate" is not audio (8 kHz 8-bit mono is 8,000 B/s; ADPCM speech about 2,000). */
const MIN_BYTE_RATE = 500;
const MAX_CHUNKS = 1_000;

function wav(bytes: Base64Bytes): AudioDuration | null {
  let pos = 12;
  let byteRate = 0;
  let dataBytes = -1;
  for (let n = 0; n < MAX_CHUNKS && pos + 8 <= bytes.length; n++) {
    const head = bytes.read(pos, 8);
    const id = fourcc(head, 0);
    const size = u32le(head, 4);
    const body = pos + 8;
    if (id === 'fmt ') {
      const fmt = bytes.read(body, 16);
      const audioFormat = u16le(fmt, 0);
      const channels = u16le(fmt, 2);
      const sampleRate = u32le(fmt, 4);
      const declared = u32le(fmt, 8);
      const blockAlign = u16le(fmt, 12);
      const bitsPerSample = u16le(fmt, 14);
      // For PCM the rate follows from the format; a header that declares a higher one would shorten the
      // duration, so the lower of the two is taken (a longer duration: the estimate errs high, not low).
      const computed = audioFormat === 1 ? sampleRate * Math.max(blockAlign, (channels * bitsPerSample) / 8) : 0;
      byteRate = computed > 0 ? Math.min(declared || computed, computed) : declared;
    } else if (id === 'data') {
      const present = bytes.length - body;
      // Streaming writers leave the size at 0 or 0xFFFFFFFF; then the data runs to the end of the file.
      dataBytes = size > 0 && size <= present ? size : present;
      if (byteRate > 0) break;
    }
    if (size > bytes.length) break;
    pos = body + size + (size % 2);
  }
  if (dataBytes < 0 || byteRate < MIN_BYTE_RATE) return null;
  return { seconds: dataBytes / byteRate, unreadBytes: 0 };
}

const MP3_BITRATES: Readonly<Record<string, readonly number[]>> = {
  '1-1': [32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
  '1-2': [32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
  '1-3': [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  '2-1': [32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
  '2-2': [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
  '2-3': [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
};
const MP3_SAMPLE_RATES: Readonly<Record<number, readonly number[]>> = {
  3: [44100, 48000, 32000], // MPEG-1
  2: [22050, 24000, 16000], // MPEG-2
  0: [11025, 12000, 8000], // MPEG-2.5
};
/** A 10 MB file at 8 kbit/s has about 145,000 frames; beyond this the rest is counted by size. */
const MAX_FRAMES = 400_000;
/** How far past the ID3 tag a first frame is looked for (encoders may pad). */
const RESYNC_BYTES = 64 * 1024;

interface Mp3Frame {
  length: number;
  seconds: number;
}

function mp3Frame(h: number): Mp3Frame | null {
  if ((h & 0xffe00000) >>> 0 !== 0xffe00000) return null;
  const version = (h >>> 19) & 3; // 0: 2.5, 1: reserved, 2: MPEG-2, 3: MPEG-1
  const layer = 4 - ((h >>> 17) & 3); // 1, 2 or 3 (4 = reserved)
  const bitrateIndex = (h >>> 12) & 15;
  const rateIndex = (h >>> 10) & 3;
  const padding = (h >>> 9) & 1;
  if (version === 1 || layer === 4 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) return null;
  const kbps = MP3_BITRATES[`${version === 3 ? 1 : 2}-${layer}`]?.[bitrateIndex - 1];
  const sampleRate = MP3_SAMPLE_RATES[version]?.[rateIndex];
  if (kbps === undefined || sampleRate === undefined) return null;
  const bitrate = kbps * 1000;
  if (layer === 1) return { length: (Math.floor((12 * bitrate) / sampleRate) + padding) * 4, seconds: 384 / sampleRate };
  const mpeg1 = version === 3;
  const samples = layer === 3 && !mpeg1 ? 576 : 1152;
  return { length: Math.floor(((samples / 8) * bitrate) / sampleRate) + padding, seconds: samples / sampleRate };
}

function readU32(bytes: Base64Bytes, pos: number): number {
  return u32be(bytes.read(pos, 4), 0);
}

function mp3(bytes: Base64Bytes): AudioDuration | null {
  let pos = 0;
  // ID3v2 tags (possibly several): "ID3", version, flags, then a 28-bit "syncsafe" size.
  for (let n = 0; n < 8; n++) {
    const tag = bytes.read(pos, 10);
    if (fourcc(tag, 0).slice(0, 3) !== 'ID3') break;
    const size = (((tag[6] ?? 0) & 0x7f) << 21) | (((tag[7] ?? 0) & 0x7f) << 14) | (((tag[8] ?? 0) & 0x7f) << 7) | ((tag[9] ?? 0) & 0x7f);
    pos += 10 + size + (((tag[5] ?? 0) & 0x10) !== 0 ? 10 : 0);
  }
  pos = firstFrame(bytes, pos);
  if (pos < 0) return null;
  let seconds = 0;
  let frames = 0;
  while (frames < MAX_FRAMES && pos + 4 <= bytes.length) {
    const frame = mp3Frame(readU32(bytes, pos));
    if (frame === null) break;
    seconds += frame.seconds;
    pos += frame.length;
    frames++;
  }
  if (frames === 0) return null;
  return { seconds, unreadBytes: Math.max(0, bytes.length - pos) };
}

/** The first offset from `from` where two consecutive valid frame headers start; -1 if none nearby. */
function firstFrame(bytes: Base64Bytes, from: number): number {
  const window = bytes.read(from, RESYNC_BYTES);
  for (let i = 0; i + 4 <= window.length; i++) {
    if (window[i] !== 0xff) continue;
    const frame = mp3Frame(u32be(window, i));
    if (frame === null) continue;
    const next = from + i + frame.length;
    if (next + 4 > bytes.length || mp3Frame(readU32(bytes, next)) !== null) return from + i;
  }
  return -1;
}

/** FLAC: STREAMINFO (always the first metadata block) holds the sample rate and the total sample count. */
function flac(bytes: Base64Bytes): AudioDuration | null {
  const h = bytes.read(0, 26);
  if (h.length < 26 || ((h[4] ?? 0) & 0x7f) !== 0) return null;
  // 20 bits of sample rate, 3 of channels, 5 of bits per sample, then 36 bits of total samples.
  const sampleRate = ((h[18] ?? 0) << 12) | ((h[19] ?? 0) << 4) | ((h[20] ?? 0) >>> 4);
  const totalSamples = ((h[21] ?? 0) & 0x0f) * 2 ** 32 + u32be(h, 22);
  if (sampleRate === 0 || totalSamples === 0) return null;
  return { seconds: totalSamples / sampleRate, unreadBytes: 0 };
}
