import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  changedFields,
  conditionProblems,
  foreignStandIn,
  rbacFindings,
  respelledQuantities,
  respelledQuantity,
} from '../../../testing/conformance/checks';
import { sameQuantity } from '../../../constructs/contract/quantity';
import { t } from '../../../constructs';
import { auditLength, reconcilerAuditRequests, reconcilerWrites } from '../../../testing/audit-log';
import type { KubeObject } from '../../../constructs/contract';

const at = '2026-12-06T12:00:00Z';
const resource = (conditions: unknown[], extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'x.example.com/v1',
  kind: 'Greeting',
  metadata: { name: 'g', generation: 2 },
  status: { observedGeneration: 2, conditions, ...extra },
});
const ready = {
  type: 'Ready',
  status: 'True',
  reason: 'Ready',
  message: 'ok',
  lastTransitionTime: at,
  observedGeneration: 2,
};

describe('conditionProblems: Ready at its generation, as kstatus reads it', () => {
  test('none for a Ready resource of its generation', () => {
    expect(conditionProblems(resource([ready]))).toEqual([]);
    // Available stands for Ready where there is none.
    expect(conditionProblems(resource([{ ...ready, type: 'Available' }]))).toEqual([]);
  });

  test('each way of not being so, said', () => {
    expect(conditionProblems(undefined)).toEqual(['it does not exist']);
    expect(conditionProblems(resource([]))).toEqual([
      "no status.conditions: kstatus reads a resource's readiness from them",
    ]);
    expect(conditionProblems(resource([{ ...ready, status: 'False', reason: 'Waiting', message: 'pods' }]))).toEqual([
      'Ready=False Waiting: pods',
    ]);
    expect(
      conditionProblems(
        resource([
          ready,
          { type: 'Degraded', status: 'True', reason: 'PodFailing', message: 'x', lastTransitionTime: at },
        ]),
      ),
    ).toEqual(['Degraded=True PodFailing: x']);
    expect(conditionProblems(resource([{ ...ready, observedGeneration: 1 }], { observedGeneration: 1 }))).toEqual([
      'status.observedGeneration is 1, its generation 2',
      "condition Ready is of generation 1, the resource's is 2",
    ]);
    expect(conditionProblems(resource([{ type: 'Ready', status: 'yes', reason: 'all good' }]))).toEqual([
      'condition Ready: status "yes" is not True, False or Unknown',
      'condition Ready: reason "all good" is not CamelCase',
      'condition Ready: no lastTransitionTime',
      'Ready=yes all good: undefined',
    ]);
    expect(conditionProblems(resource([{ ...ready, type: 'Synced' }]))).toEqual(['no Ready or Available condition']);
  });
});

describe("foreignStandIn: someone else's object under a child's name", () => {
  const child = (kind: string, name: string, rest: object = {}): KubeObject => ({
    apiVersion: 'v1',
    kind,
    metadata: { name, uid: 'u', ownerReferences: [{ apiVersion: 'x/v1', kind: 'Greeting', name: 'hello', uid: 'o' }] },
    ...rest,
  });

  test("a ConfigMap first, named as the new resource's child would be, owned by nobody", () => {
    const standIn = foreignStandIn(
      [
        child('Service', 'hello', {
          spec: { ports: [{ name: 'web', port: 80, nodePort: 30001 }], clusterIP: '10.0.0.1' },
        }),
        child('ConfigMap', 'hello-greeting'),
      ],
      'hello',
      'hello-x',
    );
    expect(standIn?.type.kind).toBe('ConfigMap');
    expect(standIn?.object.metadata).toEqual({
      name: 'hello-x-greeting',
      labels: { 'conformance.cdk8s-operator-kit/foreign': 'true' },
    });
  });

  test('a Service without its address or node ports, selecting nothing of the kind', () => {
    const standIn = foreignStandIn(
      [
        child('Service', 'hello', {
          spec: { ports: [{ name: 'web', port: 80, protocol: 'TCP', nodePort: 30001 }], clusterIP: '10.0.0.1' },
        }),
      ],
      'hello',
      'hello-x',
    );
    expect(standIn?.object).toEqual({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'hello-x', labels: { 'conformance.cdk8s-operator-kit/foreign': 'true' } },
      spec: {
        ports: [{ name: 'web', port: 80, protocol: 'TCP' }],
        selector: { 'conformance.cdk8s-operator-kit/foreign': 'true' },
      },
    });
  });

  test('none where no child is of a kind it can stand in for, or none carries the name', () => {
    expect(foreignStandIn([child('Deployment', 'hello')], 'hello', 'hello-x')).toBeUndefined();
    expect(foreignStandIn([child('ConfigMap', 'shared-settings')], 'hello', 'hello-x')).toBeUndefined();
  });
});

