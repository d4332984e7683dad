import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { structuralProblems } from '../../../constructs/core/structural';
import { ChildMap } from '../../../constructs/contract';
import {
  desiredEtcdStatus,
  etcdClusterController,
  etcdEvents,
  finalEtcdSnapshot,
} from '../../../constructs/etcd/controller';
import { EtcdClusterResources, snapshotRotationScript } from '../../../constructs/etcd/etcd-cluster-resources';
import { lowestVersion, unsupportedVersionChange } from '../../../constructs/etcd/versions';
import { renderConstructs } from '../../../constructs/contract/render';
import { renderChildren } from '../../../operator/runtime/children/render';

const desiredEtcdChildren = (c: any) => renderChildren(etcdClusterController, c);
import { validateBuiltin } from '../../support/builtin-validator';
import { CrdValidator } from '../../support/crd-validator';
import { invalidEtcdSpecs } from '../../support/etcd-cases';
import { one, parseYaml, podSpecsOf, synthProject } from '../../support/synth';

const result = synthProject();
const files = Object.fromEntries(Object.entries(result.files).filter(([f]) => /^\d{4}-etcd|samples\/etcd/.test(f)));
const objects = Object.keys(files)
  .filter((f) => !f.startsWith('samples/'))
  .sort()
  .flatMap((f) => parseYaml(files[f]));
const crd = one(objects, 'CustomResourceDefinition', 'etcdclusters.etcd.database.coreos.com');
const validator = new CrdValidator(crd);
const SEED = path.join(__dirname, '..', '..', 'fixtures', 'seeds', '000-my-etcd-cluster.yaml');

