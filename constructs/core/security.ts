import { ApiObject, JsonPatch } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';

/** The uid/gid of the distroless "nonroot" user, which the reconciler image runs as. */
export const NON_ROOT_UID = 65532;

/** Pod-level settings that satisfy the `restricted` Pod Security Standard. */
export function restrictedPodSecurityContext(uid = NON_ROOT_UID): kplus.k8s.PodSecurityContext {
  return {
    runAsNonRoot: true,
    runAsUser: uid,
    runAsGroup: uid,
    fsGroup: uid,
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

/** Container-level settings that satisfy the `restricted` Pod Security Standard. */
export function restrictedContainerSecurityContext(
  options: { readOnlyRootFilesystem?: boolean } = {},
): kplus.k8s.SecurityContext {
  return {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    readOnlyRootFilesystem: options.readOnlyRootFilesystem ?? true,
    runAsNonRoot: true,
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

/**
 * Makes a cdk8s-plus workload meet the `restricted` Pod Security Standard. cdk8s-plus already
 * runs containers as non-root, with a read-only root and no privilege escalation; version 27 has
 * no seccomp setting and cannot drop capability `ALL` (its capability names carry a `CAP_` prefix
 * Kubernetes does not take). This adds both as JSON patches, the escape hatch every cdk8s
 * construct has. Call it after the workload's last container is added: the patches address
 * containers by position.
 */
export function restrictPodSecurity(workload: kplus.AbstractPod): void {
  const podSpec = podSpecPath(workload);
  const dropAll = (list: string, index: number): JsonPatch =>
    JsonPatch.add(`${podSpec}/${list}/${index}/securityContext/capabilities`, { drop: ['ALL'] });
  ApiObject.of(workload).addJsonPatch(
    JsonPatch.add(`${podSpec}/securityContext/seccompProfile`, { type: 'RuntimeDefault' }),
    ...workload.initContainers.map((_, i) => dropAll('initContainers', i)),
    ...workload.containers.map((_, i) => dropAll('containers', i)),
  );
}

/** Where a workload's pod spec sits in its manifest. */
function podSpecPath(workload: kplus.AbstractPod): string {
  if (workload instanceof kplus.Pod) return '/spec';
  if (workload instanceof kplus.CronJob) return '/spec/jobTemplate/spec/template/spec';
  return '/spec/template/spec';
}
