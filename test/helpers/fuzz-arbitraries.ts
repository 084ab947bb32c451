/** The fast-check arbitraries both fuzz files draw a request's framing from: header text, content type, transfer. */
import fc from 'fast-check';

/** Printable ASCII only: anything else is refused by the client library or by Node's parser, not the app. */
export const headerText = (maxLength: number): fc.Arbitrary<string> =>
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength });

export const contentType = fc.oneof(
  { arbitrary: fc.constant('application/json'), weight: 8 },
  { arbitrary: fc.constantFrom(undefined, 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=utf-16', '*/*', ''), weight: 2 },
);

export interface Framing {
  contentType: string | undefined;
  extra: Record<string, string>;
  /** Chunked transfer in pieces of this many bytes, or a Content-Length. */
  chunkBytes: number | undefined;
}

/** A request's framing, with up to 3 of the door's own extra headers now and then. */
export function framingWith(extraHeaders: fc.Arbitrary<Record<string, string>>): fc.Arbitrary<Framing> {
  return fc.record({
    contentType,
    extra: fc.oneof({ arbitrary: fc.constant({}), weight: 3 }, { arbitrary: extraHeaders, weight: 1 }),
    chunkBytes: fc.option(fc.integer({ min: 1, max: 8_192 }), { nil: undefined, freq: 3 }),
  });
}
