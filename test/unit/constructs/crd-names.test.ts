/**
 * kubectl resolves a resource name (`kubectl get memcached`) to whichever group sorts first when
 * two CRDs claim it. The integration suites share one control plane with the bench's peers, so a
 * peer claiming `memcached` once turned every other suite's `kubectl ... memcached` into
 * `memcacheds.cache.bench.example.com` while the bench test ran and after it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { find, parseYaml } from '../../support/synth';

const ROOT = path.resolve(__dirname, '..', '..', '..');

interface CrdNames {
  file: string;
  group: string;
  names: string[];
}

function crdsIn(file: string): CrdNames[] {
  return find(parseYaml(fs.readFileSync(file, 'utf8')), 'CustomResourceDefinition').map((crd: any) => ({
    file: path.relative(ROOT, file),
    group: crd.spec.group,
    names: [crd.spec.names.plural, crd.spec.names.singular, ...(crd.spec.names.shortNames ?? [])].filter(Boolean),
  }));
}

// The kit's own CRDs (dist/*.yaml) and the bench's controller-runtime peer. Not dist/crds/: those
// mirror a third-party CRD under its old and new group with upstream's names, as a cluster that
// upgraded it has them; its suite names them with their group.
const INSTALLED = [
  ...fs
    .readdirSync(path.join(ROOT, 'dist'))
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => path.join(ROOT, 'dist', f)),
  path.join(ROOT, 'bench', 'controller-runtime', 'crd.yaml'),
];

test('no two CRDs installed on the shared test control plane claim the same resource name in different groups', () => {
  const crds = INSTALLED.flatMap(crdsIn);
  expect(crds.map((c) => c.group)).toEqual(
    expect.arrayContaining([
      'cache.example.com',
      'etcd.database.coreos.com',
      'stable.example.com',
      'cache.bench.example.com',
    ]),
  );
  const claims = new Map<string, CrdNames>();
  const clashes: string[] = [];
  for (const crd of crds) {
    for (const name of crd.names) {
      const other = claims.get(name);
      if (other && other.group !== crd.group) {
        clashes.push(`${name}: ${other.group} (${other.file}) and ${crd.group} (${crd.file})`);
      }
      claims.set(name, crd);
    }
  }
  expect(clashes).toEqual([]);
});
