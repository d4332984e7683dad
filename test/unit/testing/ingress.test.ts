import { parse } from 'yaml';
import { traefikConfig } from '../../../testing/node/ingress';

describe("the real node's ingress controller (Traefik)", () => {
  const config = parse(traefikConfig({ web: 40001, ping: 40002 }));

  test('serves on loopback only, at the ports it was given', () => {
    expect(config.entryPoints).toEqual({ web: { address: '127.0.0.1:40001' }, ping: { address: '127.0.0.1:40002' } });
    expect(config.ping).toEqual({ entryPoint: 'ping' });
  });

  test('never calls off this machine: no update check, no usage report', () => {
    expect(config.global).toEqual({ checkNewVersion: false, sendAnonymousUsage: false });
    expect(Object.keys(config.providers)).toEqual(['kubernetesIngress']);
  });
});
