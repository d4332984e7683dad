import type { KubeObject } from '../../../constructs/contract';
import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { BuiltinTypes } from '../../../constructs/contract';
import { type KubeClient, microTime } from '../client';

export type EventType = 'Normal' | 'Warning';

/** What `record` needs to know about the object an Event is about. */
export interface EventSubject {
  apiVersion?: string;
  kind?: string;
  metadata: KubeObject['metadata'];
}

/** Repeats of the same event within this window become a series count, not a new object. */
const SERIES_WINDOW_MS = 10 * 60 * 1000;

/**
 * Records events.k8s.io/v1 Events about objects, like client-go's recorder: one Event object
 * per distinct (object, type, reason, note), with repeats folded into `series`. Failures to
 * record are logged, never thrown: an Event is information, not part of the reconcile.
 */
export class EventRecorder {
  private readonly recent = new Map<string, { name: string; namespace: string; count: number; at: number }>();

  constructor(
    private readonly client: KubeClient,
    private readonly reportingController: string,
    private readonly reportingInstance: string,
    private readonly logger: Logger,
  ) {
    // The API server requires a qualified name here (e.g. `example.com/my-controller`).
    if (
      !/^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/.test(reportingController) ||
      reportingController.length > 128
    ) {
      throw new Error(
        `reportingController ${JSON.stringify(reportingController)} is not a qualified name such as "cdk8s-operator-kit/memcached"`,
      );
    }
  }

  async record(
    subject: EventSubject,
    type: EventType,
    reason: string,
    note: string,
    action = 'Reconcile',
  ): Promise<void> {
    const namespace = subject.metadata.namespace ?? 'default';
    // A digest, not the text: a thousand resources' notes are most of what this map would hold.
    const key = createHash('sha256').update(`${subject.metadata.uid}|${type}|${reason}|${note}`).digest('base64');
    const now = new Date();
    const seen = this.recent.get(key);
    try {
      if (seen && now.getTime() - seen.at < SERIES_WINDOW_MS) {
        seen.count++;
        seen.at = now.getTime();
        await this.client.mergePatch(BuiltinTypes.Event, seen.name, seen.namespace, {
          series: { count: seen.count, lastObservedTime: microTime(now) },
        });
        return;
      }
      const name = `${subject.metadata.name}.${randomBytes(8).toString('hex')}`;
      await this.client.create(
        BuiltinTypes.Event,
        {
          apiVersion: 'events.k8s.io/v1',
          kind: 'Event',
          metadata: { name, namespace },
          eventTime: microTime(now),
          reportingController: this.reportingController,
          reportingInstance: this.reportingInstance,
          action,
          reason,
          note: note.slice(0, 1024),
          type,
          regarding: {
            apiVersion: subject.apiVersion,
            kind: subject.kind,
            name: subject.metadata.name,
            namespace: subject.metadata.namespace,
            uid: subject.metadata.uid,
            resourceVersion: subject.metadata.resourceVersion,
          },
        },
        namespace,
      );
      this.recent.set(key, { name, namespace, count: 1, at: now.getTime() });
      this.prune(now.getTime());
    } catch (err) {
      this.logger.warn({ err, reason, object: subject.metadata.name }, 'could not record event');
    }
  }

  private prune(now: number): void {
    if (this.recent.size < 1000) return;
    for (const [k, v] of this.recent) if (now - v.at > SERIES_WINDOW_MS) this.recent.delete(k);
  }
}
