/**
 * Real media files built in the test, byte by byte, where a few lines do it (PNG, WAV, PDF with and
 * without object streams); formats that need a real encoder are committed under test/fixtures/media/.
 * The PDFs pass `qpdf --check` (test/unit/media-readers.test.ts checks one when qpdf is installed).
 */
import { crc32, deflateSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const FIXTURES = fileURLToPath(new URL('../fixtures/media/', import.meta.url));

export function fixture(name: string): Uint8Array {
  return new Uint8Array(readFileSync(FIXTURES + name));
}

export function b64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64');
}

const latin1 = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0) & 0xff);

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A PNG of `width` x `height`, grey, 8-bit; `pixels: false` writes the header with an empty image (a lie). */
export function png(width: number, height: number, pixels = true): Uint8Array {
  const chunk = (type: string, data: Uint8Array): Uint8Array => {
    const head = new Uint8Array(8);
    new DataView(head.buffer).setUint32(0, data.length);
    head.set(latin1(type), 4);
    const crc = new Uint8Array(4);
    new DataView(crc.buffer).setUint32(0, crc32(concat([latin1(type), data])));
    return concat([head, data, crc]);
  };
  const ihdr = new Uint8Array(13);
  const v = new DataView(ihdr.buffer);
  v.setUint32(0, width);
  v.setUint32(4, height);
  ihdr.set([8, 0, 0, 0, 0], 8); // 8-bit greyscale, deflate, adaptive filter, no interlace
  const raw = pixels ? new Uint8Array((width + 1) * height).fill(0x80) : new Uint8Array(0);
  if (pixels) for (let y = 0; y < height; y++) raw[y * (width + 1)] = 0; // filter type 0 per scanline
  return concat([
    Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a),
    chunk('IHDR', ihdr),
    chunk('IDAT', new Uint8Array(deflateSync(raw))),
    chunk('IEND', new Uint8Array(0)),
  ]);
}

/** A PCM WAV of `seconds` of a 440 Hz tone. */
export function wav(seconds: number, sampleRate = 8000, channels = 1, bits = 16): Uint8Array {
  const blockAlign = (channels * bits) / 8;
  const frames = Math.round(seconds * sampleRate);
  const data = new Uint8Array(frames * blockAlign);
  const dv = new DataView(data.buffer);
  for (let i = 0; i < frames; i++) {
    const s = Math.round(Math.sin((2 * Math.PI * 440 * i) / sampleRate) * 8000);
    for (let c = 0; c < channels; c++) {
      if (bits === 16) dv.setInt16((i * channels + c) * 2, s, true);
      else dv.setUint8(i * channels + c, 128 + (s >> 8));
    }
  }
  const head = new Uint8Array(44);
  const h = new DataView(head.buffer);
  head.set(latin1('RIFF'), 0);
  h.setUint32(4, 36 + data.length, true);
  head.set(latin1('WAVEfmt '), 8);
  h.setUint32(16, 16, true);
  h.setUint16(20, 1, true);
  h.setUint16(22, channels, true);
  h.setUint32(24, sampleRate, true);
  h.setUint32(28, sampleRate * blockAlign, true);
  h.setUint16(32, blockAlign, true);
  h.setUint16(34, bits, true);
  head.set(latin1('data'), 36);
  h.setUint32(40, data.length, true);
  return concat([head, data]);
}

/**
 * A PDF of `pages` pages of text. `objectStreams`: the catalog, page tree and pages go into compressed
 * object streams with a cross-reference stream, as pdfTeX, Ghostscript and qpdf write them (PDF 1.5).
 */
