/**
 * A kind's external step previewed for `plan` and `diff`: run as the reconciler runs it, its
 * first write recorded and not made, what it cannot reach said, the pods it restarts planned.
 */
import { ApiObject } from 'cdk8s';
import type { Construct } from 'constructs';
import { BuiltinTypes, type ControllerDeclaration, type ExternalContext } from '../../../../constructs/contract';
import { listForPreview, previewExternal, previewPlan } from '../../../../operator/runtime/plan';
import { FakeKubeClient } from '../../../../testing/fake-kube-client';

const resource = {
  apiVersion: 'example.com/v1',
  kind: 'Thing',
  metadata: { name: 't', namespace: 'ns', uid: 'u-t' },
  spec: {},
};

/** A declaration whose external step is `external`, reading pods. */
function declaration(external: (context: ExternalContext) => Promise<object>): ControllerDeclaration {
  return {
    name: 'thing',
    for: { group: 'example.com', version: 'v1', kind: 'Thing', plural: 'things', namespaced: true },
    owns: [BuiltinTypes.StatefulSet],
    reads: [BuiltinTypes.Pod],
    external: (_r: unknown, _c: unknown, context: ExternalContext) => external(context),
    // Its StatefulSet `t`: the pods it restarts must be of it.
    render: (scope: Construct) => {
      new ApiObject(scope, 'sts', {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 't' },
        spec: { selector: { matchLabels: { app: 't' } }, serviceName: 't', template: {} },
      });
    },
    status: () => ({}),
  } as unknown as ControllerDeclaration;
}

async function preview(decl: ControllerDeclaration, client = new FakeKubeClient()) {
  const reads = await listForPreview(decl, async (type) => (await client.list(type, 'ns')).items);
  return previewExternal(decl, client, resource, reads);
}

test('the first write is recorded, not made; what the step does after it is not run', async () => {
  const made: string[] = [];
  const decl = declaration(async (context) => {
    await context.write({ system: 'store', action: 'AddNode', target: 'n-3', reason: 'asked for 4' }, async () => {
      made.push('AddNode');
    });
    made.push('after the write');
    return { facts: {} };
  });
  await expect(preview(decl)).resolves.toEqual({
    writes: [{ system: 'store', action: 'AddNode', target: 'n-3', reason: 'asked for 4' }],
    restartPods: [],
    labelPods: [],
  });
  expect(made).toEqual([]);
});

test("a step that handles its write's error sees the stop signal, as the gate's, and the write is still recorded", async () => {
  const decl = declaration(async (context) => {
    try {
      await context.write({ system: 'store', action: 'Promote', target: 'n-1', reason: 'caught up' }, () =>
        Promise.resolve(),
      );
    } catch (err) {
      if (context.signal.aborted) throw err;
      return { facts: { failed: true } };
    }
    return { facts: {} };
  });
  await expect(preview(decl)).resolves.toMatchObject({
    writes: [{ action: 'Promote', target: 'n-1' }],
  });
});

test('a step whose system does not answer says so; an error is said too; none writes', async () => {
  const away = declaration(async () => ({ facts: {}, outOfReach: 'no node answers (asked n-0)' }));
  await expect(preview(away)).resolves.toEqual({
    writes: [],
    restartPods: [],
    labelPods: [],
    unavailable: 'no node answers (asked n-0)',
  });
  const broken = declaration(() => Promise.reject(new Error('certificate expired')));
  await expect(preview(broken)).resolves.toEqual({
    writes: [],
    restartPods: [],
    labelPods: [],
    unavailable: 'certificate expired',
  });
});

test("the step's cache reads are the listed objects of its reads types, in the resource's namespace", async () => {
  const client = new FakeKubeClient();
  client.seed(
    BuiltinTypes.Pod,
    { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns', labels: { app: 't' } } },
    { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'q', namespace: 'other', labels: { app: 't' } } },
  );
  let seen: string[] = [];
  const decl = declaration(async (context) => {
    seen = context.read(BuiltinTypes.Pod, { app: 't' }).map((p) => p.metadata.name ?? '');
    return { facts: {} };
  });
  await preview(decl, client);
  expect(seen).toEqual(['p']);
});

test('the pods it would restart are RestartPod actions of the plan, for pods of its own StatefulSets only', async () => {
  const client = new FakeKubeClient();
  const sts = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: {
      name: 't',
      namespace: 'ns',
      uid: 'u-sts',
      ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Thing', name: 't', uid: 'u-t', controller: true }],
    },
    spec: { selector: { matchLabels: { app: 't' } }, serviceName: 't', template: {} },
  };
  client.seed(BuiltinTypes.StatefulSet, sts);
  const pod = (name: string, uid: string, owner: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'ns',
      uid,
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 't', uid: owner, controller: true }],
    },
  });
  client.seed(BuiltinTypes.Pod, pod('t-0', 'p0', 'u-sts'), pod('x-0', 'px', 'someone-else'));
  const decl = declaration(async () => ({
    facts: {},
    restartPods: [
      { name: 't-0', uid: 'p0', reason: 'to read its new configuration' },
      { name: 'x-0', uid: 'px', reason: 'not ours' },
    ],
  }));
  const reads = await listForPreview(decl, async (type) => (await client.list(type, 'ns')).items);
  const external = await previewExternal(decl, client, resource, reads);
  const planned = await previewPlan(decl, client, resource, reads, external);
  expect(planned.plan?.restartPods.map((r) => [r.type, r.key, r.reason])).toEqual([
    ['RestartPod', 'Pod/t-0', 'to read its new configuration'],
  ]);
  expect(client.writes).toEqual([]);
});
