import { localEndpoints } from '../../../command/verbs/run';
import { parseFlags } from '../../../operator/flags';

describe('a reconciler run out of cluster takes no fixed port', () => {
  test('--webhook-loopback serves the webhooks on a free loopback port unless one is given', () => {
    expect(parseFlags(['--webhook-loopback'], ['memcached']).webhookBindAddress).toBe('127.0.0.1:0');
    expect(
      parseFlags(['--webhook-loopback', '--webhook-bind-address=127.0.0.1:19443'], ['memcached']).webhookBindAddress,
    ).toBe('127.0.0.1:19443');
    // In a cluster the webhook Service targets the container's port 9443.
    expect(parseFlags([], ['memcached']).webhookBindAddress).toBe(':9443');
  });

  test('`run` gives health and metrics a free loopback port, and keeps the ones the user names', () => {
    expect(localEndpoints([])).toEqual([
      '--health-probe-bind-address=127.0.0.1:0',
      '--metrics-bind-address=127.0.0.1:0',
    ]);
    expect(localEndpoints(['--namespace=dev', '--metrics-bind-address=:9090'])).toEqual([
      '--health-probe-bind-address=127.0.0.1:0',
    ]);
    expect(localEndpoints(['--health-probe-bind-address', ':8081', '--metrics-bind-address=0'])).toEqual([]);
  });
});