describe('synthesized etcd operator', () => {
  test('matches the snapshot', () => {
    expect(files).toMatchSnapshot();
  });

  test('the CRD follows seed 000: group, v1alpha1, kind, short name etcd; structural schema with subresources', () => {
    expect(crd.spec.group).toBe('etcd.database.coreos.com');
    expect(crd.spec.names).toMatchObject({
      kind: 'EtcdCluster',
      plural: 'etcdclusters',
      singular: 'etcdcluster',
      shortNames: ['etcd'],
    });
    expect(crd.spec.versions.map((v: any) => [v.name, v.storage])).toEqual([['v1alpha1', true]]);
    const v = crd.spec.versions[0];
    expect(structuralProblems(v.schema.openAPIV3Schema)).toEqual([]);
    expect(v.subresources).toEqual({
      status: {},
      scale: {
        specReplicasPath: '.spec.replicas',
        statusReplicasPath: '.status.readyReplicas',
        // The pods' selector, written by the runtime, for HorizontalPodAutoscalers.
        labelSelectorPath: '.status.selector',
      },
    });
    expect(v.additionalPrinterColumns.map((c: any) => c.name)).toEqual([
      'Replicas',
      'Ready',
      'Version',
      'Phase',
      'Age',
    ]);
    const spec = v.schema.openAPIV3Schema.properties.spec;
    expect(spec.properties.replicas).toMatchObject({ type: 'integer', minimum: 1, maximum: 9, default: 3 });
    expect(spec.properties.version).toMatchObject({ type: 'string', default: '3.5.21' });
    expect(spec.properties.storage).toMatchObject({ 'x-kubernetes-int-or-string': true, default: '1Gi' });
  });

  test("RBAC: apply Services, the members' ConfigMap, StatefulSets, PDBs, the NetworkPolicy, the backup CronJob and claim, the final snapshot Job; patch its clusters (the finalizer); read Pods, Events and StorageClasses; get, create and update Secrets and cert-manager Certificates by name (the certificates); delete only the CronJob, the finished restore and listing Jobs, a pod a rollout is stuck behind, a StatefulSet made again with larger claims, the NetworkPolicy when switched off, and a lost member's new claim with its pod", () => {
    const role = one(objects, 'ClusterRole', 'etcd-manager-role');
    const grants = role.rules
      .flatMap((r: any) => r.resources.map((res: string) => `${r.apiGroups.join()}/${res}: ${r.verbs.join(',')}`))
      .sort();
    expect(grants).toEqual(
      [
        '/configmaps: get,list,watch,create,update,patch',
        '/events: get,list,watch',
        '/persistentvolumeclaims: get,list,watch,create,update,patch,delete',
        '/pods: get,list,watch,delete',
        // The CAs and certificates: by name only, never listed or watched.
        '/secrets: get,create,update',
        // Or cert-manager's Certificates for them (spec.tls.issuerRef), likewise by name.
        'cert-manager.io/certificates: get,create,update',
        '/services: get,list,watch,create,update,patch',
        'apps/statefulsets: get,list,watch,create,update,patch,delete',
        'batch/cronjobs: get,list,watch,create,update,patch,delete',
        'batch/jobs: get,list,watch,create,update,patch,delete',
        'storage.k8s.io/storageclasses: get',
        'authentication.k8s.io/tokenreviews: create',
        'authorization.k8s.io/subjectaccessreviews: create',
        'etcd.database.coreos.com/etcdclusters/finalizers: update',
        'etcd.database.coreos.com/etcdclusters/status: get,update,patch',
        'etcd.database.coreos.com/etcdclusters: get,list,watch,patch',
        'events.k8s.io/events: create,patch',
        'policy/poddisruptionbudgets: get,list,watch,create,update,patch',
        'networking.k8s.io/networkpolicies: get,list,watch,create,update,patch,delete',
      ].sort(),
    );
    // Claims hold member data and snapshots: never pruned. Deleted are the backup CronJob, the
    // restore Jobs once Restored (prunes: only what the cluster controls and no longer renders), a
    // pod an owned StatefulSet's rollout is stuck behind (stuck-rollouts.ts), the StatefulSet
    // itself, its pods kept, when its claims grow (storage-growth.ts), its NetworkPolicy when
    // switched off, and the one claim that holds no data of its own: a lost member's new claim,
    // discarded with its pod once the member is removed from etcd (lost-members.ts).
    expect(role.rules.filter((r: any) => r.verbs.includes('delete')).flatMap((r: any) => r.resources)).toEqual([
      'persistentvolumeclaims',
      'pods',
      'statefulsets',
      'cronjobs',
      'jobs',
      'networkpolicies',
    ]);
    expect(JSON.stringify(role.rules)).not.toMatch(/\*/);
  });

  test('every object validates; the reconciler pod is restricted', () => {
    for (const o of objects)
      expect(() => {
        validateBuiltin(o);
      }).not.toThrow();
    for (const { spec } of podSpecsOf(objects)) {
      expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      expect(spec.containers[0].securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
    }
  });
});

describe('EtcdCluster resources', () => {
  test("the synthesized sample and seed 000's sample validate verbatim", () => {
    const sample = parseYaml(files['samples/etcd-sample.k8s.yaml'])[0];
    expect(sample).toMatchObject({ metadata: { name: 'my-etcd-cluster' }, spec: { replicas: 3, storage: '10Gi' } });
    expect(validator.validate(sample)).toEqual([]);
    expect(validator.validate(parseYaml(fs.readFileSync(SEED, 'utf8'))[0])).toEqual([]);
  });

  test.each(invalidEtcdSpecs)('rejects %s, naming the field', (_what, spec, field) => {
    const errors = validator.validate({
      apiVersion: 'etcd.database.coreos.com/v1alpha1',
      kind: 'EtcdCluster',
      metadata: { name: 'x' },
      spec,
    });
    expect(errors.join('\n')).toContain(field);
  });

  const cluster = (replicas: number, extra: object = {}) =>
    ({
      apiVersion: 'etcd.database.coreos.com/v1alpha1',
      kind: 'EtcdCluster',
      metadata: { name: 'kv', namespace: 'db', uid: 'u-9', generation: 2 },
      spec: { replicas, version: '3.5.21', storage: '10Gi', ...extra },
    }) as any;

  test("children: peer and client Services, the members' ConfigMap with the initial cluster, a StatefulSet, a quorum PDB, all owned", () => {
    const children = desiredEtcdChildren(cluster(3, { storageClassName: 'fast' }));
    expect(children.map((c) => `${c.kind}/${c.metadata.name}`)).toEqual([
      'Service/kv',
      'Service/kv-client',
      'ConfigMap/kv-members',
      'StatefulSet/kv',
      'PodDisruptionBudget/kv',
      'NetworkPolicy/kv',
    ]);
    for (const c of children) {
      expect(c.metadata.ownerReferences).toEqual([
        {
          apiVersion: 'etcd.database.coreos.com/v1alpha1',
          kind: 'EtcdCluster',
          name: 'kv',
          uid: 'u-9',
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      expect(() => {
        validateBuiltin(c as any);
      }).not.toThrow();
    }
    const [peer, , cm, sts, pdb] = children as any[];
    expect(peer.spec).toMatchObject({ clusterIP: 'None', publishNotReadyAddresses: true });
    // A new cluster: all members bootstrap together from the ConfigMap.
    expect(cm.data).toEqual({
      ETCD_INITIAL_CLUSTER:
        'kv-0=https://kv-0.kv.db.svc:2380,kv-1=https://kv-1.kv.db.svc:2380,kv-2=https://kv-2.kv.db.svc:2380',
      ETCD_INITIAL_CLUSTER_STATE: 'new',
    });
    expect(sts.spec).toMatchObject({
      replicas: 3,
      serviceName: 'kv',
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
      // A removed member's claim goes with it (its data would stop the ordinal from joining again); the cluster's are kept.
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Delete' },
    });
    const container = sts.spec.template.spec.containers[0];
    expect(container.envFrom).toEqual([{ configMapRef: { name: 'kv-members' } }]);
    // Flags would shadow the ConfigMap's variables.
    expect(container.args.join(' ')).not.toMatch(/--initial-cluster=|--initial-cluster-state/);
    expect(container.image).toBe('quay.io/coreos/etcd:v3.5.21');
    expect(sts.spec.volumeClaimTemplates[0].spec).toMatchObject({
      storageClassName: 'fast',
      resources: { requests: { storage: '10Gi' } },
    });
    expect(pdb.spec.minAvailable).toBe(2);
    expect((desiredEtcdChildren(cluster(5))[4] as any).spec.minAvailable).toBe(3);
  });

  test("probes that do not make an outage worse: liveness never waits on quorum, readiness on etcd's own word; on the metrics port, which needs no client certificate", () => {
    const member = (version: string) => {
      const sts = desiredEtcdChildren(cluster(3, { version })).find((c: any) => c.kind === 'StatefulSet') as any;
      return sts.spec.template.spec.containers[0];
    };
    const current = member('3.5.21');
    expect(current.args).toContain('--listen-metrics-urls=http://0.0.0.0:2381');
    // History compacted on a schedule (the CRD defaults it to 1h), so there are pages to give back.
    const compacting = desiredEtcdChildren(cluster(3, { autoCompactionRetention: '30m' })).find(
      (c: any) => c.kind === 'StatefulSet',
    ) as any;
    expect(compacting.spec.template.spec.containers[0].args).toEqual(
      expect.arrayContaining(['--auto-compaction-mode=periodic', '--auto-compaction-retention=30m']),
    );
    expect(validator.validate({ ...cluster(3), spec: {} }).length).toBe(0);
    expect(current.ports).toContainEqual({ name: 'metrics', containerPort: 2381, protocol: 'TCP' });
    // /livez answers 200 while the member's process serves, quorum or not (etcd >= 3.5.11).
    expect(current.livenessProbe.httpGet).toEqual({ path: '/livez', port: 'metrics' });
    expect(current.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
    // Asked from the start and every 2 s: a member restarted one at a time (a rotation, an
    // upgrade) takes traffic, and lets the next one go, within about a second of being ready.
    expect(current.readinessProbe).toMatchObject({ periodSeconds: 2 });
    expect(current.readinessProbe.initialDelaySeconds ?? 0).toBe(0);
    expect(member('3.6.16').livenessProbe.httpGet.path).toBe('/livez');
    // Before /livez: the member's own health, not the quorum's (serializable: no consensus read).
    const older = member('3.5.9');
    expect(older.livenessProbe.httpGet).toEqual({ path: '/health?serializable=true', port: 'metrics' });
    expect(older.readinessProbe.httpGet).toEqual({ path: '/health', port: 'metrics' });
  });

  test('members spread over nodes by default: preferred anti-affinity on the member labels and a topology spread that schedules anyway', () => {
    const sts = desiredEtcdChildren(cluster(3)).find((c: any) => c.kind === 'StatefulSet') as any;
    const pod = sts.spec.template.spec;
    const members = {
      'app.kubernetes.io/name': 'etcd',
      'app.kubernetes.io/instance': 'kv',
      'app.kubernetes.io/component': 'member',
    };
    expect(pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution).toEqual([
      {
        weight: 100,
        podAffinityTerm: {
          topologyKey: 'kubernetes.io/hostname',
          labelSelector: { matchLabels: expect.objectContaining(members) },
        },
      },
    ]);
    // Preferred, never required: one node (or fewer nodes than members) still runs the cluster.
    expect(pod.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution).toBeUndefined();
    expect(pod.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: 'topology.kubernetes.io/zone',
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: { matchLabels: expect.objectContaining(members) },
      },
    ]);
  });

  test("a NetworkPolicy by default: the peer port from the cluster's members only; the client port from its namespace's pods (or the clients the spec names), its backup Jobs and the operator; probes and metrics from anywhere", () => {
    const policyOf = (extra: object = {}) =>
      desiredEtcdChildren(cluster(3, extra)).find((c: any) => c.kind === 'NetworkPolicy') as any;
    const policy = policyOf();
    expect(() => {
      validateBuiltin(policy);
    }).not.toThrow();
    expect(policy.metadata).toMatchObject({ name: 'kv', namespace: 'db' });
    expect(policy.metadata.ownerReferences[0]).toMatchObject({ kind: 'EtcdCluster', name: 'kv', controller: true });
    const members = {
      'app.kubernetes.io/name': 'etcd',
      'app.kubernetes.io/instance': 'kv',
      'app.kubernetes.io/component': 'member',
    };
    expect(policy.spec.podSelector.matchLabels).toMatchObject(members);
    expect(policy.spec.policyTypes).toEqual(['Ingress']);
    const rule = (port: number) => policy.spec.ingress.filter((r: any) => r.ports.some((p: any) => p.port === port));
    // Peers: members of this cluster, nothing else.
    expect(rule(2380)).toEqual([
      {
        from: [{ podSelector: { matchLabels: expect.objectContaining(members) } }],
        ports: [{ port: 2380, protocol: 'TCP' }],
      },
    ]);
    const [clients] = rule(2379);
    expect(clients.from).toEqual(
      expect.arrayContaining([
        // The namespace's pods (a podSelector alone: this namespace only).
        { podSelector: {} },
        // The operator: its pods in a namespace labelled as the kit's operators' are (a label only
        // those who may change namespaces can set).
        {
          namespaceSelector: {
            matchLabels: {
              'app.kubernetes.io/part-of': 'cdk8s-operator-kit',
              'app.kubernetes.io/component': 'controller',
            },
          },
          podSelector: {
            matchLabels: {
              'app.kubernetes.io/part-of': 'cdk8s-operator-kit',
              'app.kubernetes.io/component': 'controller',
            },
          },
        },
      ]),
    );
    expect(rule(2381)).toEqual([{ ports: [{ port: 2381, protocol: 'TCP' }] }]);
    // Clients named: those instead of the whole namespace; the backups, members and operator still.
    const named = policyOf({
      network: {
        clients: [
          { namespaceSelector: { matchLabels: { team: 'payments' } }, podSelector: { matchLabels: { app: 'api' } } },
        ],
      },
    });
    const from = named.spec.ingress.find((r: any) => r.ports[0].port === 2379).from;
    expect(from).toContainEqual({
      namespaceSelector: { matchLabels: { team: 'payments' } },
      podSelector: { matchLabels: { app: 'api' } },
    });
    expect(from).not.toContainEqual({ podSelector: {} });
    expect(from).toContainEqual({
      podSelector: {
        matchLabels: expect.objectContaining({
          'app.kubernetes.io/instance': 'kv',
          'app.kubernetes.io/component': 'backup',
        }),
      },
    });
    expect(from).toContainEqual({ podSelector: { matchLabels: expect.objectContaining(members) } });
    // Off when asked: no policy rendered (the operator then prunes the one it made).
    expect(policyOf({ network: { policy: false } })).toBeUndefined();
  });

  test('children at a membership step: the StatefulSet, ConfigMap, partition and image follow the topology, not the spec', () => {
    const topology = {
      replicas: 4,
      clusterState: 'existing' as const,
      initialCluster: 'kv-0=http://a:2380,kv-1=http://b:2380,kv-2=http://c:2380,kv-3=http://d:2380',
      partition: 2,
      version: '3.5.21',
    };
    const objects = renderConstructs(
      (scope) =>
        new EtcdClusterResources(scope, 'etcd', {
          name: 'kv',
          namespace: 'db',
          spec: cluster(5, { version: '3.6.16' }).spec,
          topology,
        }),
    ) as any[];
    const [cm, sts, pdb] = ['ConfigMap', 'StatefulSet', 'PodDisruptionBudget'].map((k) =>
      objects.find((o) => o.kind === k),
    );
    expect(cm.data).toEqual({ ETCD_INITIAL_CLUSTER: topology.initialCluster, ETCD_INITIAL_CLUSTER_STATE: 'existing' });
    expect(sts.spec.replicas).toBe(4);
    expect(sts.spec.updateStrategy.rollingUpdate.partition).toBe(2);
    expect(sts.spec.template.spec.containers[0].image).toBe('quay.io/coreos/etcd:v3.5.21');
    expect(pdb.spec.minAvailable).toBe(3);
  });

  test("status from etcd's member list: availability is a healthy voting quorum, the step is shown, a refusal is Degraded", () => {
    const sts = { metadata: { name: 'kv' }, status: { replicas: 4, readyReplicas: 4 } };
    const member = (i: number, extra: object = {}) => ({
      name: `kv-${i}`,
      id: String(100 + i),
      learner: false,
      started: true,
      healthy: true,
      leader: i === 0,
      version: '3.5.21',
      ...extra,
    });
    const adding = desiredEtcdStatus(cluster(5), {
      statefulSet: sts,
      members: [],
      membership: {
        reachable: true,
        members: [member(0), member(1), member(2, { healthy: false }), member(3, { learner: true })],
        step: { reason: 'LearnerCatchingUp', message: 'learner kv-3 is not promoted yet' },
        version: '3.5.21',
      },
    });
    const byType = (s: any) => Object.fromEntries(s.conditions.map((c: any) => [c.type, `${c.status}/${c.reason}`]));
    // 3 voters (the learner does not vote), 2 healthy: quorum 2 holds.
    expect(byType(adding)).toMatchObject({
      Available: 'True/QuorumHealthy',
      Progressing: 'True/LearnerCatchingUp',
      Degraded: 'False/AsExpected',
    });
    expect(adding).toMatchObject({
      phase: 'Scaling',
      step: 'LearnerCatchingUp: learner kv-3 is not promoted yet',
      version: '3.5.21',
    });
    expect(adding.etcdMembers).toHaveLength(4);
    const lost = desiredEtcdStatus(cluster(3), {
      statefulSet: sts,
      members: [],
      membership: {
        reachable: true,
        members: [member(0), member(1, { healthy: false }), member(2, { healthy: false })],
      },
    });
    expect(byType(lost).Available).toBe('False/NoQuorum');
    const refused = desiredEtcdStatus(cluster(3), {
      statefulSet: { metadata: { name: 'kv' }, status: { replicas: 3, readyReplicas: 3 } },
      members: [],
      membership: {
        reachable: true,
        members: [member(0), member(1), member(2)],
        refused: { reason: 'DowngradeRefused', message: 'no' },
        version: '3.6.16',
      },
    });
    expect(byType(refused)).toMatchObject({ Degraded: 'True/DowngradeRefused', Progressing: 'False/Complete' });
    expect(refused.phase).toBe('Running');
    const unreachable = desiredEtcdStatus(cluster(3), {
      statefulSet: sts,
      members: [],
      membership: {
        reachable: false,
        members: [],
        step: { reason: 'MembersUnreachable', message: 'no member answers' },
      },
    });
    expect(byType(unreachable).Available).toBe('False/MembersUnreachable');
  });

  test('backups: a snapshot CronJob (etcdctl in the etcd image, rotation in a shell image) into an unowned claim', () => {
    const children = desiredEtcdChildren(
      cluster(3, { backup: { schedule: '0 */6 * * *', retention: 4, storage: '2Gi' } }),
    ) as any[];
    const claim = children.find((c) => c.kind === 'PersistentVolumeClaim');
    const cronJob = children.find((c) => c.kind === 'CronJob');
    expect(claim.metadata.name).toBe('kv-backups');
    expect(claim.metadata.ownerReferences).toBeUndefined();
    expect(claim.spec.resources.requests.storage).toBe('2Gi');
    expect(cronJob.metadata).toMatchObject({
      name: 'kv-backup',
      ownerReferences: [expect.objectContaining({ kind: 'EtcdCluster', controller: true })],
    });
    expect(cronJob.spec).toMatchObject({ schedule: '0 */6 * * *', concurrencyPolicy: 'Forbid' });
    const pod = cronJob.spec.jobTemplate.spec.template.spec;
    expect(pod.initContainers[0].command).toEqual([
      'etcdctl',
      '--endpoints=https://kv-client.db.svc:2379',
      // The client certificate the operator issues (kv-client-tls), mounted read-only.
      '--cacert=/etc/etcd/client-tls/ca.crt',
      '--cert=/etc/etcd/client-tls/tls.crt',
      '--key=/etc/etcd/client-tls/tls.key',
      '--dial-timeout=10s',
      'snapshot',
      'save',
      '/backups/.in-progress.db',
    ]);
    expect(pod.initContainers[0].image).toBe('quay.io/coreos/etcd:v3.5.21');
    expect(pod.volumes).toEqual([
      { name: 'backups', persistentVolumeClaim: { claimName: 'kv-backups' } },
      { name: 'client-tls', secret: { secretName: 'kv-client-tls', defaultMode: 0o440 } },
    ]);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, fsGroup: expect.any(Number) });
    for (const c of children)
      expect(() => {
        validateBuiltin(c);
      }).not.toThrow();
    expect(
      desiredEtcdChildren(cluster(3)).some((c: any) => c.kind === 'CronJob' || c.kind === 'PersistentVolumeClaim'),
    ).toBe(false);
  });

  test('backups: the rotation script names the new snapshot by its time and keeps the newest `retention` (run with a real shell)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'etcd-backups-'));
    const old = ['20250101T000000Z', '20250102T000000Z', '20250103T000000Z', '20250104T000000Z', '20250105T000000Z'];
    for (const t of old) fs.writeFileSync(path.join(dir, `kv-${t}.db`), 'old');
    fs.writeFileSync(path.join(dir, 'other-20240101T000000Z.db'), 'another cluster');
    fs.writeFileSync(path.join(dir, '.in-progress.db'), 'new');
    execFileSync('sh', ['-c', snapshotRotationScript('kv', 3, dir)]);
    const left = fs.readdirSync(dir).sort();
    expect(left).toHaveLength(4);
    expect(left).toContain('other-20240101T000000Z.db');
    expect(left).toContain('kv-20250105T000000Z.db');
    expect(left).toContain('kv-20250104T000000Z.db');
    const fresh = left.find((f) => /^kv-\d{8}T\d{6}Z\.db$/.test(f) && !old.some((t) => f.includes(t)))!;
    expect(fs.readFileSync(path.join(dir, fresh), 'utf8')).toBe('new');
    fs.rmSync(dir, { recursive: true });
  });

  test('versions: patch releases either way, one minor up at a time, never down a minor', () => {
    expect(unsupportedVersionChange('3.5.21', '3.6.16')).toBeUndefined();
    expect(unsupportedVersionChange('3.5.21', '3.5.17')).toBeUndefined();
    expect(unsupportedVersionChange('3.6.16', '3.5.21')?.reason).toBe('DowngradeRefused');
    expect(unsupportedVersionChange('3.4.30', '3.6.16')?.reason).toBe('UpgradeSkipsMinor');
    expect(unsupportedVersionChange('3.6.16', '4.0.0')?.reason).toBe('UpgradeSkipsMinor');
    expect(lowestVersion(['3.6.16', '3.5.21', '3.5.9'])).toBe('3.5.9');
  });

  test('status: phase, members, quorum, and a warning about even member counts', () => {
    const sts = { metadata: { name: 'kv' }, status: { replicas: 4, readyReplicas: 3 } };
    const s = desiredEtcdStatus(cluster(4), { statefulSet: sts, members: ['kv-0', 'kv-1', 'kv-2', 'kv-3'] });
    const byType = Object.fromEntries(s.conditions!.map((c) => [c.type, `${c.status}/${c.reason}`]));
    expect(byType).toEqual({
      Available: 'True/QuorumReady',
      Progressing: 'True/WaitingForMembers',
      Degraded: 'False/AsExpected',
      OddMembers: 'False/EvenMemberCount',
    });
    expect(s).toMatchObject({
      phase: 'Creating',
      members: ['kv-0', 'kv-1', 'kv-2', 'kv-3'],
      readyReplicas: 3,
      clientService: 'kv-client.db.svc:2379',
      observedGeneration: 2,
    });
    expect(desiredEtcdStatus(cluster(5), { statefulSet: sts, members: [] }).phase).toBe('Scaling');
    expect(
      desiredEtcdStatus(cluster(3), {
        statefulSet: { metadata: { name: 'kv' }, status: { replicas: 3, readyReplicas: 3 } },
        members: [],
      }).phase,
    ).toBe('Running');
  });

  test('a lost quorum is Available=False QuorumLost with a Warning Event once; a formed cluster that loses a member stays Running, not Creating', () => {
    const sts = { metadata: { name: 'kv' }, status: { replicas: 3, readyReplicas: 1 } };
    const quorumLost = {
      reachable: false,
      members: [],
      step: {
        reason: 'QuorumLost',
        message: 'quorum lost: only kv-0 of 3 members answers (a quorum is 2); kv-1, kv-2 do not',
      },
    };
    const running = { ...cluster(3), status: { phase: 'Running', conditions: [] } };
    const lost = desiredEtcdStatus(running, { statefulSet: sts, members: [], membership: quorumLost });
    const available = lost.conditions!.find((c) => c.type === 'Available')!;
    expect(available).toMatchObject({ status: 'False', reason: 'QuorumLost' });
    expect(available.message).toContain('kv-1, kv-2');
    // Not a membership step: the phase stays what a formed cluster is.
    expect(lost.phase).toBe('Running');
    const observed = (status?: object) =>
      ({
        applyError: undefined,
        before: new ChildMap(),
        children: new ChildMap(),
        read: () => [],
        health: { children: [] },
        changes: [],
        status,
      }) as any;
    const warnings = (before: any, after: any) =>
      etcdEvents(before, observed(), after).filter((e) => e.type === 'Warning' && e.reason === 'QuorumLost');
    expect(warnings(running, lost)).toEqual([
      { type: 'Warning', reason: 'QuorumLost', message: expect.stringContaining('kv-1, kv-2 do not') },
    ]);
    // Once, not at every reconcile while it lasts.
    expect(warnings({ ...cluster(3), status: lost }, lost)).toEqual([]);
    // A formed cluster with a member down and no step: Running, and the step says nothing of a rollout.
    const oneDown = desiredEtcdStatus(running, {
      statefulSet: { metadata: { name: 'kv' }, status: { replicas: 3, readyReplicas: 2 } },
      members: [],
    });
    expect(oneDown.phase).toBe('Running');
    expect(desiredEtcdStatus(cluster(3), { statefulSet: sts, members: [] }).phase).toBe('Creating');
  });

  test('a member this operator did not add is Degraded ForeignMember, as the membership step reports it', () => {
    const s = desiredEtcdStatus(cluster(3), {
      statefulSet: { metadata: { name: 'kv' }, status: { replicas: 3, readyReplicas: 3 } },
      members: [],
      membership: {
        reachable: true,
        members: [],
        refused: {
          reason: 'ForeignMember',
          message: 'etcd lists a member this operator did not add: 42ff4e300072008d',
        },
      },
    });
    expect(s.conditions!.find((c) => c.type === 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'ForeignMember',
      message: expect.stringContaining('42ff4e300072008d'),
    });
  });

  // Since Kubernetes 1.30 a StatefulSet deletes a failed member and makes it again at once with no
  // Warning Event (kubernetes#123809): the failed pod is seen only for a moment, between long
  // stretches with no failed pod and nothing ready. The status must not flap back to AsExpected.
  test('a member failure stays Degraded while the members are not ready, though the failed pod is gone; ready clears it', () => {
    const failing = { reason: 'PodFailing', message: 'pod kv-0: container etcd exited with code 1' };
    const notReady = { metadata: { name: 'kv' }, status: { replicas: 1, readyReplicas: 0 } };
    const seen = desiredEtcdStatus(cluster(1), { statefulSet: notReady, members: [], childFailure: failing });
    const degraded = (s: any) => s.conditions.find((c: any) => c.type === 'Degraded');
    expect(degraded(seen)).toMatchObject({ status: 'True', ...failing });
    // The failed pod was deleted; its replacement is not ready yet.
    const later = desiredEtcdStatus({ ...cluster(1), status: seen }, { statefulSet: notReady, members: ['kv-0'] });
    expect(degraded(later)).toEqual(degraded(seen));
    const ready = { metadata: { name: 'kv' }, status: { replicas: 1, readyReplicas: 1 } };
    expect(
      degraded(desiredEtcdStatus({ ...cluster(1), status: later }, { statefulSet: ready, members: ['kv-0'] })),
    ).toMatchObject({ status: 'False', reason: 'AsExpected' });
    // Only pod failures stand: a refusal or an apply error is judged afresh each time.
    const refused = desiredEtcdStatus(cluster(1), { statefulSet: notReady, members: [], applyError: 'no' });
    expect(
      degraded(desiredEtcdStatus({ ...cluster(1), status: refused }, { statefulSet: notReady, members: [] })),
    ).toMatchObject({ status: 'False' });
  });
});

