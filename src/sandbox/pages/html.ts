/**
 * Small helpers of the sandbox's HTML pages (the landing page, the web flow's hosted checkout
 * page): escaping, a JSON island for a page script, and the reply with a strict
 * Content-Security-Policy. Pages are self-contained: inline CSS and JS carrying a per-reply nonce,
 * no web fonts, no CDN, nothing from another host except an explicitly allowed logo image.
 */
import { randomBytes } from 'node:crypto';
import type { Reply } from '../router.js';

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** Escapes text for an HTML text node or a quoted attribute value. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"'`]/g, (character) => HTML_ESCAPES[character] ?? character);
}

/**
 * JSON for a `<script type="application/json">` island: `<`, `>`, `&` and the JavaScript line
 * separators are written as `\u` escapes, so no value can close the script element.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A fresh nonce for the inline style and script of one reply. */
export function newNonce(): string {
  return randomBytes(16).toString('base64');
}

/** Code for an inline `<script>`: refuses anything that could end the element early. */
export function inlineScript(code: string): string {
  return code.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
}

/** The start of a page, to its `<body>`: language, viewport, title, no favicon request, its style. */
export function pageHead(title: string, nonce: string, style: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,">
<style nonce="${nonce}">${style}</style>
</head>
<body>`;
}

export interface HtmlReplyOptions {
  status?: number;
  nonce: string;
  /** Extra `img-src` sources (the logo override's origin). */
  imageSources?: readonly string[];
  /** `connect-src 'self'` for a page script that calls the sandbox. */
  connect?: boolean;
}

/** An HTML reply with a Content-Security-Policy that allows only this reply's inline style and script. */
export function htmlReply(html: string, options: HtmlReplyOptions): Reply {
  const policy = [
    "default-src 'none'",
    `script-src 'nonce-${options.nonce}'`,
    `style-src 'nonce-${options.nonce}'`,
    ['img-src', "'self'", 'data:', ...(options.imageSources ?? [])].join(' '),
    `connect-src ${options.connect === true ? "'self'" : "'none'"}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return {
    status: options.status ?? 200,
    body: html,
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': policy,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'X-Frame-Options': 'DENY',
    },
  };
}

/** The origin of an absolute http(s) URL, for a CSP source list; undefined for anything else. */
export function httpOrigin(value: string): string | undefined {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}
