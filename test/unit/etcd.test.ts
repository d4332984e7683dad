import * as fs from 'node:fs';
import * as path from 'node:path';
import { structuralProblems } from '../../constructs';
import { desiredEtcdStatus, etcdClusterController } from '../../constructs/etcd/controller';
import { renderChildren } from '../../operator/runtime/render';

const desiredEtcdChildren = (c: any) => renderChildren(etcdClusterController, c);
import { validateBuiltin } from '../support/builtin-validator';
import { CrdValidator } from '../support/crd-validator';
import { invalidEtcdSpecs } from '../support/etcd-cases';
import { one, parseYaml, podSpecsOf, synthProject } from '../support/synth';

const result = synthProject();
const files = Object.fromEntries(Object.entries(result.files).filter(([f]) => /^\d{4}-etcd|samples\/etcd/.test(f)));
const objects = Object.keys(files).filter(f => !f.startsWith('samples/')).sort().flatMap(f => parseYaml(files[f]));
const crd = one(objects, 'CustomResourceDefinition', 'etcdclusters.etcd.database.coreos.com');
const validator = new CrdValidator(crd);
const SEED = path.join(__dirname, '..', 'fixtures', 'seeds', '000-my-etcd-cluster.yaml');

describe('synthesized etcd operator', () => {
  test('matches the snapshot', () => {
    expect(files).toMatchSnapshot();
  });

  test('the CRD follows seed 000: group, v1alpha1, kind, short name etcd; structural schema with subresources', () => {
    expect(crd.spec.group).toBe('etcd.database.coreos.com');
    expect(crd.spec.names).toMatchObject({ kind: 'EtcdCluster', plural: 'etcdclusters', singular: 'etcdcluster', shortNames: ['etcd'] });
    expect(crd.spec.versions.map((v: any) => [v.name, v.storage])).toEqual([['v1alpha1', true]]);
    const v = crd.spec.versions[0];
    expect(structuralProblems(v.schema.openAPIV3Schema)).toEqual([]);
    expect(v.subresources).toEqual({ status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.readyReplicas' } });
    expect(v.additionalPrinterColumns.map((c: any) => c.name)).toEqual(['Replicas', 'Ready', 'Version', 'Phase', 'Age']);
    const spec = v.schema.openAPIV3Schema.properties.spec;
    expect(spec.properties.replicas).toMatchObject({ type: 'integer', minimum: 1, maximum: 9, default: 3 });
    expect(spec.properties.version).toMatchObject({ type: 'string', default: '3.5.21' });
    expect(spec.properties.storage).toMatchObject({ 'x-kubernetes-int-or-string': true, default: '1Gi' });
  });

  test('RBAC: apply Services, StatefulSets and PDBs, read Pods and Events; no deletes and no access to PVCs at all', () => {
    const role = one(objects, 'ClusterRole', 'etcd-manager-role');
    const grants = role.rules.flatMap((r: any) => r.resources.map((res: string) => `${r.apiGroups.join()}/${res}: ${r.verbs.join(',')}`)).sort();
    expect(grants).toEqual([
      '/events: get,list,watch',
      '/pods: get,list,watch',
      '/services: get,list,watch,create,update,patch',
      'apps/statefulsets: get,list,watch,create,update,patch',
      'authentication.k8s.io/tokenreviews: create',
      'authorization.k8s.io/subjectaccessreviews: create',
      'etcd.database.coreos.com/etcdclusters/finalizers: update',
      'etcd.database.coreos.com/etcdclusters/status: get,update,patch',
      'etcd.database.coreos.com/etcdclusters: get,list,watch',
      'events.k8s.io/events: create,patch',
      'policy/poddisruptionbudgets: get,list,watch,create,update,patch',
    ].sort());
    expect(JSON.stringify(role.rules)).not.toMatch(/persistentvolumeclaims|delete|\*/);
  });

  test('every object validates; the reconciler pod is restricted', () => {
    for (const o of objects) expect(() => validateBuiltin(o)).not.toThrow();
    for (const { spec } of podSpecsOf(objects)) {
      expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      expect(spec.containers[0].securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    }
  });
});

describe('EtcdCluster resources', () => {
  test('the synthesized sample and seed 000\'s sample validate verbatim', () => {
    const sample = parseYaml(files['samples/etcd-sample.k8s.yaml'])[0];
    expect(sample).toMatchObject({ metadata: { name: 'my-etcd-cluster' }, spec: { replicas: 3, storage: '10Gi' } });
    expect(validator.validate(sample)).toEqual([]);
    expect(validator.validate(parseYaml(fs.readFileSync(SEED, 'utf8'))[0])).toEqual([]);
  });

  test.each(invalidEtcdSpecs)('rejects %s, naming the field', (_what, spec, field) => {
    const errors = validator.validate({ apiVersion: 'etcd.database.coreos.com/v1alpha1', kind: 'EtcdCluster', metadata: { name: 'x' }, spec });
    expect(errors.join('\n')).toContain(field);
  });

  const cluster = (replicas: number, extra: object = {}) => ({
    apiVersion: 'etcd.database.coreos.com/v1alpha1', kind: 'EtcdCluster',
    metadata: { name: 'kv', namespace: 'db', uid: 'u-9', generation: 2 },
    spec: { replicas, version: '3.5.21', storage: '10Gi', ...extra },
  }) as any;

  test('children: peer and client Services, a StatefulSet with the initial cluster, a quorum PDB, all owned', () => {
    const children = desiredEtcdChildren(cluster(3, { storageClassName: 'fast' }));
    expect(children.map(c => `${c.kind}/${c.metadata.name}`)).toEqual(['Service/kv', 'Service/kv-client', 'StatefulSet/kv', 'PodDisruptionBudget/kv']);
    for (const c of children) {
      expect(c.metadata.ownerReferences).toEqual([{ apiVersion: 'etcd.database.coreos.com/v1alpha1', kind: 'EtcdCluster', name: 'kv', uid: 'u-9', controller: true, blockOwnerDeletion: true }]);
      expect(() => validateBuiltin(c as any)).not.toThrow();
    }
    const [peer, , sts, pdb] = children as any[];
    expect(peer.spec).toMatchObject({ clusterIP: 'None', publishNotReadyAddresses: true });
    expect(sts.spec).toMatchObject({ replicas: 3, serviceName: 'kv', podManagementPolicy: 'Parallel', persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' } });
    const args: string[] = sts.spec.template.spec.containers[0].args;
    expect(args).toContain('--initial-cluster=kv-0=http://kv-0.kv.db.svc:2380,kv-1=http://kv-1.kv.db.svc:2380,kv-2=http://kv-2.kv.db.svc:2380');
    expect(sts.spec.template.spec.containers[0].image).toBe('quay.io/coreos/etcd:v3.5.21');
    expect(sts.spec.volumeClaimTemplates[0].spec).toMatchObject({ storageClassName: 'fast', resources: { requests: { storage: '10Gi' } } });
    expect(pdb.spec.minAvailable).toBe(2);
    expect((desiredEtcdChildren(cluster(5))[3] as any).spec.minAvailable).toBe(3);
  });

  test('status: phase, members, quorum, and a warning about even member counts', () => {
    const sts = { metadata: { name: 'kv' }, status: { replicas: 4, readyReplicas: 3 } };
    const s = desiredEtcdStatus(cluster(4), sts, ['kv-0', 'kv-1', 'kv-2', 'kv-3'], undefined);
    const byType = Object.fromEntries(s.conditions!.map(c => [c.type, `${c.status}/${c.reason}`]));
    expect(byType).toEqual({ Available: 'True/QuorumReady', Progressing: 'True/WaitingForMembers', Degraded: 'False/AsExpected', OddMembers: 'False/EvenMemberCount' });
    expect(s).toMatchObject({ phase: 'Creating', members: ['kv-0', 'kv-1', 'kv-2', 'kv-3'], readyReplicas: 3, clientService: 'kv-client.db.svc:2379', observedGeneration: 2 });
    expect(desiredEtcdStatus(cluster(5), sts, [], undefined).phase).toBe('Scaling');
    expect(desiredEtcdStatus(cluster(3), { metadata: { name: 'kv' }, status: { replicas: 3, readyReplicas: 3 } }, [], undefined).phase).toBe('Running');
  });
});
