/**
 * A reader of Server-Sent Events (the text/event-stream format of the WHATWG HTML standard, section
 * "Server-sent events"), for `paylater listen`. Hand-written on purpose: the format is a few lines of
 * rules (fields, comments, CR/LF/CRLF line ends, a blank line ends an event), the package adds no
 * runtime dependency beyond its argument parser, and Node 20 has no EventSource.
 *
 * Bounded: a line or an event's data longer than `maxBytes` characters is an error (the reader then
 * drops the connection), so a broken server cannot make it buffer without end. Each chunk is scanned
 * once, whatever the size of a line spread over many chunks.
 */

export interface SseEvent {
  /** `message` when the event had no `event:` field. */
  event: string;
  data: string;
  /** The last `id:` field seen, if any. */
  id: string | undefined;
}

class SseFormatError extends Error {
  override name = 'SseFormatError';
}

export class SseParser {
  private buffer = '';
  /** A chunk ended with CR: an LF at the start of the next one belongs to the same line end. */
  private skipLineFeed = false;
  private data: string[] = [];
  private dataLength = 0;
  private event = '';
  private id: string | undefined;

  constructor(private readonly maxBytes = 8 * 1024 * 1024) {}

  /** Feeds decoded text; returns the events it completes. */
  push(chunk: string): SseEvent[] {
    let text = chunk;
    if (this.skipLineFeed) {
      this.skipLineFeed = false;
      if (text.startsWith('\n')) text = text.slice(1);
    }
    // The buffer holds no line end: scanning starts after it.
    let scan = this.buffer.length;
    text = this.buffer + text;
    const events: SseEvent[] = [];
    let start = 0;
    for (; scan < text.length; scan++) {
      const code = text.charCodeAt(scan);
      if (code !== 0x0a && code !== 0x0d) continue;
      this.line(text.slice(start, scan), events);
      if (code === 0x0d) {
        if (scan + 1 === text.length) this.skipLineFeed = true;
        else if (text.charCodeAt(scan + 1) === 0x0a) scan++;
      }
      start = scan + 1;
    }
    this.buffer = text.slice(start);
    if (this.buffer.length > this.maxBytes) throw new SseFormatError(`a line longer than ${this.maxBytes} characters`);
    return events;
  }

  private line(line: string, events: SseEvent[]): void {
    if (line === '') {
      if (this.data.length > 0) events.push({ event: this.event || 'message', data: this.data.join('\n'), id: this.id });
      this.data = [];
      this.dataLength = 0;
      this.event = '';
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.event = value;
        break;
      case 'data':
        this.dataLength += value.length + 1;
        if (this.dataLength > this.maxBytes) throw new SseFormatError(`an event larger than ${this.maxBytes} characters`);
        this.data.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) this.id = value;
        break;
      default:
        // `retry` and unknown fields: nothing to do for this reader.
        break;
    }
  }
}
