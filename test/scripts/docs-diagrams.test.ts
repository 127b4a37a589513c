/**
 * The drawings of the documents' Mermaid diagrams (scripts/docs-diagrams.ts): every ```mermaid block
 * of openapi/descriptions/*.md has its committed SVG (named by the hash of its source, so a changed
 * diagram cannot keep an old drawing), no drawing is left without a block, each is a picture that
 * needs nothing from the network, and the reference's copy of a document shows images instead of
 * the blocks. That the pages show them is checked in Chromium (test/e2e/docs.test.ts).
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DIAGRAMS_DIR, DiagramMissingError, diagramSvg, listDiagrams, replaceDiagrams } from '../../scripts/docs-diagrams.js';

const diagrams = listDiagrams();
const scratch = mkdtempSync(join(tmpdir(), 'paylater-diagrams-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the drawings of the Mermaid diagrams', () => {
  it('the gateway and web descriptions have their transaction flows as Mermaid sequence diagrams', () => {
    expect(diagrams.length).toBeGreaterThanOrEqual(2);
    for (const diagram of diagrams) expect(diagram.source.trim()).toMatch(/^sequenceDiagram\n/);
  });

  it('every diagram has its committed drawing, and every drawing its diagram (npm run docs:diagrams)', () => {
    const files = readdirSync(DIAGRAMS_DIR).filter((name) => name.endsWith('.svg')).sort();
    expect(files).toEqual(diagrams.map((d) => `${d.hash}.svg`).sort());
  });

  it.each(diagrams.map((d) => [d.hash, d] as const))('%s is an SVG that draws every participant and needs no network', (_hash, diagram) => {
    const svg = diagramSvg(diagram.source);
    expect(svg).toMatch(/^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(svg).not.toMatch(/<script|@import|(?:href|src)="https?:/);
    for (const [, , label] of diagram.source.matchAll(/participant (\S+) as (.+)/g)) expect(svg).toContain(`>${label?.trim()}<`);
  });

  it('the reference copy of a document shows an image of the drawing instead of the block', () => {
    const [diagram] = diagrams;
    const document = { info: { description: `## Transaction flow\n\n\`\`\`mermaid\n${diagram?.source}\`\`\`\n\nAfter.` } };
    const copy = replaceDiagrams(document, scratch);
    expect(copy.info.description).toBe(
      `## Transaction flow\n\n[![Transaction flow: sequence diagram](assets/diagrams/${diagram?.hash}.svg)](assets/diagrams/${diagram?.hash}.svg)\n\nAfter.`,
    );
    expect(existsSync(join(scratch, 'diagrams', `${diagram?.hash}.svg`))).toBe(true);
    expect(document.info.description).toContain('```mermaid');
  });

  it('a diagram without a drawing stops the build with the command that draws it', () => {
    const changed = 'sequenceDiagram\n  A->>B: a message no drawing has\n';
    expect(() => replaceDiagrams({ description: `\`\`\`mermaid\n${changed}\`\`\`` }, scratch)).toThrow(DiagramMissingError);
    expect(() => diagramSvg(changed)).toThrow(/has no drawing .*run `npm run docs:diagrams`/);
  });
});

it('the drawings are committed text files', () => {
  for (const diagram of diagrams) expect(readFileSync(join(DIAGRAMS_DIR, `${diagram.hash}.svg`), 'utf8').endsWith('</svg>\n')).toBe(true);
});