export function pdf(pages: number, opts: { objectStreams?: boolean } = {}): Uint8Array {
  // Object numbers: 1 catalog, 2 page tree, 3 font, then per page i: page 4+2i, content 5+2i.
  const pageNum = (i: number): number => 4 + 2 * i;
  const kids = Array.from({ length: pages }, (_, i) => `${pageNum(i)} 0 R`).join(' ');
  const dicts = new Map<number, string>([
    [1, '<< /Type /Catalog /Pages 2 0 R >>'],
    [2, `<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`],
    [3, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'],
  ]);
  const streams = new Map<number, Uint8Array>();
  for (let i = 0; i < pages; i++) {
    dicts.set(pageNum(i), `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${pageNum(i) + 1} 0 R >>`);
    const lines = Array.from({ length: 40 }, (_, l) => `BT /F1 11 Tf 72 ${740 - l * 16} Td (Page ${i + 1}, line ${l + 1}: the quick brown fox jumps over the lazy dog.) Tj ET`);
    streams.set(pageNum(i) + 1, new Uint8Array(deflateSync(latin1(lines.join('\n')))));
  }
  const size = 4 + 2 * pages + (opts.objectStreams ? 2 : 0);
  const parts: Uint8Array[] = [latin1('%PDF-1.5\n%\xe2\xe3\xcf\xd3\n')];
  let offset = parts[0]!.length;
  const entries = new Map<number, { type: 1; offset: number } | { type: 2; stream: number; index: number }>();
  const emit = (num: number, body: Uint8Array): void => {
    entries.set(num, { type: 1, offset });
    const obj = concat([latin1(`${num} 0 obj\n`), body, latin1('\nendobj\n')]);
    parts.push(obj);
    offset += obj.length;
  };
  const stream = (dict: string, data: Uint8Array): Uint8Array =>
    concat([latin1(`<< ${dict} /Length ${data.length} /Filter /FlateDecode >>\nstream\n`), data, latin1('\nendstream')]);
  for (const [num, data] of streams) emit(num, stream('', data));
  if (!opts.objectStreams) {
    for (const [num, dict] of dicts) emit(num, latin1(dict));
    const xrefAt = offset;
    const rows = ['0000000000 65535 f \n'];
    for (let n = 1; n < size; n++) rows.push(`${String((entries.get(n) as { offset: number }).offset).padStart(10, '0')} 00000 n \n`);
    parts.push(latin1(`xref\n0 ${size}\n${rows.join('')}trailer\n<< /Size ${size} /Root 1 0 R >>\nstartxref\n${xrefAt}\n%%EOF\n`));
    return concat(parts);
  }
  const objStm = size - 2;
  const xrefNum = size - 1;
  const inside = [...dicts.entries()];
  let header = '';
  let body = '';
  inside.forEach(([num, dict], index) => {
    header += `${num} ${body.length} `;
    body += dict + '\n';
    entries.set(num, { type: 2, stream: objStm, index });
  });
  emit(objStm, stream(`/Type /ObjStm /N ${inside.length} /First ${header.length}`, new Uint8Array(deflateSync(latin1(header + body)))));
  entries.set(xrefNum, { type: 1, offset });
  const rows = new Uint8Array(size * 7);
  const rv = new DataView(rows.buffer);
  for (let n = 0; n < size; n++) {
    const e = entries.get(n);
    if (e === undefined) {
      rv.setUint8(n * 7, 0);
      rv.setUint16(n * 7 + 5, 65535);
    } else if (e.type === 1) {
      rv.setUint8(n * 7, 1);
      rv.setUint32(n * 7 + 1, e.offset);
    } else {
      rv.setUint8(n * 7, 2);
      rv.setUint32(n * 7 + 1, e.stream);
      rv.setUint16(n * 7 + 5, e.index);
    }
  }
  const xrefAt = offset;
  emit(xrefNum, stream(`/Type /XRef /Size ${size} /W [1 4 2] /Root 1 0 R`, new Uint8Array(deflateSync(rows))));
  parts.push(latin1(`startxref\n${xrefAt}\n%%EOF\n`));
  return concat(parts);
}

export function pdfBase64(pages: number, opts: { objectStreams?: boolean } = {}): string {
  return b64(pdf(pages, opts));
}
