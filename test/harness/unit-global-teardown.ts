import { leaveRunTempDir } from './run-temp-dir';

/** The unit tier's end: its part of the run's temporary directory let go. */
export default function globalTeardown(): void {
  leaveRunTempDir();
}
