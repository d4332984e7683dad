import type { KubeObject } from '../../../../constructs/contract';
import type { KubeClient, KubeList, WatchEvent, WatchOptions } from '../../../../operator/runtime/client/client';

export type WatchScript = (emit: (e: WatchEvent) => void, query: Record<string, string>) => Promise<void>;

/**
 * An in-memory stand-in for the list and watch calls of KubeClient: each list answers with the
 * next scripted result; each watch runs the next scripted function (which emits events, then
 * ends the stream, or throws to break it).
 */
export class FakeListWatch {
  readonly lists: (KubeList | Error)[] = [];
  readonly watches: WatchScript[] = [];
  readonly watchQueries: Record<string, string>[] = [];
  /** The idle timeout each watch was opened with: how long it may deliver nothing before it is ended. */
  readonly watchIdleTimeouts: (number | undefined)[] = [];
  readonly listQueries: Record<string, string>[] = [];
  listCalls = 0;

  asClient(): KubeClient {
    return {
      list: async (_t: unknown, _ns: unknown, query: Record<string, string> = {}) => {
        this.listCalls++;
        this.listQueries.push(query);
        const next = this.lists.shift();
        if (!next) throw new Error('no more scripted lists');
        if (next instanceof Error) throw next;
        return next;
      },
      watch: async (_t: unknown, { query, onEvent, signal, onOpen, idleTimeoutMs }: WatchOptions) => {
        this.watchQueries.push(query);
        this.watchIdleTimeouts.push(idleTimeoutMs);
        // Every scripted watch is answered (the server accepted it) before its script runs.
        onOpen?.();
        const next = this.watches.shift();
        if (!next) {
          if (!signal.aborted)
            await new Promise<void>((r) => {
              signal.addEventListener(
                'abort',
                () => {
                  r();
                },
                { once: true },
              );
            });
          return;
        }
        await next(onEvent, query);
      },
    } as unknown as KubeClient;
  }
}

export function obj(name: string, rv: string, namespace = 'ns', extra: Partial<KubeObject> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace, resourceVersion: rv, uid: `uid-${name}` },
    ...extra,
  };
}

export function list(rv: string, items: KubeObject[]): KubeList {
  return { metadata: { resourceVersion: rv }, items };
}
