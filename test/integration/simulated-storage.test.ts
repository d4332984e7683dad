/**
 * The harness's simulated storage (kwok's stages and its own): a claim is bound to a volume made
 * for it — and only for it, when claims are deleted and made again under their names, as a
 * StatefulSet's claim is when an operator discards it with its pod. kwok patches by name and may
 * play a stage from an older view of a claim; the harness's provisioning stage names the claim's
 * uid in every patch so that such a step is refused (testing/kwok-claim-provision-stage.yaml).
 */
import {
  type KubectlResult,
  createTestNamespace,
  eventually,
  getJson,
  kubectlAsync,
  kubectlOk,
  testWithNodes,
} from '../support/kube';

jest.setTimeout(180_000);

let ns: string;

beforeAll(() => {
  ns = createTestNamespace('simulated-storage');
});

afterAll(() => {
  kubectlOk(['delete', 'namespace', ns, '--wait=false']);
});

const claimBody = (name: string, storageClassName: string) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: ns },
    spec: { accessModes: ['ReadWriteOnce'], storageClassName, resources: { requests: { storage: '1Gi' } } },
  });

async function ok(run: Promise<KubectlResult>, what: string): Promise<string> {
  const r = await run;
  if (r.code !== 0) throw new Error(`${what} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

interface Binding {
  readonly uid: string;
  readonly volumeName: string;
  readonly phase: string;
}

async function binding(name: string): Promise<Binding> {
  const claim = JSON.parse(await ok(kubectlAsync(['get', 'pvc', name, '-n', ns, '-o', 'json']), `get pvc ${name}`));
  return { uid: claim.metadata.uid, volumeName: claim.spec.volumeName ?? '', phase: claim.status?.phase ?? '' };
}

/**
 * Waits for claim `name` to be Bound, or bound to a volume not made for it (for good: a claim's
 * volumeName never changes once set), and returns its binding. A claim may be `Lost` for a moment
 * on its way: named its volume before the PV controller has seen that volume.
 */
function bound(name: string): Promise<Binding> {
  return eventually(
    `claim ${name} Bound`,
    async () => {
      const b = await binding(name);
      return b.phase === 'Bound' || (b.volumeName !== '' && b.volumeName !== `pvc-${b.uid}`) ? b : undefined;
    },
    60_000,
  );
}

/**
 * Claim `name`, made, deleted `rounds` times after a short and varying while (some before kwok
 * has bound it, some after), and made again at once; the bindings of the claims made again.
 */
async function remadeClaims(name: string, storageClassName: string, rounds: number): Promise<Binding[]> {
  const seen: Binding[] = [];
  for (let round = 0; round < rounds; round++) {
    await ok(kubectlAsync(['create', '-f', '-'], { input: claimBody(name, storageClassName) }), `create ${name}`);
    await new Promise((r) => setTimeout(r, (round % 4) * 100));
    await ok(kubectlAsync(['delete', 'pvc', name, '-n', ns, '--wait=true']), `delete ${name}`);
    await ok(kubectlAsync(['create', '-f', '-'], { input: claimBody(name, storageClassName) }), `create ${name} again`);
    seen.push(await bound(name));
    await ok(kubectlAsync(['delete', 'pvc', name, '-n', ns, '--wait=true']), `delete ${name}`);
  }
  return seen;
}

testWithNodes(
  'a claim deleted and made again under its name is bound to a volume made for it, never to its predecessor’s',
  async () => {
    const bindings = (
      await Promise.all(
        [
          'kwok-volume',
          'kwok-volume-expandable',
          'kwok-volume',
          'kwok-volume-expandable',
          'kwok-volume',
          'kwok-volume',
        ].map((storageClass, i) => remadeClaims(`data-${i}`, storageClass, 8)),
      )
    ).flat();
    expect(bindings).toHaveLength(48);
    const wrong = bindings.filter((b) => b.phase !== 'Bound' || b.volumeName !== `pvc-${b.uid}`);
    expect(wrong).toEqual([]);
  },
);

testWithNodes(
  'the ground the provisioning stage stands on: a patch naming another uid is refused, on the claim and on its status; the claim keeps its binding',
  async () => {
    await ok(kubectlAsync(['create', '-f', '-'], { input: claimBody('guarded', 'kwok-volume') }), 'create guarded');
    const own = await bound('guarded');
    expect(own.volumeName).toBe(`pvc-${own.uid}`);
    const predecessor = '00000000-0000-4000-8000-000000000000';
    const onObject = await kubectlAsync([
      'patch',
      'pvc',
      'guarded',
      '-n',
      ns,
      '--type=merge',
      '-p',
      JSON.stringify({ metadata: { uid: predecessor, annotations: { 'pv.kubernetes.io/bind-completed': 'yes' } } }),
    ]);
    expect(onObject.code).not.toBe(0);
    expect(onObject.stderr).toContain('metadata.uid');
    const onStatus = await kubectlAsync([
      'patch',
      'pvc',
      'guarded',
      '-n',
      ns,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ metadata: { uid: predecessor }, status: { phase: 'Pending' } }),
    ]);
    expect(onStatus.code).not.toBe(0);
    expect(onStatus.stderr).toContain('metadata.uid');
    const after = getJson(['get', 'pvc', 'guarded', '-n', ns]);
    expect([after.metadata.uid, after.spec.volumeName, after.status.phase]).toEqual([own.uid, own.volumeName, 'Bound']);
  },
);
