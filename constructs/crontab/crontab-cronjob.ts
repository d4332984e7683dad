import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { standardLabels } from '../core/labels';
import { NON_ROOT_UID, restrictedContainerSecurityContext, restrictedPodSecurityContext } from '../core/security';
import { cronJobSchedule, type CronTabSpec } from './api';

export interface CronTabCronJobProps {
  readonly name: string;
  /** The CronJob's namespace. @default the chart's namespace, if it has one */
  readonly namespace?: string;
  /** The spec, with the API server's defaults applied. */
  readonly spec: CronTabSpec;
  /** Controller owner reference to the CronTab: deleting it deletes the CronJob. @default none (a static render) */
  readonly owner?: k8s.OwnerReference;
  /** @default 'crontab-operator' */
  readonly managedBy?: string;
}

/**
 * The batch/v1 CronJob that runs a CronTab: its schedule (to the minute), its image, `replicas`
 * pods per run, no overlapping runs, bounded history, restricted pods.
 */
export class CronTabCronJob extends Construct {
  readonly cronJob: k8s.KubeCronJob;

  constructor(scope: Construct, id: string, props: CronTabCronJobProps) {
    super(scope, id);
    const labels = standardLabels({
      name: 'crontab',
      instance: props.name,
      component: 'job',
      managedBy: props.managedBy ?? 'crontab-operator',
    });
    this.cronJob = new k8s.KubeCronJob(this, 'Resource', {
      metadata: {
        name: props.name,
        namespace: props.namespace,
        labels,
        ownerReferences: props.owner ? [props.owner] : undefined,
      },
      spec: {
        schedule: cronJobSchedule(props.spec.cronSpec).schedule,
        concurrencyPolicy: 'Forbid',
        successfulJobsHistoryLimit: 3,
        failedJobsHistoryLimit: 1,
        jobTemplate: {
          metadata: { labels },
          spec: {
            parallelism: props.spec.replicas,
            completions: props.spec.replicas,
            backoffLimit: 2,
            template: {
              metadata: { labels },
              spec: {
                restartPolicy: 'OnFailure',
                automountServiceAccountToken: false,
                securityContext: restrictedPodSecurityContext(NON_ROOT_UID),
                containers: [
                  {
                    name: 'task',
                    image: props.spec.image,
                    resources: {
                      requests: { cpu: k8s.Quantity.fromString('10m'), memory: k8s.Quantity.fromString('32Mi') },
                      limits: { memory: k8s.Quantity.fromString('128Mi') },
                    },
                    securityContext: restrictedContainerSecurityContext(),
                  },
                ],
              },
            },
          },
        },
      },
    });
  }
}
