/**
 * The attachment readers on real bytes (test/fixtures/media/ and files built here), and on hostile ones:
 * truncated headers, absurd sizes, bytes that are not what their MIME type says. A reader answers a
 * number or "unreadable", never throws.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readAudioDuration } from '../../src/billing/media/audio-duration.js';
import { Base64Bytes } from '../../src/billing/media/base64-bytes.js';
import { readImageSize } from '../../src/billing/media/image-size.js';
import { inspectMedia, inspectMediaSync, remoteKind, type MediaFact } from '../../src/billing/media/media-facts.js';
import { readPdfPages, scanPdf } from '../../src/billing/media/pdf-pages.js';
import { sniffFormat } from '../../src/billing/media/sniff.js';
import { readMp4Seconds } from '../../src/billing/media/video-duration.js';
import type { ChatMessage, ContentPart } from '../../src/openai/chat-types.js';
import { b64, fixture, pdf, png, wav } from './media-builders.js';

const bytesOf = (b: Uint8Array): Base64Bytes => new Base64Bytes(b64(b));
const imageSize = (b: Uint8Array) => {
  const bytes = bytesOf(b);
  return readImageSize(bytes, sniffFormat(bytes));
};
const audioSeconds = (b: Uint8Array) => {
  const bytes = bytesOf(b);
  return readAudioDuration(bytes, sniffFormat(bytes))?.seconds ?? null;
};
const user = (...content: ContentPart[]): ChatMessage[] => [{ role: 'user', content }];
const factOf = async (part: ContentPart): Promise<MediaFact> => (await inspectMedia(user(part)))[0]!.fact;

describe('Base64Bytes', () => {
  it('reads any range of the decoded bytes, as the whole decode would', () => {
    const data = Uint8Array.from({ length: 1000 }, (_, i) => (i * 37) % 256);
    const bytes = bytesOf(data);
    expect(bytes.length).toBe(1000);
    for (const [at, n] of [[0, 1], [1, 5], [2, 7], [997, 10], [500, 0]] as const) {
      expect([...bytes.read(at, n)]).toEqual([...data.subarray(at, at + n)]);
    }
    expect(bytes.latin1()).toBe(String.fromCharCode(...data));
  });
  it('tolerates line breaks, URL-safe characters and garbage', () => {
    const data = Uint8Array.from([0xfb, 0xff, 0xbf, 1, 2, 3]);
    const wrapped = b64(data).replace(/(.{4})/g, '$1\r\n');
    expect([...new Base64Bytes(wrapped).read(0, 6)]).toEqual([...data]);
    expect([...new Base64Bytes(b64(data).replace(/\+/g, '-').replace(/\//g, '_')).read(0, 6)]).toEqual([...data]);
    const junk = new Base64Bytes('%%%%é€\u0000!!');
    expect(() => junk.read(0, 100)).not.toThrow();
    expect(() => junk.latin1()).not.toThrow();
    expect(new Base64Bytes('').read(0, 4)).toHaveLength(0);
  });
});

describe('image sizes from headers', () => {
  it.each([
    ['photo-2048x1536.jpg', 2048, 1536], // the frame header 93 KB in, behind COM and APP13 segments
    ['progressive-800x600.jpg', 800, 600],
    ['drawing-300x200.gif', 300, 200],
    ['lossy-640x480.webp', 640, 480],
    ['lossless-333x222.webp', 333, 222],
    ['alpha-500x400.webp', 500, 400],
    ['photo-640x480.heic', 640, 480],
  ])('%s', (name, width, height) => {
    expect(imageSize(fixture(name))).toEqual({ width, height });
  });
  it('PNG', () => {
    expect(imageSize(png(1024, 768))).toEqual({ width: 1024, height: 768 });
    expect(imageSize(png(1, 1))).toEqual({ width: 1, height: 1 });
  });
  it('reads only the header: a 9 MB JPEG costs a few small decodes', () => {
    const big = new Uint8Array(9 * 1024 * 1024);
    big.set(fixture('progressive-800x600.jpg'));
    const bytes = bytesOf(big);
    const started = performance.now();
    expect(readImageSize(bytes, sniffFormat(bytes))).toEqual({ width: 800, height: 600 });
    expect(performance.now() - started).toBeLessThan(20);
  });
  it('hostile headers: truncated, absurd, lying', () => {
    const jpeg = fixture('progressive-800x600.jpg');
    for (const cut of [3, 10, 21, 100]) expect(imageSize(jpeg.subarray(0, cut))).toBeNull();
    expect(imageSize(png(1, 1).subarray(0, 20))).toBeNull();
    // A PNG header announcing 100000 x 100000 with no pixels is still that size; 2^31 is not an image.
    expect(imageSize(png(100_000, 100_000, false))).toEqual({ width: 100_000, height: 100_000 });
    expect(imageSize(png(2 ** 31 - 1, 2 ** 31 - 1, false))).toBeNull();
    expect(imageSize(png(0, 5, false))).toBeNull();
    // A JPEG whose segment lengths run in circles or off the end.
    const loop = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x00, 0xff, 0xe1]);
    expect(imageSize(loop)).toBeNull();
    expect(imageSize(Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0xff, 0xff]))).toBeNull();
    // WebP with a wrong start code.
    const webp = fixture('lossy-640x480.webp').slice();
    webp[23] = 0;
    expect(imageSize(webp)).toBeNull();
  });
});

describe('audio and video durations', () => {
  it('WAV from its header, whatever the sample format', () => {
    expect(audioSeconds(wav(2.5))).toBeCloseTo(2.5, 6);
    expect(audioSeconds(wav(1, 44_100, 2, 16))).toBeCloseTo(1, 6);
    expect(audioSeconds(wav(3, 8000, 1, 8))).toBeCloseTo(3, 6);
  });
  it('WAV whose header lies about its byte rate counts the longer duration', () => {
    const w = wav(2);
    new DataView(w.buffer).setUint32(28, 1_000_000, true); // a byte rate 60x the format's
    expect(audioSeconds(w)).toBeCloseTo(2, 6);
    new DataView(w.buffer).setUint32(40, 0xffffffff, true); // a streaming writer's size: to the end
    expect(audioSeconds(w)).toBeCloseTo(2, 6);
  });
  it('MP3 by walking its frames (CBR, VBR behind an ID3 tag), FLAC, M4A', () => {
    expect(audioSeconds(fixture('cbr-32k-5s.mp3'))).toBeCloseTo(5.076, 2);
    // ffprobe says 5.076 s from the encoder's delay and padding; the walk also counts the Xing frame
    // (one more 36 ms frame): the safe side.
    expect(audioSeconds(fixture('vbr-5s-id3.mp3'))).toBeCloseTo(5.112, 2);
    expect(audioSeconds(fixture('flac-3s.flac'))).toBeCloseTo(3, 6);
    expect(readMp4Seconds(bytesOf(fixture('aac-4s.m4a')))).toBeCloseTo(4, 1);
  });
  it('MP4 video with its movie header at the end or at the start', () => {
    expect(readMp4Seconds(bytesOf(fixture('clip-6s-moov-end.mp4')))).toBeCloseTo(6, 1);
    expect(readMp4Seconds(bytesOf(fixture('clip-6s-faststart.mp4')))).toBeCloseTo(6, 1);
  });
  it('hostile audio: truncated, broken mid-way, not audio', () => {
    expect(audioSeconds(wav(1).subarray(0, 30))).toBeNull();
    const mp3 = fixture('cbr-32k-5s.mp3');
    // Cut in half, then the second half overwritten with junk: half is read, the rest is left to the size bound.
    const broken = mp3.slice();
    broken.fill(0x55, Math.floor(broken.length / 2));
    const d = readAudioDuration(bytesOf(broken), 'mp3');
    expect(d?.seconds).toBeGreaterThan(2);
    expect(d?.seconds).toBeLessThan(3);
    expect(d?.unreadBytes).toBeGreaterThan(broken.length / 2 - 500);
    expect(readAudioDuration(bytesOf(Uint8Array.from([0xff, 0xfb, 0xff, 0xff])), 'mp3')).toBeNull();
    expect(readMp4Seconds(bytesOf(Uint8Array.from([0, 0, 0, 8, 0x6d, 0x6f, 0x6f, 0x76])))).toBeNull();
    expect(readMp4Seconds(bytesOf(Uint8Array.from([0, 0, 0, 0, 0x66, 0x74, 0x79, 0x70])))).toBeNull();
  });
});

describe('PDF pages', () => {
  it('a plain PDF, by its page tree', async () => {
    expect(scanPdf(bytesOf(pdf(7))).pages).toBe(7);
    expect(await readPdfPages(bytesOf(fixture('gs-5pages.pdf')))).toBe(5);
  });
  it('a PDF whose page tree is in compressed object streams, by inflating them', async () => {
    const objstm = bytesOf(pdf(40, { objectStreams: true }));
    expect(scanPdf(objstm).pages).toBeNull();
    expect(await readPdfPages(objstm)).toBe(40);
    expect(await readPdfPages(bytesOf(fixture('qpdf-5pages-objstm.pdf')))).toBe(5);
    expect(await readPdfPages(bytesOf(fixture('linearized-5pages.pdf')))).toBe(5);
  });
  it('an encrypted PDF has no readable page count', async () => {
    expect(await readPdfPages(bytesOf(fixture('encrypted-5pages.pdf')))).toBeNull();
  });
  it('the generated PDFs are valid (qpdf --check), when qpdf is installed', () => {
    let qpdf = true;
    try {
      execFileSync('qpdf', ['--version'], { stdio: 'ignore' });
    } catch {
      qpdf = false;
    }
    if (!qpdf) return;
    const dir = mkdtempSync(join(tmpdir(), 'svc-pdf-'));
    for (const [name, bytes] of [['plain.pdf', pdf(3)], ['objstm.pdf', pdf(3, { objectStreams: true })]] as const) {
      writeFileSync(join(dir, name), bytes);
      expect(execFileSync('qpdf', ['--show-npages', join(dir, name)]).toString().trim()).toBe('3');
    }
  });
  it('hostile PDFs: a decompression bomb, a lying /Count, truncation, junk', async () => {
    // 64 MB of zeros deflated to 64 KB, as an object stream: inflated under a budget, quickly.
    const { deflateSync } = await import('node:zlib');
    const bomb = new Uint8Array(deflateSync(new Uint8Array(64 * 1024 * 1024)));
    const head = new TextEncoder().encode(`%PDF-1.5\n1 0 obj\n<< /Type /ObjStm /N 1 /First 4 /Length ${bomb.length} /Filter /FlateDecode >>\nstream\n`);
    const tail = new TextEncoder().encode('\nendstream\nendobj\n%%EOF\n');
    const file = new Uint8Array(head.length + bomb.length + tail.length);
    file.set(head);
    file.set(bomb, head.length);
    file.set(tail, head.length + bomb.length);
    const started = performance.now();
    expect(await readPdfPages(bytesOf(file))).toBeNull();
    expect(performance.now() - started).toBeLessThan(2_000);

    const liar = new TextEncoder().encode('%PDF-1.4\n1 0 obj << /Type /Pages /Count 999999999 /Kids [] >> endobj\n');
    expect(await readPdfPages(bytesOf(liar))).toBeNull(); // beyond any real document: unreadable, bounded by size
    expect(await readPdfPages(bytesOf(pdf(12).subarray(0, 400)))).toBeNull();
    expect(await readPdfPages(new Base64Bytes('JVBERi0xLjQK!!!!'))).toBeNull();
  });
});

describe('what a part is', () => {
  it('follows the bytes, not the declared type', async () => {
    const pdfAsImage: ContentPart = { type: 'image_url', image_url: { url: `data:image/png;base64,${b64(pdf(3))}` } };
    expect(await factOf(pdfAsImage)).toEqual({ type: 'pdf', pages: 3, bytes: pdf(3).length });
    const pngAsPdf: ContentPart = { type: 'file', file: { file_data: `data:application/pdf;base64,${b64(png(64, 32))}` } };
    expect(await factOf(pngAsPdf)).toMatchObject({ type: 'image', size: { width: 64, height: 32 } });
    // Bytes that are nothing known keep the declared kind, unreadable.
    const noise = Uint8Array.from({ length: 5000 }, (_, i) => (i * 7919) % 251);
    expect(await factOf({ type: 'file', file: { file_data: `data:application/pdf;base64,${b64(noise)}` } })).toEqual({ type: 'pdf', pages: null, bytes: 5000 });
    expect(await factOf({ type: 'image_url', image_url: { url: `data:image/jpeg;base64,${b64(noise)}` } })).toMatchObject({ type: 'image', size: null });
    expect(await factOf({ type: 'input_audio', input_audio: { data: b64(noise), format: 'wav' } })).toMatchObject({ type: 'audio', seconds: null, bytes: 5000 });
  });
  it('reads audio given as bare base64 or as a data: URL, and files by name', async () => {
    expect(await factOf({ type: 'input_audio', input_audio: { data: b64(wav(1.5)), format: 'wav' } })).toMatchObject({ seconds: 1.5 });
    expect(await factOf({ type: 'input_audio', input_audio: { data: `data:audio/wav;base64,${b64(wav(1.5))}`, format: 'wav' } })).toMatchObject({ seconds: 1.5 });
    expect(await factOf({ type: 'file', file: { file_data: b64(pdf(2)), filename: 'a.pdf' } })).toMatchObject({ type: 'pdf', pages: 2 });
    expect(await factOf({ type: 'file', file: { file_data: `data:text/plain;base64,${b64(new TextEncoder().encode('hello'))}` } })).toEqual({ type: 'file', bytes: 5 });
  });
  it('classifies URLs: images (bounded by some providers), videos, audio and documents (by nobody)', async () => {
    expect(await factOf({ type: 'image_url', image_url: { url: 'https://example.com/a/cat.webp?sig=1', detail: 'low' } })).toEqual({ type: 'image-url', detail: 'low', fetchable: true });
    expect(await factOf({ type: 'image_url', image_url: { url: 'https://cdn.example.com/signed/abc123' } })).toMatchObject({ type: 'image-url' });
    expect(remoteKind('https://example.com/movie.MP4')).toBe('video');
    expect(remoteKind('https://www.youtube.com/watch?v=x')).toBe('video');
    expect(remoteKind('https://youtu.be/x')).toBe('video');
    expect(remoteKind('https://example.com/talk.mp3')).toBe('audio');
    expect(remoteKind('https://example.com/report.pdf')).toBe('document');
    expect(remoteKind('https://example.com/v1.2/image')).toBeNull();
    expect(await factOf({ type: 'file', file: { file_data: 'https://example.com/report.pdf' } })).toEqual({ type: 'remote', what: 'document' });
    expect(await factOf({ type: 'file', file: { file_id: 'file-123' } })).toEqual({ type: 'stored-file' });
    expect(await factOf({ type: 'image_url', image_url: { url: 'ftp://example.com/a.png' } })).toMatchObject({ type: 'image-url', fetchable: false });
    expect(await factOf({ type: 'image_url', image_url: { url: 'data:image/svg+xml,<svg/>' } })).toEqual({ type: 'image', size: null, detail: 'auto', bytes: 6 });
  });
  it('names each part by its parameter path; text parts are not attachments', () => {
    const parts = inspectMediaSync([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${b64(png(10, 10))}` } }] },
    ]);
    expect(parts.map((p) => p.param)).toEqual(['messages[1].content[1].image_url.url']);
  });
});
