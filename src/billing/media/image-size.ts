/**
 * Image dimensions from the header bytes of PNG, JPEG, GIF, WebP and HEIF/AVIF, without decoding pixels.
 * Only the bytes the header needs are decoded from the base64 (a JPEG's segments are walked by their
 * lengths, so an EXIF block of 60 KB is skipped, not read). Null when the header is missing, truncated or
 * implausible: the caller then holds the provider's largest image instead.
 */
import { findAscii, type MediaFormat } from './sniff.js';
import { u16be, u16le, u24le, u32be, u32le, fourcc, type Base64Bytes } from './base64-bytes.js';

export interface ImageSize {
  width: number;
  height: number;
}

/** Beyond this a side is not an image anyone renders; such a header is treated as unreadable. */
const MAX_SIDE = 1_000_000;
/** A JPEG whose frame header is this far in is not walked further (ICC profiles and EXIF are < 1 MB). */
const JPEG_MAX_WALK = 4 * 1024 * 1024;
/** HEIF keeps `ispe` in the `meta` box near the start; files with `mdat` first are not searched. */
const HEIF_SEARCH_BYTES = 256 * 1024;

export function readImageSize(bytes: Base64Bytes, format: MediaFormat): ImageSize | null {
  const size = readRaw(bytes, format);
  if (size === null) return null;
  const { width, height } = size;
  const plausible = (n: number): boolean => Number.isInteger(n) && n >= 1 && n <= MAX_SIDE;
  return plausible(width) && plausible(height) ? size : null;
}

function readRaw(bytes: Base64Bytes, format: MediaFormat): ImageSize | null {
  switch (format) {
    case 'png':
      return png(bytes);
    case 'gif': {
      const h = bytes.read(0, 10);
      return h.length < 10 ? null : { width: u16le(h, 6), height: u16le(h, 8) };
    }
    case 'jpeg':
      return jpeg(bytes);
    case 'webp':
      return webp(bytes);
    case 'heif':
      return heif(bytes);
    default:
      return null;
  }
}

function png(bytes: Base64Bytes): ImageSize | null {
  const h = bytes.read(0, 24);
  // The first chunk must be IHDR (PNG specification 11.2.2); anything else is not a PNG we can trust.
  if (h.length < 24 || fourcc(h, 12) !== 'IHDR') return null;
  return { width: u32be(h, 16), height: u32be(h, 20) };
}

/** SOFn markers carry the frame size; C4 (DHT), C8 (JPG) and CC (DAC) share the range but are not frames. */
function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

function jpeg(bytes: Base64Bytes): ImageSize | null {
  let pos = 2;
  const limit = Math.min(bytes.length, JPEG_MAX_WALK);
  while (pos + 4 <= limit) {
    if (bytes.byte(pos) !== 0xff) return null;
    let marker = bytes.byte(pos + 1);
    // Any number of 0xFF fill bytes may precede a marker.
    while (marker === 0xff && pos + 2 < limit) {
      pos++;
      marker = bytes.byte(pos + 1);
    }
    // Standalone markers (RSTn, TEM, SOI) have no length field.
    if ((marker >= 0xd0 && marker <= 0xd8) || marker === 0x01) {
      pos += 2;
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) return null; // end of image, or scan data before any frame
    const seg = bytes.read(pos + 2, 7);
    const length = u16be(seg, 0);
    if (length < 2) return null;
    if (isStartOfFrame(marker)) {
      if (seg.length < 7) return null;
      return { height: u16be(seg, 3), width: u16be(seg, 5) };
    }
    pos += 2 + length;
  }
  return null;
}

function webp(bytes: Base64Bytes): ImageSize | null {
  const h = bytes.read(0, 30);
  if (h.length < 30) return null;
  switch (fourcc(h, 12)) {
    case 'VP8 ':
      // Lossy: a 3-byte frame tag, the start code 9D 01 2A, then 14-bit width and height.
      if (h[23] !== 0x9d || h[24] !== 0x01 || h[25] !== 0x2a) return null;
      return { width: u16le(h, 26) & 0x3fff, height: u16le(h, 28) & 0x3fff };
    case 'VP8L': {
      // Lossless: signature 0x2F, then width-1 and height-1 in 14 bits each, least significant bit first.
      if (h[20] !== 0x2f) return null;
      const bits = u32le(h, 21);
      return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >>> 14) & 0x3fff) };
    }
    case 'VP8X':
      // Extended: canvas width-1 and height-1 in 24 bits each.
      return { width: 1 + u24le(h, 24), height: 1 + u24le(h, 27) };
    default:
      return null;
  }
}

/**
 * HEIF/AVIF: the `ispe` property of each image item (primary image, grid tiles, thumbnails). The largest
 * is taken: a grid's own `ispe` is the full picture, tiles and thumbnails are smaller.
 */
function heif(bytes: Base64Bytes): ImageSize | null {
  const window = bytes.read(0, HEIF_SEARCH_BYTES);
  let best: ImageSize | null = null;
  let from = 0;
  for (;;) {
    const i = findAscii(window.subarray(from), 'ispe');
    if (i < 0) break;
    const at = from + i;
    // After the type: 1 byte version, 3 bytes flags, then width and height as 32-bit integers.
    const width = u32be(window, at + 8);
    const height = u32be(window, at + 12);
    if (at + 16 <= window.length && (best === null || width * height > best.width * best.height)) best = { width, height };
    from = at + 4;
  }
  return best;
}
