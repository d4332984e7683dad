import * as path from 'node:path';
import { eventually, getJson, kubectl, kubectlOk } from '../support/kube';

const ROOT = path.resolve(__dirname, '..', '..');
const SAMPLE = path.join(ROOT, 'dist', 'samples', 'mongodb');
const SEEDS = path.join(ROOT, 'test', 'fixtures', 'seeds');

jest.setTimeout(120_000);

describe('MongoDB storage and the MongoDBCommunity resource on a real API server', () => {
  test("seed 000's own PVs and PVCs are accepted by the API server verbatim", () => {
    kubectlOk(['create', 'namespace', 'mongodb']);
    // Server-side dry run: full admission and validation, nothing stored, so they do not take
    // the claim names our storage uses next.
    for (const f of ['000-nfs-pvs.yaml', '000-mongodb-pvcs.yaml']) {
      const r = kubectl(['create', '--dry-run=server', '-f', path.join(SEEDS, f)]);
      expect({ f, code: r.code, stderr: r.stderr }).toEqual({ f, code: 0, stderr: '' });
      expect(r.stdout.trim().split('\n')).toHaveLength(3);
    }
  });

  test('the NFS volumes and claims apply, and each claim binds to its own volume', async () => {
    kubectlOk(['apply', '-f', path.join(SAMPLE, '0000-mongodb-storage-volumes.k8s.yaml')]);
    kubectlOk(['apply', '-f', path.join(SAMPLE, '0001-mongodb-storage.k8s.yaml')]);
    // The PersistentVolume controller in kube-controller-manager does the binding.
    const claims = await eventually(
      'three Bound claims',
      () => {
        const items = getJson(['get', 'pvc', '-n', 'mongodb']).items;
        return items.length === 3 && items.every((c: any) => c.status?.phase === 'Bound') ? items : undefined;
      },
      60_000,
    );
    for (const claim of claims) {
      const pv = getJson(['get', 'pv', claim.spec.volumeName]);
      expect(pv.status.phase).toBe('Bound');
      expect(pv.spec.claimRef).toMatchObject({
        namespace: 'mongodb',
        name: claim.metadata.name,
        uid: claim.metadata.uid,
      });
      expect(claim.status.capacity.storage).toBe('1Gi');
    }
    expect(new Set(claims.map((c: any) => c.spec.volumeName)).size).toBe(3);
  });

  test('the MongoDBCommunity CRD subset installs under both groups and the typed sample is accepted', () => {
    for (const f of ['mongodb-com.k8s.yaml', 'mongodbcommunity-mongodb-com.k8s.yaml']) {
      kubectlOk(['apply', '--server-side', '-f', path.join(ROOT, 'dist', 'crds', f)]);
    }
    kubectlOk([
      'wait',
      '--for',
      'condition=established',
      '--timeout=60s',
      'crd/mongodbcommunity.mongodb.com',
      'crd/mongodbcommunity.mongodbcommunity.mongodb.com',
    ]);
    kubectlOk(['apply', '-f', path.join(SAMPLE, '0002-mongodb-replica-set.k8s.yaml')]);
    const mdb = getJson(['get', 'mongodbcommunity.mongodb.com', 'example-mongodb', '-n', 'mongodb']);
    expect(mdb.spec.users[0].passwordSecretRef).toEqual({ name: 'my-user-password' });
    const bad = kubectl(['create', '-n', 'mongodb', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'mongodb.com/v1',
        kind: 'MongoDBCommunity',
        metadata: { name: 'bad' },
        spec: { type: 'ReplicaSet', version: '4.2.6' },
      }),
    });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('spec.members');
  });
});