describe('the final snapshot of a deleted EtcdCluster', () => {
  const owner = {
    apiVersion: 'etcd.database.coreos.com/v1alpha1',
    kind: 'EtcdCluster',
    name: 'kv',
    uid: 'u-kv',
    controller: true,
    blockOwnerDeletion: true,
  };
  const cluster = (backup?: object) =>
    ({
      apiVersion: 'etcd.database.coreos.com/v1alpha1',
      kind: 'EtcdCluster',
      metadata: { name: 'kv', namespace: 'data', uid: 'u-kv', generation: 1 },
      spec: { replicas: 3, version: '3.5.21', storage: '1Gi', ...(backup ? { backup } : {}) },
    }) as any;
  const withFinal = { schedule: '@daily', retention: 7, storage: '5Gi', finalSnapshot: true };

  test('only a cluster asking for one carries the finalizer', () => {
    expect(etcdClusterController.needsFinalizer?.(cluster(withFinal))).toBe(true);
    expect(etcdClusterController.needsFinalizer?.(cluster({ ...withFinal, finalSnapshot: false }))).toBe(false);
    expect(etcdClusterController.needsFinalizer?.(cluster())).toBe(false);
  });

  test('the scheduled snapshot once more: a Job from the backup CronJob it runs, owned by the cluster', async () => {
    const [cronJob] = renderChildren(etcdClusterController, cluster(withFinal)).filter((o) => o.kind === 'CronJob');
    const children = new ChildMap();
    children.set('CronJob/kv-backup', cronJob!);
    const created: any[] = [];
    const outcome = await finalEtcdSnapshot(cluster(withFinal), {
      children,
      owner,
      api: {
        createIfAbsent: async (_t, o) => {
          created.push(o);
          return true;
        },
        getOwn: () => Promise.reject(new Error('the final snapshot reads no Secret')),
        getMadeFor: () => Promise.reject(new Error('the final snapshot reads no Secret')),
        replaceOwn: () => Promise.reject(new Error('the final snapshot changes no Secret')),
      },
      existing: () => undefined,
      signal: new AbortController().signal,
    });
    expect(outcome).toMatchObject({ done: false, reason: 'FinalSnapshotRunning' });
    expect(created).toHaveLength(1);
    const job = created[0];
    expect(() => {
      validateBuiltin(job);
    }).not.toThrow();
    expect(job.metadata).toMatchObject({ name: 'kv-final-backup', namespace: 'data' });
    expect(job.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'EtcdCluster', uid: 'u-kv' })]);
    expect(job.spec).toEqual((cronJob as any).spec.jobTemplate.spec);
    expect(job.spec.template.spec.initContainers[0].command).toContain('snapshot');
    expect(job.spec.template.spec.volumes).toEqual([
      { name: 'backups', persistentVolumeClaim: { claimName: 'kv-backups' } },
      { name: 'client-tls', secret: { secretName: 'kv-client-tls', defaultMode: 0o440 } },
    ]);
  });
});
