/**
 * From nothing to a reconciled resource of one's own kind, as a new user takes it, with the
 * packed kit and no file edited by hand: `init` in an empty directory, `npm install`, the
 * generated tests (unit, and integration against the suite's API server), `create kind`, the
 * tests again, `npm run synth`. (The generated integration tests run the reconciler as
 * `npm run operator` does and reconcile a resource of the kind on the suite's API server.)
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { testKubeconfig } from '../support/kube';
import { packKit } from '../support/package';

jest.setTimeout(900_000);

let work: string;
let tarball: string;
let project: string;

const quiet = { npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };

function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}): string {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    timeout: 600_000,
    env: { ...process.env, ...quiet, ...env },
  });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}) in ${cwd}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout + r.stderr;
}

beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-scaffold-'));
  tarball = packKit(work);
  project = path.join(work, 'website-operator');
  fs.mkdirSync(project);
});

afterAll(() => {
  fs.rmSync(work, { recursive: true, force: true });
});

test('init makes a project offline whose tests pass, against a real API server, without an edit', () => {
  const said = run(
    'npm',
    [
      'exec',
      '--yes',
      '--prefer-offline',
      `--package=${tarball}`,
      '--',
      'cdk8s-operator-kit',
      'init',
      '--kit',
      `file:${tarball}`,
    ],
    project,
  );
  expect(said).toContain('wrote kinds/website.ts');
  expect(fs.readdirSync(project).sort()).toEqual(
    expect.arrayContaining([
      'README.md',
      'app.ts',
      'controllers.ts',
      'kinds',
      'main.ts',
      'package.json',
      'reconciler.ts',
      'test',
    ]),
  );
  run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], project);
  run('npx', ['tsc', '-p', '.'], project);
  const tested = run('npm', ['test'], project, { OPKIT_KUBECONFIG: testKubeconfig() });
  expect(tested).toMatch(/Tests:\s+4 passed, 4 total/);
});

test('create kind adds a second kind, wired into the operator, with tests that pass', () => {
  const bin = path.join(project, 'node_modules', '.bin', 'cdk8s-operator-kit');
  run(bin, ['create', 'kind', 'Cache', '--group', 'cache.scaffold.example.com', '--version', 'v1beta1'], project);
  expect(fs.readFileSync(path.join(project, 'controllers.ts'), 'utf8')).toContain('cacheController,');
  // A kind that is there already, or a bad name, is refused in one line, and nothing is written.
  const again = spawnSync(bin, ['create', 'kind', 'Cache', '--group', 'cache.scaffold.example.com'], {
    cwd: project,
    encoding: 'utf8',
  });
  expect({ code: again.status, stderr: again.stderr.trim() }).toEqual({
    code: 1,
    stderr: 'cdk8s-operator-kit: controllers.ts already has the kind Cache',
  });
  const bad = spawnSync(bin, ['create', 'kind', 'lower', '--group', 'x.example.com'], {
    cwd: project,
    encoding: 'utf8',
  });
  expect(bad.stderr).toContain('UpperCamelCase');
  run('npx', ['tsc', '-p', '.'], project);
  expect(run('npm', ['test'], project, { OPKIT_KUBECONFIG: testKubeconfig() })).toMatch(/Tests:\s+8 passed, 8 total/);
  run('npm', ['run', 'synth'], project);
  const cluster = fs.readFileSync(path.join(project, 'dist', '0000-cluster.k8s.yaml'), 'utf8');
  expect(cluster).toContain('name: websites.website.example.com');
  expect(cluster).toContain('name: caches.cache.scaffold.example.com');
});
