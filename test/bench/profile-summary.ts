import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Reads the V8 CPU profiles the services wrote (`CPU_PROFILE_DIR`, one `<service>.cpuprofile` each) and
 * prints where each spent its time: the heaviest functions by self time, and the same time grouped by
 * package (a dependency under node_modules, the project's own code, Node's internals, the garbage collector).
 * `node dist/test/bench/profile-summary.js <dir> [top]` runs it alone.
 */

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

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  process: string;
  busyMs: number;
  /** Time spent loading modules at start, left out of the rankings: it says nothing about the hot path. */
  startupMs: number;
  frames: Array<{ frame: string; ms: number; share: number }>;
  packages: Array<{ name: string; ms: number; share: number }>;
  /** Self time in the tracing code (the project's and OpenTelemetry's): what tracing costs when it is off. */
  tracingMs: number;
}

function isTracing(frame: CallFrame): boolean {
  return frame.url.includes('node_modules/@opentelemetry/') || /\/platform\/src\/(jetstream-)?tracing\.js$/.test(frame.url);
}

const IDLE = new Set(['(idle)', '(program)']);

function isModuleLoading(frame: CallFrame): boolean {
  return frame.url === 'node:internal/modules/cjs/loader' && (frame.functionName === 'Module._load' || frame.functionName === 'Module.require');
}

/** Node ids whose stack passes through module loading. */
function startupNodes(nodes: ProfileNode[]): Set<number> {
  const parent = new Map<number, number>();
  for (const node of nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const verdict = new Map<number, boolean>();
  const loading = (id: number): boolean => {
    const path: number[] = [];
    let current: number | undefined = id;
    let result = false;
    while (current !== undefined) {
      const known = verdict.get(current);
      if (known !== undefined) {
        result = known;
        break;
      }
      path.push(current);
      if (isModuleLoading(byId.get(current)!.callFrame)) {
        result = true;
        break;
      }
      current = parent.get(current);
    }
    for (const visited of path) verdict.set(visited, result);
    return result;
  };
  return new Set(nodes.filter((node) => loading(node.id)).map((node) => node.id));
}

function packageOf(frame: CallFrame): string {
  if (frame.functionName === '(garbage collector)') return '(garbage collector)';
  if (!frame.url) return frame.functionName || '(native)';
  const modules = frame.url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const [head = '', next = ''] = frame.url.slice(modules + 'node_modules/'.length).split('/');
    return head.startsWith('@') ? `${head}/${next}` : head;
  }
  if (frame.url.startsWith('node:')) return 'node';
  const dist = frame.url.indexOf('/dist/');
  return dist >= 0
    ? `project ${frame.url
        .slice(dist + '/dist/'.length)
        .split('/')
        .slice(0, 2)
        .join('/')}`
    : frame.url;
}

function frameName(frame: CallFrame): string {
  const file = frame.url.includes('node_modules/') ? frame.url.slice(frame.url.lastIndexOf('node_modules/') + 13) : frame.url.replace(/^.*\/dist\//, '');
  return `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`;
}

export function summarizeProfile(process: string, profile: CpuProfile, top = 12): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const frames = new Map<string, number>();
  const packages = new Map<string, number>();
  const startup = startupNodes(profile.nodes);
  let busyUs = 0;
  let startupUs = 0;
  let tracingUs = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!;
    if (IDLE.has(frame.functionName)) continue;
    if (startup.has(id)) {
      startupUs += us;
      continue;
    }
    busyUs += us;
    if (isTracing(frame)) tracingUs += us;
    const name = frameName(frame);
    frames.set(name, (frames.get(name) ?? 0) + us);
    const pkg = packageOf(frame);
    packages.set(pkg, (packages.get(pkg) ?? 0) + us);
  }
  const ranked = (entries: Map<string, number>) =>
    [...entries]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, ms: us / 1000, share: busyUs === 0 ? 0 : us / busyUs }));
  return {
    process,
    busyMs: busyUs / 1000,
    startupMs: startupUs / 1000,
    frames: ranked(frames).map(({ name, ms, share }) => ({ frame: name, ms, share })),
    packages: ranked(packages),
    tracingMs: tracingUs / 1000,
  };
}

export function summarizeProfiles(dir: string, top = 12): ProfileSummary[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.cpuprofile'))
    .sort()
    .map((file) => summarizeProfile(file.replace(/\.cpuprofile$/, ''), JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile, top));
}

export function formatSummaries(summaries: ProfileSummary[]): string {
  const percent = (share: number) => `${(share * 100).toFixed(1).padStart(5)} %`;
  return summaries
    .map((summary) =>
      [
        `${summary.process}: ${summary.busyMs.toFixed(0)} ms of CPU sampled after module loading (${summary.startupMs.toFixed(0)} ms loading modules)`,
        '  by package:',
        ...summary.packages.map((entry) => `    ${percent(entry.share)}  ${entry.name}`),
        '  heaviest functions (self time):',
        ...summary.frames.map((entry) => `    ${percent(entry.share)}  ${entry.frame}`),
        `  tracing code: ${summary.tracingMs.toFixed(0)} ms (${percent(summary.busyMs === 0 ? 0 : summary.tracingMs / summary.busyMs).trim()})`,
      ].join('\n'),
    )
    .join('\n\n');
}

if (require.main === module) {
  const [dir, top] = process.argv.slice(2);
  if (!dir) {
    process.stderr.write('usage: profile-summary <dir with .cpuprofile files> [top]\n');
    process.exit(2);
  }
  process.stdout.write(`${formatSummaries(summarizeProfiles(dir, Number(top ?? 12)))}\n`);
}
