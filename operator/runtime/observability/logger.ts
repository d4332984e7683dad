import pino, { type Logger } from 'pino';
import { isJsonObject } from '../../../constructs/contract/json';

export type { Logger };

/** How log lines are written: JSON for log pipelines (the default), text for a terminal. */
export type LogFormat = 'json' | 'text';

/**
 * Logs on stdout, one line per entry: JSON objects as controller-runtime's zap production logger
 * writes them, or (`text`) the same entries readable in a terminal, as its development mode.
 */
export function createLogger(level = 'info', destination?: pino.DestinationStream, format: LogFormat = 'json'): Logger {
  const out = destination ?? pino.destination({ dest: 1, sync: false });
  return pino(
    {
      level,
      base: { logger: 'manager' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      messageKey: 'msg',
    },
    format === 'text' ? textStream(out) : out,
  );
}

/** A stream that writes each JSON entry it is given as a text line to `out`. */
function textStream(out: pino.DestinationStream): pino.DestinationStream {
  return {
    write: (line: string) => {
      out.write(textLine(line));
    },
    // pino flushes its destination on exit: pass it on.
    flush: (cb?: (err?: Error) => void) => {
      const flushable = out as { flush?: (cb?: (err?: Error) => void) => void };
      if (flushable.flush) flushable.flush(cb);
      else cb?.();
    },
  } as pino.DestinationStream;
}

/**
 * One JSON entry as a text line: `<time> <LEVEL> <logger/component> <msg>  key=value …`, values
 * that are not simple words quoted, an error as its message (its stack on the next lines).
 */
export function textLine(json: string): string {
  let entry: unknown;
  try {
    entry = JSON.parse(json);
  } catch {
    entry = undefined;
  }
  if (!isJsonObject(entry)) return json.endsWith('\n') ? json : `${json}\n`;
  const { time, level, logger, component, msg, err, ...fields } = entry;
  const who = typeof component === 'string' ? component : typeof logger === 'string' ? logger : '';
  const error = isJsonObject(err) ? err : {};
  const pairs = Object.entries(fields).map(([k, v]) => `${k}=${textValue(v)}`);
  if (typeof error.message === 'string' && error.message) pairs.push(`error=${textValue(error.message)}`);
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  const head = [text(time), text(level).toUpperCase().padEnd(5), who, text(msg)].filter((p) => p !== '').join(' ');
  const stack = typeof error.stack === 'string' && error.stack && level === 'error' ? `\n${error.stack}` : '';
  return `${head}${pairs.length ? `  ${pairs.join(' ')}` : ''}${stack}\n`;
}

function textValue(v: unknown): string {
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  return /^[\w./:@-]+$/.test(text) ? text : JSON.stringify(text);
}