describe("reconcilerWrites: the reconciler's writes in a namespace, from the audit log", () => {
  const entry = (o: Record<string, unknown>) =>
    JSON.stringify({
      verb: 'patch',
      userAgent: 'cdk8s-operator-kit-reconciler/0.1.0',
      requestURI: '/api/v1/namespaces/ns/configmaps/a',
      objectRef: { resource: 'configmaps', namespace: 'ns', name: 'a' },
      ...o,
    });

  test('after the mark; Events, Leases, dry runs, reads, other clients and namespaces aside; status writes named', () => {
    const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'audit-')), 'audit.log');
    fs.writeFileSync(log, `${entry({ objectRef: { resource: 'configmaps', namespace: 'ns', name: 'before' } })}\n`);
    const mark = auditLength(log);
    fs.appendFileSync(
      log,
      [
        entry({}),
        entry({ verb: 'get' }),
        entry({ userAgent: 'kubectl/v1.36' }),
        entry({ requestURI: '/api/v1/namespaces/ns/configmaps/a?dryRun=All' }),
        entry({ objectRef: { resource: 'events', namespace: 'ns', name: 'e' } }),
        entry({ objectRef: { resource: 'leases', namespace: 'ns', name: 'l' } }),
        entry({ objectRef: { resource: 'configmaps', namespace: 'other', name: 'a' } }),
        entry({
          verb: 'update',
          objectRef: { resource: 'greetings', subresource: 'status', namespace: 'ns', name: 'g' },
        }),
        '',
      ].join('\n'),
    );
    expect(mark).toBe(1);
    expect(reconcilerWrites(log, mark, 'ns')).toEqual(['patch configmaps a', 'update greetings/status g']);
  });

  test('an entry the API server is still writing (no newline yet) is neither counted nor read, until it is whole', () => {
    const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'audit-')), 'audit.log');
    const whole = entry({ objectRef: { resource: 'configmaps', namespace: 'ns', name: 'b' } });
    fs.writeFileSync(log, `${entry({})}\n${whole.slice(0, 40)}`);
    expect(auditLength(log)).toBe(1);
    expect(reconcilerWrites(log, 0, 'ns')).toEqual(['patch configmaps a']);
    fs.appendFileSync(log, `${whole.slice(40)}\n`);
    expect(auditLength(log)).toBe(2);
    expect(reconcilerWrites(log, 1, 'ns')).toEqual(['patch configmaps b']);
  });

  test("one reconciler's requests, reads among them, by its identity", () => {
    const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'audit-')), 'audit.log');
    fs.writeFileSync(
      log,
      [
        entry({ verb: 'list', userAgent: 'cdk8s-operator-kit-reconciler (conformance-abc-x1)' }),
        entry({ verb: 'watch', userAgent: 'cdk8s-operator-kit-reconciler (conformance-abc-restarted-x2)' }),
        entry({ userAgent: 'cdk8s-operator-kit-reconciler (conformance-xyz-x3)' }),
        '',
      ].join('\n'),
    );
    expect(reconcilerAuditRequests(log, 0, 'conformance-abc').map((r) => r.verb)).toEqual(['list', 'watch']);
  });
});

describe('respelledQuantity: the same amount in a smaller unit of its kind, which the API server writes back in the larger', () => {
  test.each([
    ['1Gi', '1024Mi'],
    ['1.5Gi', '1536Mi'],
    ['64Mi', '65536Ki'],
    ['1Ki', '1.0Ki'],
    ['2', '2000m'],
    [2, '2000m'],
    ['1k', '1000'],
    ['1.5k', '1500'],
    ['100m', '100000u'],
    ['0.5', '500m'],
    ['3n', '3.0n'],
  ])('%s → %s', (from, to) => {
    expect(respelledQuantity(from)).toBe(to);
    expect(sameQuantity(from, to)).toBe(true);
  });

  test('none for what is no quantity, or is written with an exponent', () => {
    expect(respelledQuantity('lots')).toBeUndefined();
    expect(respelledQuantity(1.5)).toBeUndefined();
    expect(respelledQuantity('1e3')).toBeUndefined();
  });
});

