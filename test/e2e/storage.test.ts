/**
 * The real node's default StorageClass (testing/node/local-storage.ts): a claim that names no class
 * is provisioned on the node by local-path-provisioner when its first pod is scheduled, holds what
 * one pod wrote for the next, and its directory is removed when the claim is deleted.
 */
import * as fs from 'node:fs';
import { LOCAL_STORAGE } from '../../testing/node/local-storage';
import { createTestNamespace, eventually, getJson, getJsonIfExists, kubectl, kubectlOk } from '../support/kube';
import { nodeScriptInPod } from '../support/pod-script';

const skip = process.env.OPKIT_E2E_SKIP;

jest.setTimeout(180_000);

if (skip) test.todo(`a real node's default StorageClass — skipped: ${skip}`);

(skip ? describe.skip : describe)("a real node's default StorageClass", () => {
  let ns: string;

  beforeAll(() => {
    ns = createTestNamespace('e2e-storage');
    kubectlOk(['create', 'serviceaccount', 'writer', '-n', ns]);
  });

  afterAll(() => {
    if (ns) kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  test('a claim of no class binds on the node, keeps what one pod wrote for the next, and its directory goes with it', async () => {
    const defaultClasses = getJson(['get', 'storageclass']).items.filter(
      (c: any) => c.metadata.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true',
    );
    expect(defaultClasses.map((c: any) => [c.metadata.name, c.provisioner])).toEqual([
      [LOCAL_STORAGE.storageClass, LOCAL_STORAGE.provisioner],
    ]);
    kubectlOk(['apply', '-n', ns, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'data' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '16Mi' } } },
      }),
    });
    const claim = { name: 'data', mountPath: '/data' };
    const wrote = await nodeScriptInPod(
      ns,
      'writer',
      `require('node:fs').writeFileSync('/data/proof', 'written by the first pod'); console.log('wrote');`,
      { claim },
    );
    expect(wrote.trim()).toBe('wrote');
    const read = await nodeScriptInPod(
      ns,
      'writer',
      `console.log(require('node:fs').readFileSync('/data/proof', 'utf8'));`,
      {
        claim,
      },
    );
    expect(read.trim()).toBe('written by the first pod');

    const pvc = getJson(['get', 'pvc', 'data', '-n', ns]);
    expect([pvc.status.phase, pvc.spec.storageClassName]).toEqual(['Bound', LOCAL_STORAGE.storageClass]);
    const pv = getJson(['get', 'pv', pvc.spec.volumeName]);
    const dir: string = pv.spec.hostPath?.path ?? pv.spec.local?.path;
    // On the node, under the run's work directory: taken back with the plane.
    expect(dir.startsWith(`${process.env.OPKIT_E2E_WORK_DIR}/`)).toBe(true);
    expect(fs.readFileSync(`${dir}/proof`, 'utf8')).toBe('written by the first pod');

    // The claim's pods are gone (they ended); deleting it releases the volume, which is deleted with its directory.
    kubectlOk(['delete', 'pods', '--all', '-n', ns]);
    kubectlOk(['delete', 'pvc', 'data', '-n', ns]);
    await eventually(
      'the volume and its directory to be removed',
      () => (!getJsonIfExists(['get', 'pv', pvc.spec.volumeName]) && !fs.existsSync(dir) ? true : undefined),
      90_000,
    );
  });
});
