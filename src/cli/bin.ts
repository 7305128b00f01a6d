#!/usr/bin/env node
/** The `seclookup` executable (dist/cli.js): runs `main` with the process's own stdio, environment and folder. */
import { main } from './main.js';

// `seclookup keys list | head` closes stdout early: not worth a stack trace. For `serve`, a
// gone log reader must not stop the service either, so the remaining output is dropped.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

// stderr carries the operator's messages: when its terminal is gone (EIO after a hangup) or
// its file is on a full disk, they are lost, but the command goes on (serve drains and exits).
process.stderr.on('error', () => {});

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
