/**
 * How `run` passes a Ctrl-C on to the reconciler it started.
 *
 * The reconciler takes its first SIGINT/SIGTERM as "shut down gracefully" and a second as "exit
 * now". One Ctrl-C can reach `run` twice: from the terminal (the foreground process group) and
 * again from npm, which forwards the signals it gets to the script it runs. Passing both on would
 * turn one Ctrl-C into a forced exit, so a signal repeated within a moment is the same request.
 */
import type { EventEmitter } from 'node:events';

/** Repeats closer than this are one request; a person pressing Ctrl-C again takes longer. */
export const SAME_REQUEST_MS = 1000;

export interface SignalTarget {
  kill(signal: NodeJS.Signals): boolean;
}

/** Forwards SIGINT and SIGTERM from `source` (the process) to `target`, one per request. */
export function forwardSignals(
  target: SignalTarget,
  source: Pick<EventEmitter, 'on'> = process,
  now: () => number = Date.now,
): void {
  let last = Number.NEGATIVE_INFINITY;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    source.on(signal, () => {
      const at = now();
      if (at - last < SAME_REQUEST_MS) return;
      last = at;
      target.kill(signal);
    });
  }
}
