#!/usr/bin/env node
/** The `seclookup` executable (dist/cli.js): runs `main` with the process's own stdio, environment and folder. */
import { main } from './main.js';

// `seclookup keys list | head` closes stdout early: not worth a stack trace. For `serve`, a
// gone log reader must not stop the service either, so the remaining output is dropped.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
