/**
 * The offline check samples and examples get at synth (`CustomResourceKind.specViolations`)
 * refuses what the CRD's schema refuses — the same cases the API server and the unit tier's
 * CRD validator are held to — naming the field, and accepts every kind's valid samples.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cronTabKind } from '../../../constructs/crontab/api';
import { databaseKind } from '../../../constructs/database/api';
import { etcdClusterKind } from '../../../constructs/etcd/api';
import { memcachedKind } from '../../../constructs/memcached/api';
import { applicationKind, webAppKind } from '../../../constructs/webapp/api';
import type { CustomResourceKind } from '../../../constructs';
import { invalidCronTabSpecs } from '../../support/crontab-cases';
import { invalidDatabaseSpecs } from '../../support/database-cases';
import { invalidEtcdSpecs } from '../../support/etcd-cases';
import { invalidMemcachedSpecs } from '../../support/memcached-cases';
import { invalidApplicationSpecs, invalidWebAppSpecs } from '../../support/web-cases';
import { parseYaml } from '../../support/synth';

const cases: [string, CustomResourceKind, [string, unknown, string][]][] = [
  ['Memcached', memcachedKind, invalidMemcachedSpecs],
  ['EtcdCluster', etcdClusterKind, invalidEtcdSpecs],
  ['CronTab', cronTabKind, invalidCronTabSpecs],
  ['Application', applicationKind, invalidApplicationSpecs],
  ['WebApp', webAppKind, invalidWebAppSpecs],
  ['Database', databaseKind, invalidDatabaseSpecs],
];

describe.each(cases)('%s', (_name, kind, invalid) => {
  test.each(invalid)('refuses %s, naming the field', (_what, spec, field) => {
    const problems = kind.specViolations(spec);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.join('; ')).toContain(field);
  });
});

test("every sample the kit synthesizes and every seed's resource passes", () => {
  const kinds = new Map(cases.map(([name, kind]) => [name, kind]));
  const dirs = [
    path.join(__dirname, '..', '..', '..', 'dist', 'samples'),
    path.join(__dirname, '..', '..', 'fixtures', 'seeds'),
  ];
  let checked = 0;
  for (const dir of dirs) {
    for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
      for (const o of parseYaml(fs.readFileSync(path.join(dir, file), 'utf8'))) {
        const kind = kinds.get(o.kind);
        if (!kind || !o.apiVersion.startsWith(`${kind.group}/`)) continue;
        expect([`${file} ${o.metadata.name}`, kind.specViolations(o.spec)]).toEqual([`${file} ${o.metadata.name}`, []]);
        checked++;
      }
    }
  }
  expect(checked).toBeGreaterThanOrEqual(6);
});

test('a quantity that is not one says what a quantity looks like, not its regular expression', () => {
  const [problem] = memcachedKind.specViolations({ size: 1, memory: 'lots' });
  expect(problem).toBe(
    'spec.memory: Invalid value: "lots": must be a quantity: a number with an optional suffix, like 512Mi, 2Gi, 1.5 or 500m',
  );
});
