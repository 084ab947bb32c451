/**
 * Duration of an ISO base media file (MP4, MOV, M4A, 3GP) from its movie header (`moov/mvhd`), found by
 * walking box headers: the `mdat` payload is skipped by its size, never decoded, so a `moov` at the end
 * of a 9 MB file costs a few dozen small reads. Null for fragmented files (duration 0) and broken ones.
 */
import { fourcc, u32be, type Base64Bytes } from './base64-bytes.js';

const MAX_BOXES = 10_000;
/** A day of media: a longer declared duration is not a recording anyone sends inline. */
const MAX_SECONDS = 86_400;

export function readMp4Seconds(bytes: Base64Bytes): number | null {
  const moov = findBox(bytes, 0, bytes.length, 'moov');
  if (moov === null) return null;
  const mvhd = findBox(bytes, moov.body, moov.end, 'mvhd');
  if (mvhd === null) return null;
  const h = bytes.read(mvhd.body, 32);
  const version = h[0] ?? 0;
  // Version 0: 32-bit creation, modification, timescale, duration; version 1: 64-bit times and duration.
  const timescale = version === 1 ? u32be(h, 20) : u32be(h, 12);
  const duration = version === 1 ? u32be(h, 24) * 2 ** 32 + u32be(h, 28) : u32be(h, 16);
  if (timescale === 0 || duration === 0) return null;
  const seconds = duration / timescale;
  return seconds > 0 && seconds <= MAX_SECONDS ? seconds : null;
}

interface Box {
  body: number;
  end: number;
}

function findBox(bytes: Base64Bytes, from: number, to: number, type: string): Box | null {
  let pos = from;
  for (let n = 0; n < MAX_BOXES && pos + 8 <= to; n++) {
    const h = bytes.read(pos, 16);
    let size = u32be(h, 0);
    let header = 8;
    if (size === 1) {
      size = u32be(h, 8) * 2 ** 32 + u32be(h, 12); // 64-bit "largesize"
      header = 16;
    } else if (size === 0) {
      size = to - pos; // the box runs to the end of its container
    }
    if (size < header) return null;
    if (fourcc(h, 4) === type) return { body: pos + header, end: Math.min(to, pos + size) };
    pos += size;
  }
  return null;
}
