import pino, { type Logger } from 'pino';

export type { Logger };

/** JSON logs on stdout, one object per line, as controller-runtime's zap production logger. */
export function createLogger(level = 'info', destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { logger: 'manager' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      messageKey: 'msg',
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}