describe('respelledQuantities: every quantity field a spec sets, by its schema', () => {
  const schema = t.object({
    memory: t.quantity(),
    name: t.string(),
    count: t.integer(),
    volumes: t.array(t.object({ size: t.quantity(), label: t.string() })),
    limits: t.object({ cpu: t.quantity() }),
    extra: t.map(t.quantity()),
  }).json;

  test('objects, maps and arrays walked; other fields, and quantities not set, left as they are', () => {
    const { spec, changes } = respelledQuantities(schema, {
      memory: '64Mi',
      name: '1Gi',
      count: 3,
      volumes: [{ size: '1Gi', label: 'a' }, { label: 'b' }],
      extra: { scratch: '1k' },
    });
    expect(spec).toEqual({
      memory: '65536Ki',
      name: '1Gi',
      count: 3,
      volumes: [{ size: '1024Mi', label: 'a' }, { label: 'b' }],
      extra: { scratch: '1000' },
    });
    expect(changes).toEqual([
      'spec.memory: 64Mi → 65536Ki',
      'spec.volumes[0].size: 1Gi → 1024Mi',
      'spec.extra.scratch: 1k → 1000',
    ]);
  });

  test('none set: no change', () => {
    expect(respelledQuantities(schema, { name: 'x' })).toEqual({ spec: { name: 'x' }, changes: [] });
  });
});

describe("rbacFindings: the controller's rights against the requests it made", () => {
  const rules = [
    { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'patch'] },
    { apiGroups: ['apps'], resources: ['deployments', 'deployments/status'], verbs: ['get', 'delete'] },
  ];
  const request = (verb: string, apiGroup: string, resource: string, subresource?: string) => ({
    verb,
    apiGroup,
    resource,
    ...(subresource ? { subresource } : {}),
  });

  test('a request no rule grants is ungranted (by verb, group, resource and subresource); the grants never used are listed', () => {
    expect(
      rbacFindings(
        [
          request('list', '', 'configmaps'),
          request('watch', '', 'configmaps'),
          request('patch', '', 'configmaps'),
          request('patch', '', 'configmaps'),
          request('get', 'apps', 'deployments', 'status'),
          request('create', '', 'secrets'),
          request('patch', 'apps', 'deployments'),
          request('get', '', 'deployments'),
        ],
        rules,
      ),
    ).toEqual({
      ungranted: ['create secrets', 'get deployments', 'patch apps/deployments'],
      unused: ['delete apps/deployments', 'delete apps/deployments/status', 'get apps/deployments', 'get configmaps'],
    });
  });

  test('nothing made: nothing ungranted, every grant unused', () => {
    expect(rbacFindings([], rules).unused).toHaveLength(8);
  });
});

describe("changedFields: what a settled resource's status write changed, field by field", () => {
  test('names each changed leaf by its path, item by item in lists, with both values', () => {
    const before = {
      members: [
        { name: 'a', healthy: true },
        { name: 'b', healthy: true },
      ],
      phase: 'Running',
    };
    const after = {
      members: [
        { name: 'a', healthy: true },
        { name: 'b', healthy: false },
      ],
      phase: 'Running',
      step: 'x',
    };
    expect(changedFields(before, after, 'status')).toEqual([
      'status.members[1].healthy: true → false',
      'status.step: absent → "x"',
    ]);
  });

  test('an item added or removed, a value of another type: the whole value on each side', () => {
    expect(changedFields({ a: [1] }, { a: [1, { b: 2 }] }, 'status')).toEqual(['status.a[1]: absent → {"b":2}']);
    expect(changedFields({ a: 'x' }, { a: ['x'] }, 'status')).toEqual(['status.a: "x" → ["x"]']);
    expect(changedFields({ a: 1 }, {}, 'status')).toEqual(['status.a: 1 → absent']);
  });

  test('nothing when equal; past `most`, how many more', () => {
    expect(changedFields({ a: { b: [1, 2] } }, { a: { b: [1, 2] } }, 'status')).toEqual([]);
    const many = changedFields({ a: 1, b: 1, c: 1 }, { a: 2, b: 2, c: 2 }, 'status', 2);
    expect(many).toEqual(['status.a: 1 → 2', 'status.b: 1 → 2', '1 more']);
  });
});
