import { Testing } from 'cdk8s';
import { platform } from '../app';

describe('the platform chart', () => {
  const app = Testing.app();
  const { cluster, chart } = platform(app);
  const objects = Testing.synth(chart);
  const clusterObjects = Testing.synth(cluster);

  test('matches the snapshot', () => {
    expect({ cluster: clusterObjects, platform: objects }).toMatchSnapshot();
  });

  test('three operators, each in its namespace, every object labelled for the team', () => {
    expect(
      objects
        .filter((o) => o.kind === 'Deployment')
        .map((o) => `${o.metadata.namespace}/${o.metadata.name}`)
        .sort(),
    ).toEqual(['cache-system/cache-operator', 'databases/db-operator', 'greeting-system/greeting-operator']);
    for (const o of objects) expect(o.metadata.labels?.team).toBe('platform');
  });

  test('the cluster-scoped objects are in their own chart, which the platform chart depends on', () => {
    expect(
      clusterObjects
        .filter((o) => o.kind === 'CustomResourceDefinition')
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(['databases.database.example.com', 'greetings.platform.example.com', 'memcacheds.cache.example.com']);
    expect(chart.node.dependencies).toContain(cluster);
  });

  test('the Greeting operator may manage exactly what its construct makes', () => {
    const role = clusterObjects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'greeting-manager-role');
    const resources = role.rules.flatMap((r: { resources: string[] }) => r.resources);
    expect(resources).toEqual(expect.arrayContaining(['configmaps', 'deployments', 'greetings', 'greetings/status']));
    expect(resources).not.toContain('secrets');
  });

  test("the Greeting's two versions have their own schemas, converted by the Greeting operator's webhook", () => {
    const crd = clusterObjects.find((o) => o.metadata.name === 'greetings.platform.example.com');
    const fields = (v: { schema: { openAPIV3Schema: { properties: { spec: { properties: object } } } } }) =>
      Object.keys(v.schema.openAPIV3Schema.properties.spec.properties).sort();
    expect(
      crd.spec.versions.map((v: { name: string; storage: boolean }) => [v.name, v.storage, fields(v as never)]),
    ).toEqual([
      ['v1alpha1', false, ['text']],
      ['v1', true, ['message', 'replicas']],
    ]);
    const service = objects.find(
      (o) => o.kind === 'Service' && o.metadata.name === crd.spec.conversion.webhook.clientConfig.service.name,
    );
    expect(service.metadata.namespace).toBe('greeting-system');
    expect(crd.spec.conversion.webhook.clientConfig.service.path).toBe('/convert');
  });
});
