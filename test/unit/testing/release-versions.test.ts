import * as fs from 'node:fs';
import * as path from 'node:path';
import { cacheDirectory, releaseVersions } from '../../../testing/release-binaries';

test('the download path and the build script pin the same releases and fill the same cache directory', () => {
  const script = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'testing', 'build-control-plane.sh'), 'utf8');
  const pinned = (name: string) => new RegExp(`\\$\\{${name}:-(v[\\d.]+)\\}`).exec(script)?.[1];
  expect(releaseVersions({})).toEqual({
    kubernetes: pinned('OPKIT_K8S_VERSION'),
    etcd: pinned('OPKIT_ETCD_VERSION'),
    etcdPrevious: pinned('OPKIT_ETCD_PREVIOUS_VERSION'),
    kwok: pinned('OPKIT_KWOK_VERSION'),
  });
  expect(script).toContain('OUT="$CACHE_ROOT/control-plane-k8s-${K8S_VERSION}-etcd-${ETCD_VERSION}"');
  expect(cacheDirectory(releaseVersions({}), { HOME: '/home/u' })).toBe(
    `/home/u/.cache/cdk8s-operator-kit/control-plane-k8s-${releaseVersions({}).kubernetes}-etcd-${releaseVersions({}).etcd}`,
  );
  expect(cacheDirectory(releaseVersions({}), { OPKIT_CACHE_DIR: '/c' })).toMatch(/^\/c\/control-plane-k8s-/);
});
