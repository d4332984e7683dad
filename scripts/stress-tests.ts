// Runs the test suite again and again with every core kept busy beside it, and lists each failure
// with its test and run: a test that fails one run in five on a loaded machine (CI's) is a defect,
// and this is how to find it before CI does. Use it before any change to tests, timing or ports.
//
//   npm run test:stress                      # 5 runs of `npm test`'s jest, a CPU hog on every core
//   npm run test:stress -- --runs 3 --hog 0  # 3 runs, no hog
//   npm run test:stress -- --runs 10 -- test/integration/memcached-reconciler.test.ts
//
// Exit 0 when every run passed; 1 otherwise. A summary is written to build/stress/summary.md.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';

interface JestAssertion {
  readonly fullName: string;
  readonly status: string;
  readonly failureMessages: readonly string[];
}
interface JestSuite {
  readonly name: string;
  readonly status: string;
  readonly message: string;
  readonly assertionResults: readonly JestAssertion[];
}
interface JestReport {
  readonly numPassedTests: number;
  readonly numFailedTests: number;
  readonly numTotalTests: number;
  readonly testResults: readonly JestSuite[];
}

interface Failure {
  readonly run: number;
  readonly file: string;
  readonly test: string;
  readonly message: string;
}

const ROOT = path.resolve(__dirname, '..');

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    runs: { type: 'string', default: '5' },
    // Busy processes beside the suite: one per core by default.
    hog: { type: 'string', default: String(os.availableParallelism()) },
  },
});
const runs = Number(values.runs);
const hogs = Number(values.hog);
if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs takes a whole number ≥ 1');
if (!Number.isInteger(hogs) || hogs < 0) throw new Error('--hog takes a whole number ≥ 0');

/** A process that keeps one core busy until killed. */
function cpuHog(): ChildProcess {
  return spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
}

/** The first lines of a failure message: enough to tell one cause from another. */
function firstLines(message: string, count = 6): string {
  return message
    .split('\n')
    .filter((l) => l.trim() !== '')
    .slice(0, count)
    .join('\n');
}

function failuresOf(report: JestReport, run: number): Failure[] {
  return report.testResults.flatMap((suite) => {
    const file = path.relative(ROOT, suite.name);
    const failed = suite.assertionResults.filter((a) => a.status === 'failed');
    if (failed.length === 0 && suite.status === 'failed')
      return [{ run, file, test: '(the file itself)', message: firstLines(suite.message) }];
    return failed.map((a) => ({ run, file, test: a.fullName, message: firstLines(a.failureMessages.join('\n')) }));
  });
}

function main(): number {
  const out = path.join(ROOT, 'build', 'stress');
  fs.mkdirSync(out, { recursive: true });
  const hogProcesses = Array.from({ length: hogs }, cpuHog);
  const stopHogs = () => {
    for (const h of hogProcesses) h.kill('SIGKILL');
  };
  process.once('exit', stopHogs);
  // Ctrl-C or a kill stops the hogs too (the jest run, in this process group, gets the signal itself).
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      stopHogs();
      process.exit(130);
    });
  const failures: Failure[] = [];
  const lines: string[] = [];
  try {
    for (let run = 1; run <= runs; run++) {
      const report = path.join(out, `run-${run}.json`);
      fs.rmSync(report, { force: true });
      const started = Date.now();
      process.stderr.write(`[stress] run ${run}/${runs} with ${hogs} busy core(s) beside it\n`);
      const jest = spawnSync(
        process.execPath,
        [require.resolve('jest/bin/jest'), '--json', `--outputFile=${report}`, ...positionals],
        { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] },
      );
      const seconds = (Date.now() - started) / 1000;
      if (!fs.existsSync(report)) {
        failures.push({ run, file: '(jest)', test: '(no report)', message: `jest exited ${String(jest.status)}` });
        lines.push(`run ${run}: no report (jest exited ${String(jest.status)}) after ${seconds.toFixed(0)} s`);
        continue;
      }
      const result = JSON.parse(fs.readFileSync(report, 'utf8')) as JestReport;
      const found = failuresOf(result, run);
      failures.push(...found);
      lines.push(
        `run ${run}: ${result.numPassedTests} passed, ${result.numFailedTests} failed of ${result.numTotalTests}` +
          ` in ${seconds.toFixed(0)} s${found.length ? '' : ' — all passed'}`,
      );
      process.stderr.write(`[stress] ${lines[lines.length - 1] ?? ''}\n`);
    }
  } finally {
    stopHogs();
  }
  const summary = [
    `# ${runs} run(s) of the suite with ${hogs} CPU hog(s), ${new Date().toISOString()}`,
    '',
    ...lines.map((l) => `- ${l}`),
    '',
    failures.length ? '## Failures' : 'No failures.',
    ...failures.flatMap((f) => ['', `### run ${f.run}: ${f.file} — ${f.test}`, '```', f.message, '```']),
    '',
  ].join('\n');
  fs.writeFileSync(path.join(out, 'summary.md'), summary);
  process.stdout.write(summary);
  return failures.length ? 1 : 0;
}

process.exitCode = main();
