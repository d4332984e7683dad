import { BuiltinTypes, type KubeObject } from '../../../../constructs/contract';
import { getOwn, prepareApi } from '../../../../operator/runtime/reconcile/controller-parts';
import { FakeKubeClient } from '../../../../testing/fake-kube-client';

/** A Secret in `prod`, controlled by the resource of `uid` (or by nothing). */
function secret(name: string, controller?: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name,
      namespace: 'prod',
      ownerReferences: controller
        ? [
            {
              apiVersion: 'etcd.database.coreos.com/v1alpha1',
              kind: 'EtcdCluster',
              name: 'kv',
              uid: controller,
              controller: true,
            },
          ]
        : undefined,
    },
    data: { 'tls.key': Buffer.from('secret key').toString('base64') },
  };
}

const keptBy = { uid: 'uid-kv', namespace: 'prod', keeps: [BuiltinTypes.Secret] };

function client(): FakeKubeClient {
  const c = new FakeKubeClient();
  c.seed(BuiltinTypes.Secret, secret('kv-ca', 'uid-kv'), secret('app-password'), secret('other-ca', 'uid-other'));
  return c;
}

test("an object the resource controls is handed over; another's, or one controlled by nothing, only as foreign", async () => {
  const c = client();
  const own = await getOwn(c, BuiltinTypes.Secret, 'kv-ca', keptBy);
  expect(own.state).toBe('own');
  expect(own.state === 'own' && own.object.metadata.name).toBe('kv-ca');
  // Neither content nor metadata of what the resource did not make.
  await expect(getOwn(c, BuiltinTypes.Secret, 'app-password', keptBy)).resolves.toEqual({ state: 'foreign' });
  await expect(getOwn(c, BuiltinTypes.Secret, 'other-ca', keptBy)).resolves.toEqual({ state: 'foreign' });
  await expect(getOwn(c, BuiltinTypes.Secret, 'nothing', keptBy)).resolves.toEqual({ state: 'absent' });
});

test('a type the declaration does not keep is neither read nor replaced', async () => {
  const c = client();
  await expect(getOwn(c, BuiltinTypes.ConfigMap, 'kv-ca', keptBy)).rejects.toThrow(/not among the declaration's keeps/);
  await expect(getOwn(c, BuiltinTypes.Secret, 'kv-ca', undefined)).rejects.toThrow(/not among/);
});

test("replaceOwn changes the resource's own object, never another's, and nothing after the stop signal", async () => {
  const c = client();
  const api = prepareApi(c, new AbortController().signal, keptBy);
  const own = await api.getOwn(BuiltinTypes.Secret, 'kv-ca');
  if (own.state !== 'own') throw new Error('expected its own Secret');
  const renewed = { ...own.object, data: { 'tls.key': Buffer.from('renewed').toString('base64') } };
  await api.replaceOwn(BuiltinTypes.Secret, renewed);
  expect((c.peek(BuiltinTypes.Secret, 'kv-ca', 'prod') as { data?: Record<string, string> }).data).toEqual(
    renewed.data,
  );

  // An object made up to look like one the resource did not make: refused before any request.
  const forged = { ...secret('app-password'), data: {} };
  await expect(api.replaceOwn(BuiltinTypes.Secret, forged)).rejects.toThrow(/not the resource's own/);
  expect((c.peek(BuiltinTypes.Secret, 'app-password', 'prod') as { data?: Record<string, string> }).data).toEqual(
    secret('app-password').data,
  );
  // Its own, in another namespace: refused as well.
  const elsewhere = {
    ...secret('kv-ca', 'uid-kv'),
    metadata: { ...secret('kv-ca', 'uid-kv').metadata, namespace: 'dev' },
  };
  await expect(api.replaceOwn(BuiltinTypes.Secret, elsewhere)).rejects.toThrow(/not the resource's own/);

  const stop = new AbortController();
  stop.abort(new Error('leadership lost'));
  const stopped = prepareApi(c, stop.signal, keptBy);
  await expect(stopped.replaceOwn(BuiltinTypes.Secret, { ...own.object, data: {} })).rejects.toThrow('leadership lost');
  expect((c.peek(BuiltinTypes.Secret, 'kv-ca', 'prod') as { data?: Record<string, string> }).data).toEqual(
    renewed.data,
  );
});
