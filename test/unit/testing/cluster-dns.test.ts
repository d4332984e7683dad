import { CLUSTER_DNS, corefile } from '../../../testing/node/cluster-dns';
import { NODE_NETWORK } from '../../../testing/node/network';

describe("the real node's cluster DNS", () => {
  const conf = corefile({ kubeconfig: '/run/plane/admin.kubeconfig', readyPort: 40123 });

  test('listens only on the node bridge address, serving the cluster zone and the reverse zones from the API server', () => {
    expect(CLUSTER_DNS.address).toBe(NODE_NETWORK.gateway);
    expect(conf.split('\n')[0]).toBe('cluster.local:53 in-addr.arpa:53 ip6.arpa:53 {');
    expect(conf).toContain(`bind ${NODE_NETWORK.gateway}\n`);
    expect(conf).toMatch(
      /kubernetes cluster\.local in-addr\.arpa ip6\.arpa \{\n\s+kubeconfig \/run\/plane\/admin\.kubeconfig\n/,
    );
    expect(conf).toContain('ready 127.0.0.1:40123\n');
  });

  test('has one server block and nothing that forwards or resolves names outside the cluster', () => {
    expect(conf.match(/\{\n/g)).toHaveLength(2);
    expect(conf).not.toMatch(/\b(forward|proxy|grpc|resolv\.conf)\b/);
    expect(conf).not.toMatch(/^\.:53/m);
  });
});
