/**
 * The shared HTTP rules: which Content-Type is JSON (D60), JSON parsing with the depth limit, and
 * the body read with its limit.
 */
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { readBody, type BodyRead } from '../../src/http/body.js';
import { jsonContentTypeProblem, MAX_JSON_DEPTH, parseJsonBody } from '../../src/http/json.js';

describe('the JSON Content-Type rule', () => {
  it('accepts application/json with no charset or UTF-8 written either way', () => {
    for (const value of [
      'application/json',
      'Application/JSON',
      'application/json; charset=utf-8',
      'application/json;charset="UTF-8"',
      'application/json; charset=utf8',
      'application/json; charset=UTF8; foo=bar',
    ]) {
      expect(jsonContentTypeProblem(value), value).toBeUndefined();
    }
  });

  it('refuses other media types and other charsets, saying which', () => {
    expect(jsonContentTypeProblem(undefined)).toEqual({ kind: 'missing' });
    expect(jsonContentTypeProblem('text/plain')).toEqual({ kind: 'media-type', mediaType: 'text/plain' });
    expect(jsonContentTypeProblem('application/jsonx')).toEqual({ kind: 'media-type', mediaType: 'application/jsonx' });
    expect(jsonContentTypeProblem('application/problem+json')?.kind).toBe('media-type');
    expect(jsonContentTypeProblem('application/json, text/plain')?.kind).toBe('media-type');
    expect(jsonContentTypeProblem('application/json; charset=latin1')).toEqual({ kind: 'charset', charset: 'latin1' });
    expect(jsonContentTypeProblem('application/json; charset=utf-16')).toEqual({ kind: 'charset', charset: 'utf-16' });
  });
});

describe('parseJsonBody', () => {
  const bytes = (text: string) => Buffer.from(text, 'utf8');

  it('parses UTF-8 JSON', () => {
    expect(parseJsonBody(bytes('{"name":"नमस्ते","n":[1,2]}'))).toEqual({ ok: true, value: { name: 'नमस्ते', n: [1, 2] } });
  });

  it('refuses bad UTF-8, a byte order mark and bad syntax without quoting the body in the message', () => {
    expect(parseJsonBody(Buffer.from([0x7b, 0xff, 0x7d]))).toMatchObject({ ok: false, problem: 'utf-8' });
    expect(parseJsonBody(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes('{}')]))).toMatchObject({ ok: false, problem: 'syntax' });
    const syntax = parseJsonBody(bytes('{"secret":'));
    expect(syntax).toMatchObject({ ok: false, problem: 'syntax' });
    expect(syntax.ok ? '' : syntax.message).not.toContain('secret');
  });

  it('allows MAX_JSON_DEPTH levels and refuses one more', () => {
    const nested = (depth: number) => bytes(`${'['.repeat(depth)}1${']'.repeat(depth)}`);
    expect(parseJsonBody(nested(MAX_JSON_DEPTH)).ok).toBe(true);
    expect(parseJsonBody(nested(MAX_JSON_DEPTH + 1))).toMatchObject({ ok: false, problem: 'depth' });
    expect(parseJsonBody(nested(100_000))).toMatchObject({ ok: false });
  });

  it('counts the levels of the value, not the brackets of the text: a shallow body with many in its strings is parsed', () => {
    const value = { note: '{['.repeat(500), list: [{ a: '[' }, { b: '{' }] };
    expect(parseJsonBody(bytes(JSON.stringify(value)))).toEqual({ ok: true, value });
    // Deep objects, with spaces between the levels, past the limit by one.
    const deep = `${'{"a": '.repeat(MAX_JSON_DEPTH + 1)}1${'}'.repeat(MAX_JSON_DEPTH + 1)}`;
    expect(parseJsonBody(bytes(deep))).toMatchObject({ ok: false, problem: 'depth' });
  });
});

describe('readBody', () => {
  /** Sends `body` (declaring its length or not) to a server that reads it with `limit`. */
  async function read(body: Buffer, limit: number, declareLength: boolean): Promise<BodyRead> {
    let result: Promise<BodyRead> | undefined;
    const server = createServer((req: IncomingMessage, res) => {
      result = readBody(req, limit);
      void result.then(() => res.end());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => {
      const req = httpRequest({ port, host: '127.0.0.1', method: 'POST', headers: declareLength ? { 'Content-Length': body.length } : {} });
      req.on('response', (res) => res.resume().on('end', resolve));
      req.on('error', () => resolve());
      req.end(body);
    });
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    return result!;
  }

  it('reads a body at the limit, and refuses one over it whether its length is declared or not', async () => {
    expect(await read(Buffer.alloc(10, 0x61), 10, true)).toEqual({ ok: true, body: Buffer.alloc(10, 0x61) });
    expect(await read(Buffer.alloc(11, 0x61), 10, true)).toEqual({ ok: false, reason: 'too-large' });
    expect(await read(Buffer.alloc(11, 0x61), 10, false)).toEqual({ ok: false, reason: 'too-large' });
  });
});
