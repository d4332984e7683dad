/**
 * A/B bench: the converge bench of another commit and of the working tree, run alternately on this
 * machine, so a change to the reconcile path is judged against its base in the same hour rather
 * than against a figure from another day's machine.
 *
 *   npm run bench:compare -- e7a28b9              # 2 rounds each, N = 1000, created 2 at a time
 *   npm run bench:compare -- e7a28b9 --pace=burst # all N created at once
 *   ROUNDS=3 N=500 npm run bench:compare -- main
 *   npm run bench:compare -- e7a28b9 --record     # and a line in bench/RESULTS.md
 *
 * Both sides are measured by this tree's `bench/converge.ts` (BENCH_SKIP_REFERENCE=1), so they are
 * created at the same pace and timed the same way; what differs is the reconciler
 * (BENCH_RECONCILER_TREE): each side's own bundle, built from its code, on the image's Node with
 * the image's node flags (this tree's), and its own `dist/` — its CRDs, and its operator
 * Deployment's NODE_OPTIONS. A fresh control plane each run. (Each side running its own converge
 * bench measured its own harness too: e7a28b9's peak read 101 MiB there, 92 MiB when created two
 * at a time as the image runs it.) The order alternates (ref, work, work, ref, …) so a drift of the machine falls on both.
 * The other commit is checked out in a git worktree beside the system's temporary files, sharing
 * node_modules when its lock file is the same (else `npm ci` there), and removed at the end.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..');
const N = Number(process.env.N ?? 1000);
const ROUNDS = Number(process.env.ROUNDS ?? 2);

/** What one converge run of a side reports of its reconciler. */
interface Run {
  readonly deploymentsSeconds: number;
  readonly cpuSeconds: number;
  readonly peakRssMiB: number;
  readonly writesPerResource: number;
}

const METRICS: readonly (keyof Run)[] = ['deploymentsSeconds', 'cpuSeconds', 'peakRssMiB', 'writesPerResource'];

function git(args: string[], cwd = ROOT): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
}

/** A worktree of `commit`, ready to bench: its node_modules the working tree's when the locks agree. */
function checkout(commit: string): string {
  const dir = path.join(os.tmpdir(), `opkit-bench-${commit.slice(0, 12)}`);
  if (!fs.existsSync(dir)) git(['worktree', 'add', '--detach', dir, commit]);
  const sameLock = spawnSync('git', ['diff', '--quiet', commit, '--', 'package-lock.json'], { cwd: ROOT }).status === 0;
  if (!fs.existsSync(path.join(dir, 'node_modules'))) {
    if (sameLock) fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
    else execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'inherit' });
  }
  return dir;
}

/** One converge run, by this tree's harness, of the reconciler of the tree at `dir`: its figures. */
function converge(dir: string, label: string, pace: string): Run {
  process.stderr.write(`[compare] ${label}: converging ${String(N)} Memcacheds, pace ${pace}…\n`);
  const out = execFileSync(process.execPath, ['--import', 'tsx', path.join('bench', 'converge.ts')], {
    cwd: ROOT,
    encoding: 'utf8',
    env: {
      ...process.env,
      N: String(N),
      BENCH_SKIP_REFERENCE: '1',
      IDLE_S: '0',
      BENCH_RECONCILER_TREE: dir,
      BENCH_PACE: pace,
    },
    stdio: ['ignore', 'pipe', 'ignore'],
    maxBuffer: 64 * 1024 * 1024,
  });
  const ours = (JSON.parse(out.slice(out.indexOf('{'))) as { ours: Record<string, number> }).ours;
  const run: Run = {
    deploymentsSeconds: ours.deploymentsSeconds!,
    cpuSeconds: ours.cpuSeconds!,
    peakRssMiB: ours.peakRssMiB!,
    writesPerResource: ours.writes! / N,
  };
  process.stderr.write(`[compare] ${label}: ${JSON.stringify(run)}\n`);
  return run;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function main(): void {
  const ref = process.argv.slice(2).find((a) => !a.startsWith('--'));
  if (!ref) throw new Error('usage: npm run bench:compare -- <ref> [--pace=2|burst] [--record]');
  const pace = process.argv.find((a) => a.startsWith('--pace='))?.slice('--pace='.length) ?? '2';
  const commit = git(['rev-parse', '--verify', `${ref}^{commit}`]);
  const head = git(['rev-parse', '--short', 'HEAD']);
  const dirty = git(['status', '--porcelain']) !== '';
  const work = `${head}${dirty ? '+changes' : ''}`;
  const other = checkout(commit);
  const runs: Record<'ref' | 'work', Run[]> = { ref: [], work: [] };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? (['ref', 'work'] as const) : (['work', 'ref'] as const);
      for (const side of order)
        runs[side].push(
          converge(
            side === 'ref' ? other : ROOT,
            `${side} ${side === 'ref' ? ref : work}, round ${String(round + 1)}`,
            pace,
          ),
        );
    }
  } finally {
    git(['worktree', 'remove', '--force', other]);
  }
  const line = METRICS.map((m) => {
    const [a, b] = [median(runs.ref.map((r) => r[m])), median(runs.work.map((r) => r[m]))];
    return { metric: m, [ref]: +a.toFixed(2), [work]: +b.toFixed(2), ratio: +(b / a).toFixed(2) };
  });
  console.table(line);
  if (process.argv.includes('--record')) {
    const ratios = line
      .map((l) => `${l.metric} ${String(l[ref])} → ${String(l[work])} (${String(l.ratio)}×)`)
      .join(', ');
    const entry = `- ${new Date().toISOString().slice(0, 10)} bench:compare ${ref} → ${work}, N = ${String(N)}, pace ${pace}, ${String(ROUNDS)} rounds each (this harness, each side's reconciler), medians: ${ratios}\n`;
    fs.appendFileSync(path.join(ROOT, 'bench', 'RESULTS.md'), entry);
  }
}

if (require.main === module) main();
