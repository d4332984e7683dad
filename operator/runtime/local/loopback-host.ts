import { isIPv4 } from 'node:net';

/** 127.0.0.0/8, ::1 (bracketed or not) and localhost: addresses that never leave the machine. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare === 'localhost' || bare === '::1' || (isIPv4(bare) && bare.startsWith('127.'));
}
