/** `data:` URLs as OpenAI clients send attachments. */

export interface DataUrl {
  /** Lower-cased, e.g. `image/png`; empty when the URL names none. */
  mimeType: string;
  /** The payload: base64 when `base64` is true, else the URL-encoded text as sent. */
  payload: string;
  base64: boolean;
}

/** Parses `data:[<type>][;param]*[;base64],<payload>`; null when `url` is not a data: URL. */
export function parseDataUrl(url: string): DataUrl | null {
  if (!/^data:/i.test(url)) return null;
  const comma = url.indexOf(',');
  if (comma < 0) return null;
  const meta = url.slice(5, comma).split(';');
  return {
    mimeType: (meta[0] ?? '').trim().toLowerCase(),
    payload: url.slice(comma + 1),
    base64: meta.length > 1 && meta.at(-1)?.trim().toLowerCase() === 'base64',
  };
}
