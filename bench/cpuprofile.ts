/**
 * A V8 CPU profile (`node --cpu-prof`, a `.cpuprofile` file) summarised as Markdown tables: the
 * busy time by place (a module of the project, a dependency, a part of Node, V8's own work such
 * as the garbage collector), the top functions by self time, and the call tree pruned to the
 * frames that hold a share of the busy time. Used by bench/profile.ts; by hand:
 * `npx tsx bench/cpuprofile.ts FILE.cpuprofile [--top N] [--min-percent P]`.
 *
 * Hand-written: the format is a list of nodes and samples, and the tools that read it (Chrome's
 * DevTools, speedscope, 0x) are viewers for a person, not a table a results file can hold.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface SummaryOptions {
  /** Rows of the function table. */
  top?: number;
  /** The call tree shows frames holding at least this share of the busy time (percent). */
  minPercent?: number;
  /** The folder of the project, left out of file names. */
  root?: string;
}

const IDLE = new Set(['(idle)']);

/** Where a frame's code lives, for the table by place. */
function placeOf(frame: CallFrame, root: string): string {
  const { url, functionName } = frame;
  if (url === '') return functionName.startsWith('(') ? functionName : '(native or V8 built-ins)';
  if (url.startsWith('node:')) return `node: ${url.slice('node:'.length).replace(/^internal\//, 'internal/')}`;
  const path = shortPath(url, root);
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (dependency !== null) return `dependency: ${dependency[1]}`;
  return path;
}

function shortPath(url: string, root: string): string {
  let path = url.startsWith('file://') ? decodeURIComponent(url.slice('file://'.length)) : url;
  if (root !== '' && path.startsWith(`${root}/`)) path = path.slice(root.length + 1);
  return path.replace(/^.*\/node_modules\//, 'node_modules/');
}

function frameName(frame: CallFrame, root: string): string {
  const name = frame.functionName === '' ? '(anonymous)' : frame.functionName;
  if (frame.url === '') return name;
  return `${name} ${shortPath(frame.url, root)}:${frame.lineNumber + 1}`;
}

const percent = (part: number, whole: number) => (whole === 0 ? '0.0' : ((100 * part) / whole).toFixed(1));
const ms = (microseconds: number) => (microseconds / 1000).toFixed(0);

/** The profile as Markdown: busy time by place, top functions by self time, the call tree. */
export function summariseProfile(profile: CpuProfile, options: SummaryOptions = {}): string {
  const top = options.top ?? 25;
  const minPercent = options.minPercent ?? 1.5;
  const root = options.root ?? '';
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

  // Self time per node: each sample lasts until the next one (V8's timeDeltas are the gaps before each).
  const self = new Map<number, number>();
  for (let index = 0; index < profile.samples.length; index++) {
    const duration = profile.timeDeltas[index + 1] ?? 0;
    const id = profile.samples[index]!;
    self.set(id, (self.get(id) ?? 0) + Math.max(0, duration));
  }
  let total = 0;
  let idle = 0;
  for (const [id, time] of self) {
    total += time;
    if (IDLE.has(byId.get(id)!.callFrame.functionName)) idle += time;
  }
  const busy = total - idle;

  // Inclusive time per node: its self time and its descendants'.
  const inclusive = new Map<number, number>();
  for (const [id, time] of self) {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) inclusive.set(at, (inclusive.get(at) ?? 0) + time);
  }

  const lines: string[] = [];
  lines.push(`Sampled ${ms(total)} ms, of which ${ms(busy)} ms busy (${percent(busy, total)} %); shares below are of the busy time.`, '');

  const places = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, time] of self) {
    const frame = byId.get(id)!.callFrame;
    if (IDLE.has(frame.functionName)) continue;
    const place = placeOf(frame, root);
    places.set(place, (places.get(place) ?? 0) + time);
    const name = frameName(frame, root);
    functions.set(name, (functions.get(name) ?? 0) + time);
  }
  lines.push('| place | self ms | share |', '|---|---|---|');
  for (const [place, time] of [...places].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    lines.push(`| ${place} | ${ms(time)} | ${percent(time, busy)} % |`);
  }
  lines.push('', '| function | self ms | share |', '|---|---|---|');
  for (const [name, time] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    lines.push(`| \`${name}\` | ${ms(time)} | ${percent(time, busy)} % |`);
  }

  // The call tree: frames with at least minPercent of the busy time, total (self) per line.
  lines.push('', `Call tree (frames with at least ${minPercent} % of the busy time; total, then self):`, '', '```');
  const threshold = (busy * minPercent) / 100;
  const rootNode = profile.nodes.find((node) => !parent.has(node.id));
  const walk = (id: number, depth: number): void => {
    const node = byId.get(id)!;
    const time = inclusive.get(id) ?? 0;
    if (time < threshold || IDLE.has(node.callFrame.functionName)) return;
    const own = self.get(id) ?? 0;
    lines.push(`${'  '.repeat(depth)}${percent(time, busy).padStart(5)} % (${percent(own, busy)} %) ${frameName(node.callFrame, root)}`);
    const children = [...(node.children ?? [])].sort((a, b) => (inclusive.get(b) ?? 0) - (inclusive.get(a) ?? 0));
    for (const child of children) walk(child, depth + 1);
  };
  if (rootNode !== undefined) for (const child of rootNode.children ?? []) walk(child, 0);
  lines.push('```');
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string' }, 'min-percent': { type: 'string' } },
  });
  if (positionals.length !== 1) {
    process.stderr.write('Usage: npx tsx bench/cpuprofile.ts FILE.cpuprofile [--top N] [--min-percent P]\n');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(positionals[0]!, 'utf8')) as CpuProfile;
  process.stdout.write(
    `${summariseProfile(profile, {
      top: values.top === undefined ? undefined : Number(values.top),
      minPercent: values['min-percent'] === undefined ? undefined : Number(values['min-percent']),
      root: process.cwd(),
    })}\n`,
  );
}
