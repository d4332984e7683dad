/**
 * The upgrade test's verdict: the plan against the audit log's writes and the children's fields.
 * Each way it can differ is reported; only an upgrade that did exactly what was planned has none.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BuiltinTypes, type KubeObject } from '../../../constructs/contract';
import { compareWrites, type PlannedChange } from '../../../testing/upgrade/compare';

const FM = 'cdk8s-operator-kit';
const owned = [{ name: 'x', for: {} as never, owns: [BuiltinTypes.Deployment, BuiltinTypes.ConfigMap] }] as never[];

/** A Deployment with `image`, applied by the reconciler (its managed fields own the image). */
function deployment(name: string, image: string, revision = '1'): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name,
      annotations: { 'deployment.kubernetes.io/revision': revision },
      managedFields: [
        {
          manager: FM,
          operation: 'Apply',
          apiVersion: 'apps/v1',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:spec': {
              'f:template': {
                'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:name': {}, 'f:image': {} } } },
              },
            },
          },
        },
      ],
    },
    spec: { template: { spec: { containers: [{ name: 'c', image }] } } },
  };
}

/** An audit log with these writes (and the kinds of entries the comparison must leave out). */
function auditLog(writes: { verb: string; resource: string; name: string; agent?: string; subresource?: string }[]) {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'audit-')), 'audit.log');
  const lines = writes.map((w) =>
    JSON.stringify({
      verb: w.verb,
      userAgent: w.agent ?? 'cdk8s-operator-kit-reconciler (pod_1234)',
      requestURI: `/apis/apps/v1/namespaces/ns/${w.resource}/${w.name}`,
      objectRef: {
        resource: w.resource,
        apiGroup: w.resource === 'configmaps' ? '' : 'apps',
        name: w.name,
        subresource: w.subresource,
      },
    }),
  );
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

const changed = (child: string, fields: PlannedChange['fields']): PlannedChange => ({
  resource: 'ns/r',
  child,
  verb: 'changed',
  fields,
});

test('the writes and the fields the plan named: no problem; other writers and status writes do not count', () => {
  const before = new Map([['Deployment/a', deployment('a', 'nginx:1')]]);
  // The Deployment controller's revision annotation changes too: not the reconciler's field.
  const after = new Map([['Deployment/a', deployment('a', 'nginx:2', '2')]]);
  const log = auditLog([
    { verb: 'patch', resource: 'deployments', name: 'a' },
    { verb: 'patch', resource: 'deployments', name: 'a', subresource: 'status' },
    { verb: 'update', resource: 'deployments', name: 'b', agent: 'kube-controller-manager/v1.36.3' },
  ]);
  const plan = {
    changes: [changed('Deployment/a', [{ field: 'spec.template.spec.containers[0].image', change: 'changed' }])],
  };
  expect(compareWrites({ plan, before, after, auditLog: log, mark: 0, fieldManager: FM, owned })).toEqual({
    written: ['Deployment/a'],
    problems: [],
  });
});

test('a write the plan did not name, a named child not written, and other fields are each a problem', () => {
  const before = new Map([
    ['Deployment/a', deployment('a', 'nginx:1')],
    ['Deployment/b', deployment('b', 'nginx:1')],
  ]);
  const after = new Map([
    ['Deployment/a', deployment('a', 'nginx:3')],
    ['Deployment/b', deployment('b', 'nginx:1')],
  ]);
  const log = auditLog([
    { verb: 'patch', resource: 'deployments', name: 'a' },
    { verb: 'patch', resource: 'configmaps', name: 'c' },
  ]);
  const plan = {
    changes: [
      changed('Deployment/a', [{ field: 'metadata.labels.team', change: 'added' }]),
      changed('Deployment/b', [{ field: 'spec.template.spec.containers[0].image', change: 'changed' }]),
    ],
  };
  const { problems } = compareWrites({ plan, before, after, auditLog: log, mark: 0, fieldManager: FM, owned });
  expect(problems).toEqual([
    'ConfigMap/c: written by the new version, but the plan said unchanged',
    'Deployment/a: the plan said metadata.labels.team added; the new version changed spec.template.spec.containers[0].image changed',
    'Deployment/b: the plan said changed, but the new version did not write it',
  ]);
});
