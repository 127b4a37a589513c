/**
 * The dashboard's DOM helpers (see ../dashboard.ts): elements made by hand, every value written as
 * text (never as HTML), and the formats the lists share (virtual time, rupees, status colours).
 */

export type Json = Record<string, any>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string> = {},
  ...children: (Node | string | null | undefined)[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  for (const child of children) if (child !== null && child !== undefined) element.append(child);
  return element;
}

/** Replaces an element's children, leaving out the absent ones. */
export function fill(element: HTMLElement, ...children: (Node | string | null | undefined)[]): void {
  element.replaceChildren(...children.filter((child): child is Node | string => child !== null && child !== undefined));
}

export function byId<T extends HTMLElement>(id: string): T {
  return document.getElementById(id) as T;
}

export function button(text: string, onClick: () => void, attributes: Record<string, string> = {}): HTMLButtonElement {
  const element = h('button', { type: 'button', ...attributes }, text);
  element.addEventListener('click', onClick);
  return element;
}

export function pre(text: string, label: string): HTMLPreElement {
  return h('pre', { tabindex: '0', 'aria-label': label }, text);
}

export function time(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toISOString().replace('T', ' ').replace('Z', '');
}

export function rupees(paise: unknown): string {
  return typeof paise === 'number' ? `₹${(paise / 100).toLocaleString('en-IN', { minimumFractionDigits: 2, maximumFractionDigits: 2 })} (${paise} paise)` : '—';
}

export function statusClass(status: number): string {
  return status >= 500 ? 's5' : status >= 400 ? 's4' : 's2';
}
