/**
 * The e2e test `init` scaffolds, as kubebuilder's scaffold carries test/e2e: a project made from
 * the packed kit runs `npm run test:e2e`, and its operator's image — built by the kit's `image`
 * command from the project's own reconciler — runs as a Pod on this tier's real node (lent to it
 * through OPKIT_KUBECONFIG and OPKIT_REAL_NODE: one real node per machine), reconciling its samples.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { testKubeconfig } from '../support/kube';
import { packKit } from '../support/package';

const skip = process.env.OPKIT_E2E_SKIP;

jest.setTimeout(900_000);

if (skip) test.todo(`the scaffolded e2e test — skipped: ${skip}`);

function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}): string {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    timeout: 600_000,
    env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', ...env },
  });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} failed (${String(r.status)}) in ${cwd}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout + r.stderr;
}

(skip ? describe.skip : describe)('the e2e test init scaffolds', () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-scaffold-e2e-'));
  const project = path.join(work, 'website-operator');

  afterAll(() => {
    fs.rmSync(work, { recursive: true, force: true });
  });

  test("passes for an init project: its operator's image runs as a Pod on a real node and reconciles its samples", () => {
    const tarball = packKit();
    fs.mkdirSync(project);
    const exec = ['exec', '--yes', '--prefer-offline', `--package=${tarball}`, '--'];
    run('npm', [...exec, 'cdk8s-operator-kit', 'init', '--kit', `file:${tarball}`], project);
    expect(fs.existsSync(path.join(project, 'test', 'e2e', 'operator.test.ts'))).toBe(true);
    run('npm', ['install', '--prefer-offline', '--loglevel=error'], project);
    run('npx', ['tsc', '-p', '.'], project);
    const out = run('npm', ['run', 'test:e2e'], project, {
      OPKIT_KUBECONFIG: testKubeconfig(),
      OPKIT_REAL_NODE: process.env.OPKIT_TEST_REAL_NODE ?? '',
    });
    expect(out).toMatch(/Tests:\s+2 passed, 2 total/);
  });
});
