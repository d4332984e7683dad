import { Testing } from 'cdk8s';
import { WebSiteResources, webSiteKind } from '../kinds/web-site';

describe('WebSite', () => {
  const webSite = {
    metadata: { name: 'demo', namespace: 'default' },
    spec: { image: 'nginxinc/nginx-unprivileged:1.27-alpine', replicas: 2, port: 8080 },
  };

  test('becomes a Deployment of spec.replicas pods serving spec.port, behind a Service', () => {
    const chart = Testing.chart();
    new WebSiteResources(chart, 'demo', { webSite });
    const objects = Testing.synth(chart);
    const deployment = objects.find((o) => o.kind === 'Deployment');
    expect(deployment.spec.replicas).toBe(2);
    expect(deployment.spec.template.spec.containers[0].ports).toEqual([{ name: 'http', containerPort: 8080 }]);
    const service = objects.find((o) => o.kind === 'Service');
    expect(service.spec.selector).toEqual(deployment.spec.selector.matchLabels);
  });

  test('the CRD refuses a spec out of range, naming the field', () => {
    expect(webSiteKind.specViolations({ replicas: 11 }).join('\n')).toMatch(/spec\.replicas/);
    expect(webSiteKind.specViolations({ replicas: 3 })).toEqual([]);
  });
});
