/**
 * JSON text kept as text and written into an answer as it is: the `notes` of a transaction and the
 * pushed `data` are kept as their JSON text (the sandbox's stored-json.ts), and an answer that holds
 * one would otherwise parse that text into objects (a 1 MiB `notes` of `[{},{},...]` is 350,000
 * of them) only for `JSON.stringify` to write the same text again, a few hundred milliseconds in
 * which no other request is answered.
 *
 * A {@link RawJson} stands in an answer's value where the text goes. {@link stringifyJson} (what
 * every answer is written with) writes a marker there and puts the text in its place afterwards, in
 * time proportional to the bytes. A plain `JSON.stringify` of a value holding one still writes the
 * right JSON (its `toJSON` parses the text), only slower.
 *
 * Hand-written: `JSON.stringify` has no way to insert raw text (`JSON.rawJSON` is not in Node 20),
 * and the JSON libraries that stream or splice text would add a dependency for these few lines.
 */

/** The marker a {@link RawJson} writes while {@link stringifyJson} runs; its JSON text is unique enough, and counted. */
const MARKER = '\u0000paylater-raw-json\u0000';
const MARKER_TEXT = JSON.stringify(MARKER);

/**
 * The texts met while {@link stringifyJson} writes a value: `null` while it writes one that has
 * none so far (no list is made for the usual answer, which has none), `undefined` outside it.
 */
let collecting: string[] | null | undefined;

/** A JSON value given as its text (valid JSON: the sandbox keeps only texts it wrote or checked). */
export class RawJson {
  constructor(readonly text: string) {}

  toJSON(): unknown {
    if (collecting === undefined) return JSON.parse(this.text) as unknown;
    (collecting ??= []).push(this.text);
    return MARKER;
  }
}

/**
 * `JSON.stringify(value)`, with every {@link RawJson} in it written as its text. Where a string of
 * the value itself happens to equal the marker (the counts differ), the value is written the slow
 * way, each text parsed, so the answer is right either way.
 */
export function stringifyJson(value: unknown): string {
  const outer = collecting;
  collecting = null;
  let written = '';
  let texts: string[] | null = null;
  try {
    written = JSON.stringify(value);
  } finally {
    texts = collecting as string[] | null;
    collecting = outer;
  }
  if (texts === null) return written;
  const parts = written.split(MARKER_TEXT);
  if (parts.length !== texts.length + 1) return JSON.stringify(value);
  let joined = parts[0]!;
  for (let index = 0; index < texts.length; index++) joined += texts[index]! + parts[index + 1]!;
  return joined;
}
