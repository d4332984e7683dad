/**
 * The convergence benchmark, at a tiny N against the test cluster, so it cannot break unnoticed
 * (it once ran every controller under the Memcached operator's ServiceAccount and waited forever
 * for informers it had no right to).
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { testKubeconfig } from '../support/kube';

const ROOT = path.resolve(__dirname, '..', '..');

jest.setTimeout(240_000);

test('npm run bench:converge converges N = 3 Memcacheds and reports its figures', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', 'converge.ts')], {
    cwd: ROOT,
    env: { ...process.env, N: '3', BENCH_TIMEOUT_S: '120', OPKIT_KUBECONFIG: testKubeconfig() },
    encoding: 'utf8',
    timeout: 200_000,
  });
  expect({ code: r.status, stderr: r.status === 0 ? '' : r.stderr }).toEqual({ code: 0, stderr: '' });
  const report = JSON.parse(r.stdout.slice(r.stdout.indexOf('{')));
  expect(report).toMatchObject({ n: 3, deploymentsCreated: 3 });
  expect(report.convergeSeconds).toBeGreaterThan(0);
  expect(report.requestsPerMemcached).toBeGreaterThan(0);
});
