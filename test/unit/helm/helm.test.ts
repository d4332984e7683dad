/**
 * `cdk8s synth --format helm`, as the README says to use it: CRDs in a chart of their own
 * (`crdScope`), whose file is then moved to the Helm chart's crds/ — Helm installs those first and
 * never templates or upgrades them.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseYaml } from '../../support/synth';

const ROOT = path.resolve(__dirname, '..', '..', '..');

test('a Helm chart with the CRDs in crds/ and everything else in templates/', () => {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-helm-')), 'chart');
  const r = spawnSync(
    path.join(ROOT, 'node_modules', '.bin', 'cdk8s'),
    [
      'synth',
      '--no-check-upgrade',
      '--format',
      'helm',
      '--chart-version',
      '1.0.0',
      '--chart-api-version',
      'v2',
      '-o',
      out,
    ],
    {
      cwd: path.join(ROOT, 'test', 'fixtures', 'helm-app'),
      encoding: 'utf8',
      timeout: 120_000,
    },
  );
  expect({ status: r.status, stderr: r.status === 0 ? '' : r.stderr }).toEqual({ status: 0, stderr: '' });
  // The documented step: move the CRD chart's file to crds/.
  fs.mkdirSync(path.join(out, 'crds'));
  for (const f of fs.readdirSync(path.join(out, 'templates')).filter((f) => f.endsWith('-crds.k8s.yaml'))) {
    fs.renameSync(path.join(out, 'templates', f), path.join(out, 'crds', f));
  }
  expect(parseYaml(fs.readFileSync(path.join(out, 'Chart.yaml'), 'utf8'))[0]).toMatchObject({
    apiVersion: 'v2',
    version: '1.0.0',
  });
  const kinds = (dir: string) =>
    fs
      .readdirSync(path.join(out, dir))
      .flatMap((f) => parseYaml(fs.readFileSync(path.join(out, dir, f), 'utf8')))
      .map((o) => o.kind);
  expect(kinds('crds')).toEqual(['CustomResourceDefinition']);
  expect(kinds('templates')).not.toContain('CustomResourceDefinition');
  expect(kinds('templates')).toEqual(
    expect.arrayContaining(['Namespace', 'ClusterRole', 'ServiceAccount', 'Deployment']),
  );
}, 120_000);
