import * as fs from 'node:fs';
import * as path from 'node:path';
import { App, Chart, Testing } from 'cdk8s';
import { MongoDbStorage, type MongoDbStorageProps } from '../../../constructs';
import { parseQuantity } from '../../../constructs/contract/quantity';
import { structuralProblems } from '../../../constructs/core/structural';
import { validateBuiltin } from '../../support/builtin-validator';
import { CrdValidator } from '../../support/crd-validator';
import { one, parseYaml, synthProject } from '../../support/synth';

const result = synthProject();
const files = Object.fromEntries(
  Object.entries(result.files).filter(([f]) => f.startsWith('samples/mongodb/') || f.startsWith('crds/mongodb')),
);
const storage = [
  'samples/mongodb/0000-mongodb-storage-volumes.k8s.yaml',
  'samples/mongodb/0001-mongodb-storage.k8s.yaml',
].flatMap((f) => parseYaml(files[f]));
const SEEDS = path.join(__dirname, '..', '..', 'fixtures', 'seeds');

describe('MongoDB storage for seed 000', () => {
  test('matches the snapshot', () => {
    expect(files).toMatchSnapshot();
  });

  test("three 1Gi NFS volumes and three 500Mi claims named as the community operator's StatefulSet claims them", () => {
    const pvs = storage.filter((o) => o.kind === 'PersistentVolume');
    const pvcs = storage.filter((o) => o.kind === 'PersistentVolumeClaim');
    expect(pvcs.map((c) => `${c.metadata.namespace}/${c.metadata.name}`)).toEqual(
      [0, 1, 2].map((i) => `mongodb/data-volume-example-mongodb-${i}`),
    );
    expect(pvs).toHaveLength(3);
    pvs.forEach((pv, i) => {
      expect(pv.metadata.namespace).toBeUndefined();
      expect(pv.spec).toMatchObject({
        capacity: { storage: '1Gi' },
        persistentVolumeReclaimPolicy: 'Retain',
        mountOptions: ['hard', 'nfsvers=4.1'],
        nfs: { server: '192.168.40.180', path: `/data/p${i + 1}` },
        accessModes: ['ReadWriteOnce', 'ReadWriteMany', 'ReadOnlyMany'],
      });
      // Pre-bound both ways: each claim binds its own volume, and no other claim can take it.
      const claim = pvcs[i]!;
      expect(pv.spec.claimRef).toMatchObject({ namespace: 'mongodb', name: claim.metadata.name });
      expect(claim.spec).toMatchObject({
        volumeName: pv.metadata.name,
        storageClassName: '',
        accessModes: ['ReadWriteMany'],
        resources: { requests: { storage: '500Mi' } },
      });
      expect(pv.spec.storageClassName).toBe('');
      expect(pv.metadata.labels).toMatchObject({
        'app.kubernetes.io/instance': 'example-mongodb',
        'cdk8s-operator-kit.io/member': String(i),
      });
    });
    for (const o of storage)
      expect(() => {
        validateBuiltin(o);
      }).not.toThrow();
  });

  test("in a user's namespaced chart: claims in the replica set's namespace, volumes and Namespace in none, all in that chart", () => {
    const chart = new Chart(new App(), 'mine', { namespace: 'elsewhere', labels: { team: 'data' } });
    new MongoDbStorage(chart, 'storage', {
      replicaSetName: 'rs',
      namespace: 'db',
      members: 1,
      data: { capacity: '1Gi', nfs: { server: 'nfs.local', paths: ['/a'] } },
    });
    const objects = Testing.synth(chart);
    expect(objects.map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.labels?.team}`).sort()).toEqual([
      'Namespace/undefined/data',
      'PersistentVolume/undefined/data',
      'PersistentVolumeClaim/db/data',
    ]);
  });

  test('the StorageClass variant makes claims only, logs volumes when asked', () => {
    const app = new App();
    const s = new MongoDbStorage(app, 'db', {
      replicaSetName: 'rs',
      namespace: 'db',
      members: 2,
      data: { storageClassName: 'fast', request: '20Gi' },
      logs: { storageClassName: 'fast', request: '2Gi' },
    });
    expect(s.persistentVolumes).toEqual([]);
    const claims = Chart.of(s).toJson();
    expect(claims.map((c: any) => c.metadata.name)).toEqual([
      'data-volume-rs-0',
      'data-volume-rs-1',
      'logs-volume-rs-0',
      'logs-volume-rs-1',
    ]);
    expect(claims[0].spec).toMatchObject({ storageClassName: 'fast', resources: { requests: { storage: '20Gi' } } });
    expect(claims[0].spec.volumeName).toBeUndefined();
  });

  const base: MongoDbStorageProps = {
    replicaSetName: 'rs',
    namespace: 'db',
    members: 3,
    data: { capacity: '1Gi', request: '500Mi', nfs: { server: 'nfs.local', paths: ['/a', '/b', '/c'] } },
  };
  const invalid: [string, Partial<MongoDbStorageProps>, RegExp][] = [
    [
      'fewer paths than members',
      { data: { nfs: { server: 'n', paths: ['/a', '/b'] } } },
      /has 2 path\(s\) for 3 members/,
    ],
    [
      'a claim larger than its volume',
      { data: { capacity: '1Gi', request: '2Gi', nfs: base.data.nfs } },
      /asks 2Gi but each volume holds 1Gi/,
    ],
    ['a relative path', { data: { nfs: { server: 'n', paths: ['/a', 'b', '/c'] } } }, /"b" is not an absolute path/],
    ['a shared path', { data: { nfs: { server: 'n', paths: ['/a', '/a', '/c'] } } }, /lists one path twice/],
    ['an empty server', { data: { nfs: { server: ' ', paths: ['/a', '/b', '/c'] } } }, /nfs.server is empty/],
    ['neither NFS nor a class', { data: {} }, /give nfs .* or a storageClassName/],
    ['a bad size', { data: { request: '1 GB', nfs: base.data.nfs } }, /"1 GB" is not a Kubernetes quantity/],
    ['claims asking a mode the volumes lack', { claimAccessModes: ['ReadWriteMany'] }, /would never bind/],
    ['an upper-case name', { replicaSetName: 'Example' }, /replicaSetName must be a lower-case DNS name/],
    ['zero members', { members: 0 }, /members must be a whole number from 1 to 50/],
  ];
  test.each(invalid)('rejects %s with a message that says how to fix it', (_what, override, message) => {
    expect(() => new MongoDbStorage(new App(), 'x', { ...base, ...override })).toThrow(message);
  });

  test('quantities compare as sizes', () => {
    expect(parseQuantity('500Mi')).toBe(500 * 2 ** 20);
    expect(parseQuantity('500M')).toBe(5e8);
    expect(parseQuantity('1Gi')).toBeGreaterThan(parseQuantity('1G'));
    expect(parseQuantity('100m')).toBeCloseTo(0.1);
    expect(parseQuantity('1e3')).toBe(1000);
    expect(() => parseQuantity('lots')).toThrow(/not a Kubernetes quantity/);
  });

  test("seed 000's own PVs and PVCs are valid built-in objects", () => {
    for (const f of ['000-nfs-pvs.yaml', '000-mongodb-pvcs.yaml']) {
      const docs = parseYaml(fs.readFileSync(path.join(SEEDS, f), 'utf8'));
      expect(docs).toHaveLength(3);
      for (const d of docs)
        expect(() => {
          validateBuiltin(d);
        }).not.toThrow();
    }
  });
});

describe('the MongoDBCommunity CRD subset and resource', () => {
  const seedGroup = one(
    parseYaml(files['crds/mongodb-com.k8s.yaml']),
    'CustomResourceDefinition',
    'mongodbcommunity.mongodb.com',
  );
  const laterGroup = one(
    parseYaml(files['crds/mongodbcommunity-mongodb-com.k8s.yaml']),
    'CustomResourceDefinition',
    'mongodbcommunity.mongodbcommunity.mongodb.com',
  );
  const sample = parseYaml(files['samples/mongodb/0002-mongodb-replica-set.k8s.yaml'])[0]!;

  test("both groups: the seed's release 0.5.0 (mongodb.com) and later releases", () => {
    for (const crd of [seedGroup, laterGroup]) {
      expect(crd.spec.names).toMatchObject({
        kind: 'MongoDBCommunity',
        plural: 'mongodbcommunity',
        shortNames: ['mdbc'],
      });
      expect(structuralProblems(crd.spec.versions[0].schema.openAPIV3Schema)).toEqual([]);
    }
    expect(seedGroup.spec.group).toBe('mongodb.com');
    expect(laterGroup.spec.group).toBe('mongodbcommunity.mongodb.com');
  });

  test('the typed sample: 3 members, SCRAM, a user whose password is a Secret reference', () => {
    expect(sample).toMatchObject({
      apiVersion: 'mongodb.com/v1',
      kind: 'MongoDBCommunity',
      metadata: { name: 'example-mongodb', namespace: 'mongodb' },
    });
    expect(sample.spec).toMatchObject({
      members: 3,
      type: 'ReplicaSet',
      security: { authentication: { modes: ['SCRAM'] } },
    });
    expect(sample.spec.users[0].passwordSecretRef).toEqual({ name: 'my-user-password' });
    // Every synthesized file but the Prometheus Operator's CRDs as published, whose schemas
    // define a `password` field (of basic auth) and hold no value.
    const ours = Object.entries(result.files).filter(([f]) => f !== 'crds/monitoring-coreos-com.k8s.yaml');
    expect(ours.length).toBe(Object.keys(result.files).length - 1);
    expect(JSON.stringify(Object.fromEntries(ours))).not.toMatch(/"?password"?\s*:\s*"?[^{\s]/i);
    expect(new CrdValidator(seedGroup).validate(sample)).toEqual([]);
  });

  test('the schema rejects a literal password, a missing member count and an unknown type', () => {
    const v = new CrdValidator(seedGroup);
    const withSpec = (spec: object) => ({ ...sample, spec: { ...sample.spec, ...spec } });
    expect(v.validate(withSpec({ users: [{ ...sample.spec.users[0], password: 'hunter2' }] })).join()).toContain(
      'spec.users.0.password: unknown field',
    );
    expect(v.validate({ ...sample, spec: { type: 'ReplicaSet', version: '4.2.6' } }).join()).toContain(
      'spec.members: Required value',
    );
    expect(v.validate(withSpec({ type: 'ShardedCluster' })).join()).toContain('spec.type');
  });
});
