import { k8s } from 'cdk8s-plus-27';

/**
 * The compute resources of a Job's step (a backup, a restore): a request of `cpu` and `memory`,
 * and a memory limit. No CPU limit: it would only throttle a step that is done sooner unthrottled.
 */
export function stepResources(cpu: string, memory: string, memoryLimit: string): k8s.ResourceRequirements {
  return {
    requests: { cpu: k8s.Quantity.fromString(cpu), memory: k8s.Quantity.fromString(memory) },
    limits: { memory: k8s.Quantity.fromString(memoryLimit) },
  };
}

/** The amounts of a kind's `resources` field (`computeResourcesSchema`) as a container takes them. */
export function quantityMap(amounts?: Record<string, string | number>): Record<string, k8s.Quantity> | undefined {
  return amounts
    ? Object.fromEntries(Object.entries(amounts).map(([k, v]) => [k, k8s.Quantity.fromString(String(v))]))
    : undefined;
}
