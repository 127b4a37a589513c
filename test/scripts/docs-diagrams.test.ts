/**
 * The drawings of the documents' and guides' Mermaid diagrams (scripts/docs-diagrams.ts): every
 * ```mermaid block of openapi/descriptions/*.md and docs/*.md has its committed SVG (named by the hash of its source, so a changed
 * diagram cannot keep an old drawing), no drawing is left without a block, each is a picture that
 * needs nothing from the network, and the reference's copy of a document shows images instead of
 * the blocks. That the pages show them is checked in Chromium (test/e2e/docs.test.ts).
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DIAGRAMS_DIR, DiagramMissingError, diagramSvg, findDiagrams, GUIDES_DIR, listDiagrams, replaceDiagrams } from '../../scripts/docs-diagrams.js';
import { GUIDE_COLUMN_PX } from '../../scripts/docs-site.js';

const diagrams = listDiagrams();
const scratch = mkdtempSync(join(tmpdir(), 'paylater-diagrams-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the drawings of the Mermaid diagrams', () => {
  it('the gateway and web descriptions have their transaction flows as Mermaid sequence diagrams', () => {
    expect(diagrams.length).toBeGreaterThanOrEqual(2);
    // A diagram may start with its own settings (the references' narrow column: a smaller font).
    for (const diagram of diagrams) expect(diagram.source.trim()).toMatch(/^(?:%%\{init: \{[^\n]*\}%%\n)?(?:sequenceDiagram|stateDiagram-v2)\n/);
  });

  it.each(['flows.md', 'states.md'])('docs/%s draws its flows and states as diagrams, not as text art', (name) => {
    const markdown = readFileSync(join(GUIDES_DIR, name), 'utf8');
    expect(findDiagrams(markdown).length).toBeGreaterThanOrEqual(4);
    // Text art: a fenced block drawing arrows or lifelines out of dashes and bars.
    const art = [...markdown.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].map((m) => m[1] ?? '').filter((block) => /-{3,}>|<-{3,}|^\s*\|.*\|\s*$/m.test(block));
    expect(art).toEqual([]);
  });

  it.each(['flows.md', 'states.md'])('docs/%s draws every diagram narrower than the guide column, so none scrolls sideways at its drawn size', (name) => {
    const widths = findDiagrams(readFileSync(join(GUIDES_DIR, name), 'utf8')).map((diagram) => {
      const width = /^<svg [^>]*\bwidth="([\d.]+)"/.exec(diagramSvg(diagram.source))?.[1];
      return { hash: diagram.hash, width: Number(width) };
    });
    for (const { hash, width } of widths) {
      expect(width, hash).toBeGreaterThan(100);
      expect(width, `${hash} is drawn ${width} px wide, wider than the ${GUIDE_COLUMN_PX} px column`).toBeLessThanOrEqual(GUIDE_COLUMN_PX);
    }
  });

  it('a guide\'s state diagram is shown as an image named for what it draws', () => {
    const states = findDiagrams(readFileSync(join(GUIDES_DIR, 'states.md'), 'utf8'));
    const [first] = states;
    const shown = replaceDiagrams(`## Merchant stages\n\n\`\`\`mermaid\n${first?.source}\`\`\``, scratch);
    expect(shown).toBe(`## Merchant stages\n\n[![Merchant stages: state diagram](assets/diagrams/${first?.hash}.svg)](assets/diagrams/${first?.hash}.svg)`);
  });

  it('every diagram has its committed drawing, and every drawing its diagram (npm run docs:diagrams)', () => {
    const files = readdirSync(DIAGRAMS_DIR).filter((name) => name.endsWith('.svg')).sort();
    expect(files).toEqual(diagrams.map((d) => `${d.hash}.svg`).sort());
  });

  it.each(diagrams.map((d) => [d.hash, d] as const))('%s is an SVG that draws every participant and needs no network', (_hash, diagram) => {
    const svg = diagramSvg(diagram.source);
    expect(svg).toMatch(/^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(svg).not.toMatch(/<script|@import|(?:href|src)="https?:/);
    for (const [, , label] of diagram.source.matchAll(/participant (\S+) as (.+)/g)) {
      // A label broken with <br/> is drawn a line at a time.
      for (const line of (label ?? '').split('<br/>')) expect(svg).toContain(`>${line.trim()}<`);
    }
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
