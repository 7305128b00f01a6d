/**
 * Imported first by the executable (bin.ts), so that it runs before main and the command modules
 * load (serve's take most of a second, then it builds every engine): `seclookup serve` catches
 * its stop signals from its first moments (measured: from about 50 ms after Node itself has
 * started), and a SIGTERM while it starts stops it cleanly, exit 0, instead of killing it with no
 * word (exit 143). serve takes the same catcher over (catchStopSignals).
 */
import { catchStopSignals } from './shutdown.js';

if (process.argv[2] === 'serve') catchStopSignals();
