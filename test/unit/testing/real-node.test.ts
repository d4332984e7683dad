import { inCidr, parseCidr, readyEndpoint, servicePortName } from '../../../testing/node/endpoints';
import { normalisedImageName } from '../../../testing/node/images';
import { cniConfig, NODE_NETWORK } from '../../../testing/node/network';

describe("a real node's network", () => {
  test('pods get an address on the bridge and a route to the Service range only: no default route', () => {
    const config = cniConfig('/node/cni-ipam') as any;
    const bridge = config.plugins[0];
    expect(bridge).toMatchObject({ type: 'bridge', bridge: NODE_NETWORK.bridge, ipMasq: false });
    expect(bridge.ipam.ranges).toEqual([[{ subnet: NODE_NETWORK.cidr, gateway: NODE_NETWORK.gateway }]]);
    expect(bridge.ipam.routes).toEqual([{ dst: NODE_NETWORK.serviceCidr }]);
    expect(JSON.stringify(config)).not.toContain('0.0.0.0/0');
  });

  test("the addresses given to pods are recorded in the node's own directory, not in one every node shares", () => {
    const config = cniConfig('/run/node-a/cni-ipam') as any;
    expect(config.plugins[0].ipam).toMatchObject({ type: 'host-local', dataDir: '/run/node-a/cni-ipam' });
  });

  test("the pods' subnet holds the gateway, and is clear of the Service range and kwok's pod addresses", () => {
    const pods = parseCidr(NODE_NETWORK.cidr)!;
    expect(inCidr(NODE_NETWORK.gateway, pods)).toBe(true);
    expect(inCidr('10.0.0.1', pods)).toBe(false);
    expect(inCidr('10.244.0.5', pods)).toBe(false);
  });
});

describe('CIDRs', () => {
  test.each([
    ['10.250.0.7', '10.250.0.0/24', true],
    ['10.250.1.7', '10.250.0.0/24', false],
    ['10.0.0.255', '10.0.0.0/24', true],
    ['192.0.2.2', '0.0.0.0/0', true],
    ['not-an-ip', '10.0.0.0/8', false],
  ])('%s in %s: %s', (ip, cidr, inside) => {
    expect(inCidr(ip, parseCidr(cidr)!)).toBe(inside);
  });

  test.each(['', '10.0.0.0', '10.0.0.0/33', 'fd00::/64', '10.0.0/24'])('%j is not an IPv4 CIDR', (text) => {
    expect(parseCidr(text)).toBeUndefined();
  });
});

describe("a Service's ready endpoint (where the egress proxy takes the API server's call)", () => {
  const service = { spec: { ports: [{ name: 'https', port: 443, targetPort: 'webhook' }] } };
  const slices = (endpoints: object[], ports = [{ name: 'https', port: 9443 }]) => ({
    items: [{ ports, endpoints }],
  });

  test("the Service port's name picks the slice's target port", () => {
    expect(servicePortName(service, 443)).toBe('https');
    expect(servicePortName(service, 80)).toBeUndefined();
    expect(servicePortName({ spec: { ports: [{ port: 80 }] } }, 80)).toBe('');
    const ready = slices([{ addresses: ['10.250.0.4'], conditions: { ready: true } }]);
    expect(readyEndpoint(ready, 'https')).toBe('10.250.0.4:9443');
    expect(readyEndpoint(ready, 'metrics')).toBeUndefined();
  });

  test('an endpoint that is not ready is passed over; none ready, none at all', () => {
    const some = slices([
      { addresses: ['10.250.0.4'], conditions: { ready: false } },
      { addresses: ['10.250.0.5'], conditions: { ready: true } },
    ]);
    expect(readyEndpoint(some, 'https')).toBe('10.250.0.5:9443');
    expect(
      readyEndpoint(slices([{ addresses: ['10.250.0.4'], conditions: { ready: false } }]), 'https'),
    ).toBeUndefined();
    expect(readyEndpoint({ items: [] }, 'https')).toBeUndefined();
    expect(readyEndpoint(undefined, 'https')).toBeUndefined();
  });
});

describe('image names the kubelet asks for', () => {
  test.each([
    ['memcached:1.6', 'docker.io/library/memcached:1.6'],
    ['cdk8s-operator-kit/reconciler:0.1.0', 'docker.io/cdk8s-operator-kit/reconciler:0.1.0'],
    ['opkit.local/pause:1', 'opkit.local/pause:1'],
    ['localhost/app:1', 'localhost/app:1'],
    ['registry:5000/app:1', 'registry:5000/app:1'],
  ])('%s → %s', (name, full) => {
    expect(normalisedImageName(name)).toBe(full);
  });
});
