/**
 * One Go recipe (testing/go-build.sh) for every program the tests run, and all of them built before
 * any test: a cold machine once spent minutes compiling the bench's peers inside a timed test, and
 * builds with their own flags shared nothing of Go's build cache.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

/** The scripts that build a Go program the tests run (the Debian fallback builds with make, not Go modules). */
const GO_BUILD_SCRIPTS = [
  ...fs.readdirSync(path.join(ROOT, 'testing')).map((f) => `testing/${f}`),
  ...fs.readdirSync(path.join(ROOT, 'bench')).map((f) => `bench/${f}`),
].filter((f) => /\/build-.*\.sh$/.test(f) && !f.endsWith('-debian.sh'));

test('every Go build script uses the shared recipe and none runs go build or go install its own way', () => {
  expect(GO_BUILD_SCRIPTS.length).toBeGreaterThanOrEqual(7);
  for (const script of GO_BUILD_SCRIPTS) {
    const text = read(script);
    expect({ script, sources: /^\s*source .*\/go-build\.sh"$/m.test(text) }).toEqual({ script, sources: true });
    expect({ script, ownBuild: /\bgo (build|install)\b/.test(text.replace(/^\s*#.*$/gm, '')) }).toEqual({
      script,
      ownBuild: false,
    });
  }
});

test('.ci/run builds every one of them before the tests, through one script that prints each time and the total', () => {
  const all = read('scripts/build-test-programs.sh');
  for (const script of GO_BUILD_SCRIPTS) expect(all).toContain(`  ${script}\n`);
  expect(all).toContain('in all');
  const ci = read('.ci/run');
  const builds = ci.indexOf('bash scripts/build-test-programs.sh');
  expect(builds).toBeGreaterThan(0);
  expect(builds).toBeLessThan(ci.indexOf('npm test'));
  expect(ci).not.toMatch(/^[^#\n]*testing\/build-[a-z-]+\.sh/m);
});

describe('go_build', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'go-recipe-'));
    // A `go` that records how it was called and writes the binaries `-o` asks for.
    fs.mkdirSync(path.join(dir, 'bin'));
    fs.writeFileSync(
      path.join(dir, 'bin', 'go'),
      `#!/usr/bin/env bash
echo "CGO_ENABLED=$CGO_ENABLED GOFLAGS=$GOFLAGS $*" >> "${dir}/calls"
while [[ $# -gt 0 ]]; do
  if [[ "$1" == -o ]]; then out="$2"; shift; fi
  shift
  [[ "\${1:-}" == */* || "\${1:-}" == . ]] && pkgs+=("$1")
done
if [[ "$out" == */ ]]; then for p in "\${pkgs[@]}"; do echo built > "$out\${p##*/}"; done; else echo built > "$out"; fi
`,
      { mode: 0o755 },
    );
    fs.mkdirSync(path.join(dir, 'work'));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const goBuild = (args: string) =>
    spawnSync(
      'bash',
      [
        '-c',
        `set -euo pipefail; source testing/go-build.sh; log() { echo "$*" >&2; }; work="${dir}/work"; go_build ${args}`,
      ],
      { cwd: ROOT, encoding: 'utf8', env: { ...process.env, PATH: `${dir}/bin:${process.env.PATH}` } },
    );

  test('several packages in one lean build, each binary moved into the target directory, its time printed', () => {
    const r = goBuild(
      `"${dir}" "${dir}/out/" "no_btrfs no_zfs" "-X v.Version=1" example.com/m/cmd/a example.com/m/cmd/b`,
    );
    // With its output: a run under load once failed here with nothing else to go on.
    expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toMatchObject({ status: 0 });
    const calls = fs.readFileSync(path.join(dir, 'calls'), 'utf8').trim().split('\n');
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatch(
      /^CGO_ENABLED=0 GOFLAGS=-mod=mod -buildvcs=false build -trimpath -tags no_btrfs no_zfs -ldflags -s -w -X v.Version=1 -o \S+\/ example.com\/m\/cmd\/a example.com\/m\/cmd\/b$/,
    );
    expect(fs.readdirSync(path.join(dir, 'out')).sort()).toEqual(['a', 'b']);
    expect(r.stderr).toMatch(/built a, b in \d+ s/);
  });

  test('one package to a file, under a temporary name until it is whole; GO_BUILD_MOD=readonly for a checked-in go.sum', () => {
    const r = spawnSync(
      'bash',
      [
        '-c',
        `source testing/go-build.sh; log() { :; }; work="${dir}/work"; GO_BUILD_MOD=readonly go_build "${dir}" "${dir}/tool" "" "" .`,
      ],
      { cwd: ROOT, encoding: 'utf8', env: { ...process.env, PATH: `${dir}/bin:${process.env.PATH}` } },
    );
    // With its output: a run under load once failed here with nothing else to go on.
    expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toMatchObject({ status: 0 });
    expect(fs.readFileSync(path.join(dir, 'calls'), 'utf8')).toMatch(
      /GOFLAGS=-mod=readonly -buildvcs=false build .* -o \S+\/tool\.tmp \.$/m,
    );
    expect(fs.readFileSync(path.join(dir, 'tool'), 'utf8')).toBe('built\n');
    expect(fs.existsSync(path.join(dir, 'tool.tmp'))).toBe(false);
  });

  /** A tool script's start and end, as helm's, kstatus's, Prometheus's and Traefik's scripts use them. */
  const toolScript = (out: string) =>
    spawnSync(
      'bash',
      [
        '-c',
        `set -euo pipefail; source testing/go-build.sh; log() { echo "$*" >&2; }
         go_tool_begin "${out}" "${out}/tool" tool
         [[ -d "$work" ]] && echo built > "${out}/tool"
         go_tool_end "${out}/tool"
         echo "after the end" >&2`,
      ],
      { cwd: ROOT, encoding: 'utf8', env: { ...process.env, PATH: `${dir}/bin:${process.env.PATH}` } },
    );

  test('a tool script builds into its cache directory with a scratch directory, and prints the binary last', () => {
    const r = toolScript(`${dir}/cache`);
    // With its output: a run under load once failed here with nothing else to go on.
    expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toMatchObject({ status: 0 });
    expect(r.stdout.trim().split('\n').pop()).toBe(`${dir}/cache/tool`);
    expect(r.stderr).toMatch(/built in \d+ s: \S+\/cache\/tool/);
    expect(fs.readFileSync(path.join(dir, 'cache', 'tool'), 'utf8')).toBe('built\n');
  });

  test('a tool already in the cache is printed and the script ends there, building nothing', () => {
    fs.mkdirSync(path.join(dir, 'cache'));
    fs.writeFileSync(path.join(dir, 'cache', 'tool'), 'cached\n', { mode: 0o755 });
    const r = toolScript(`${dir}/cache`);
    // With its output: a run under load once failed here with nothing else to go on.
    expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toMatchObject({ status: 0 });
    expect(r.stdout).toBe(`${dir}/cache/tool\n`);
    expect(r.stderr).not.toContain('after the end');
    expect(fs.readFileSync(path.join(dir, 'cache', 'tool'), 'utf8')).toBe('cached\n');
  });
});
